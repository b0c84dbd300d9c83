import QuireAPI
import QuireHTTP
import QuireTesting
import Testing

@Suite("Router")
struct RouterTests {
    static func router() -> RouterResponder {
        var router = Router()
        router.on("GET", "/v1/lists") { _, _ in .response(Response(status: 200, text: "lists")) }
        router.on("GET", "/v1/lists/{list}") { _, parameters in
            .response(Response(status: 200, text: "list \(parameters["list"] ?? "?")"))
        }
        router.on("PUT", "/v1/lists/{list}") { _, parameters in
            .response(Response(status: 201, text: "put \(parameters["list"] ?? "?")"))
        }
        router.on("POST", "/v1/lists/{list}/ops") { _, parameters in
            .response(Response(status: 200, text: "ops \(parameters["list"] ?? "?")"))
        }
        router.on("GET", "/v1/lists/special") { _, _ in .response(Response(status: 200, text: "literal")) }
        router.on("GET", "/v1/sessions/{id}/changes") { _, parameters in
            .response(Response(status: 200, text: "changes \(parameters["id"] ?? "?")"))
        }
        router.on("GET", "/boom") { _, _ in throw CancellationError() }
        router.on("GET", "/conflict") { _, _ in
            throw Problem(.versionMismatch, detail: "stale", extensions: [.init("version", .int(7))])
        }
        return router.buildResponder(logger: TestServer.logger)
    }

    static func answer(_ method: String, _ path: String) -> Response {
        switch router().respond(to: Request(method: method, path: path)) {
        case .response(let response): return response
        case .prepared(let prepared), .preparedWithFields(let prepared, _): return prepared.response
        case .deferred, .stream: Issue.record("unexpected deferred reply"); return Response(status: 0)
        }
    }

    @Test(
        "path parameters",
        arguments: [
            ("GET", "/v1/lists/inbox", "list inbox"),
            ("PUT", "/v1/lists/a.b-c_d", "put a.b-c_d"),
            ("POST", "/v1/lists/inbox/ops", "ops inbox"),
            ("GET", "/v1/sessions/abc123/changes", "changes abc123"),
            ("GET", "/v1/lists", "lists"),
        ])
    func parameters(method: String, path: String, expected: String) {
        #expect(String(decoding: Self.answer(method, path).body, as: UTF8.self) == expected)
    }

    @Test("a literal segment wins over a parameter")
    func literalFirst() {
        #expect(String(decoding: Self.answer("GET", "/v1/lists/special").body, as: UTF8.self) == "literal")
    }

    @Test(
        "unknown paths are 404 not-found problems",
        arguments: [
            "/", "/v1", "/v1/lists/inbox/nope", "/v1/lists//ops", "/v1/lists/", "/v2/lists", "/v1/sessions/x",
        ])
    func notFound(path: String) throws {
        let response = Self.answer("GET", path)
        #expect(response.status == 404)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        let document = try ProblemDocument(response.body)
        #expect(document.type == "https://quire.dev/problems/not-found")
        #expect(document.status == 404)
    }

    @Test("a known path with another method is 405 with Allow")
    func methodNotAllowed() throws {
        let response = Self.answer("DELETE", "/v1/lists/inbox")
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET, HEAD, PUT")
        #expect(try ProblemDocument(response.body).type == "https://quire.dev/problems/method-not-allowed")
        #expect(Self.answer("GET", "/v1/lists/inbox/ops").headers["Allow"] == "POST")
    }

    @Test("HEAD is answered by the GET route")
    func head() {
        #expect(Self.answer("HEAD", "/v1/lists/x").status == 200)
    }

    @Test("a thrown Problem becomes its document, with extensions")
    func thrownProblem() throws {
        let response = Self.answer("GET", "/conflict")
        #expect(response.status == 412)
        let document = try ProblemDocument(response.body)
        #expect(document.type == "https://quire.dev/problems/version-mismatch")
        #expect(document.members["version"] as? Int == 7)
        #expect(document.detail == "stale")
    }

    @Test("any other error is a 500 internal problem with a request id")
    func internalError() throws {
        let response = Self.answer("GET", "/boom")
        #expect(response.status == 500)
        let document = try ProblemDocument(response.body)
        #expect(document.type == "https://quire.dev/problems/internal")
        let requestID = try #require(document.members["requestId"] as? String)
        #expect(requestID.count == 16)
        #expect(document.detail.contains(requestID))
    }
}
