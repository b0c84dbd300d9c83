import QuireAPI
import QuireHTTP
import Testing

@Suite("Problem documents")
struct ProblemTests {
    @Test("every problem type of openapi.yaml exists with its status")
    func catalogue() {
        let expected: [String: Int] = [
            "invalid-json": 400, "invalid-request": 400, "invalid-cursor": 400, "invalid-filter": 400,
            "unauthorized": 401,
            "forbidden": 403,
            "not-found": 404, "list-not-found": 404, "session-not-found": 404, "method-not-allowed": 405,
            "since-mismatch": 409, "list-from-source": 409, "version-mismatch": 412, "payload-too-large": 413,
            "unsupported-media-type": 415, "invalid-list": 422, "invalid-op": 422, "rate-limited": 429,
            "overloaded": 503, "source-syncing": 503,
            "internal": 500, "not-implemented": 501,
        ]
        let actual = Dictionary(uniqueKeysWithValues: Problem.Kind.all.map { ($0.slug, $0.status) })
        #expect(actual == expected)
    }

    @Test("strings are escaped, extensions and headers travel along")
    func rendering() throws {
        let problem = Problem(
            .invalidList, detail: "bad \"id\"\n\u{1}\\",
            extensions: [.init("path", .string("sections[2].items[17].id"))],
            headers: ["X-Extra": "1"])
        let response = problem.response
        #expect(response.status == 422)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(response.headers["X-Extra"] == "1")
        let document = try ProblemDocument(response.body)
        #expect(document.detail == "bad \"id\"\n\u{1}\\")
        #expect(document.members["path"] as? String == "sections[2].items[17].id")
        #expect(document.title == "Invalid list")
    }

    @Test("overloaded carries Retry-After; 405 carries Allow")
    func headers() {
        #expect(Problem.overloaded("busy", retryAfterSeconds: 3).response.headers["Retry-After"] == "3")
        #expect(Problem.methodNotAllowed("PUT", allowed: ["GET", "HEAD"]).headers["Allow"] == "GET, HEAD")
    }
}
