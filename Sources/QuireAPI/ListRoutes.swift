import Logging
import QuireCore
import QuireHTTP

/// Producers' endpoints (API.md §2): every write is checked in the order token, media type, syntax,
/// existence, `If-Match`, content; a refused write changes nothing.
extension APIContext {
    /// `GET /v1/lists`: the lists the caller may read.
    func listIndex(_ caller: Caller) throws(Problem) -> Reply {
        let summaries = registry.summaries().filter { caller.mayRead($0.name) }
        let body = ResponseBodies.listIndex(summaries)
        var headers = JSONResponse.headers
        headers.add("ETag", CachePolicy.entityTag(of: body))
        return .response(Response(status: 200, headers: headers, body: body))
    }

    /// `PUT /v1/lists/{list}`: replaces the whole content (`201` when it creates the list).
    func putList(_ request: Request, _ parameters: RouteParameters) throws(Problem) -> Reply {
        let name = try RequestInput.listName(parameters)
        let body = try RequestInput.json(request)!
        let ifMatch = try RequestInput.ifMatch(request)
        let commit = try commitWrite(name, ifMatch: ifMatch, mustExist: false, .replace(body))
        return writeAnswer(name, commit.version.version, status: commit.created ? 201 : 200)
    }

    /// `POST /v1/lists/{list}/ops`: applies every op in order, or none.
    func applyOps(_ request: Request, _ parameters: RouteParameters) throws(Problem) -> Reply {
        let name = try RequestInput.listName(parameters)
        let body = try RequestInput.json(request)!
        let ifMatch = try RequestInput.ifMatch(request)
        var invalid: Problem?
        if let unknown = body.objectValue?.keys.filter({ $0 != "ops" }).min() {
            invalid = Problem(
                .invalidOp, detail: "\(unknown): unknown member.", extensions: [.init("path", .string(unknown))])
        } else if let ops = body["ops"]?.arrayValue, ops.isEmpty {
            invalid = Problem(
                .invalidOp, detail: "ops: expected at least one op.", extensions: [.init("path", .string("ops"))])
        }
        if let invalid {
            // The order of checks (openapi.yaml): a missing list (404) and a failed If-Match (412) come before
            // the content (422).
            guard let current = registry.versionNumber(of: name) else {
                throw problem(for: .listNotFound, list: name)
            }
            if let tags = versions(ifMatch, of: name), !tags.contains(current) {
                throw problem(for: .versionMismatch(current: current), list: name)
            }
            throw invalid
        }
        let commit = try commitWrite(name, ifMatch: ifMatch, mustExist: true, .ops(body))
        return writeAnswer(name, commit.version.version, status: 200)
    }

    /// `DELETE /v1/lists/{list}`: `204`; its sessions end.
    func deleteList(_ request: Request, _ parameters: RouteParameters) throws(Problem) -> Reply {
        let name = try RequestInput.listName(parameters)
        let ifMatch = try RequestInput.ifMatch(request)
        do throws(ListRegistry.WriteError) {
            try registry.delete(name, ifMatch: versions(ifMatch, of: name))
        } catch {
            throw problem(for: error, list: name)
        }
        return .response(Response(status: 204))
    }

    private func commitWrite(
        _ name: String, ifMatch: RequestInput.IfMatch?, mustExist: Bool, _ write: ListWrite
    ) throws(Problem) -> ListRegistry.Commit {
        do throws(ListRegistry.WriteError) {
            return try registry.write(name, ifMatch: versions(ifMatch, of: name), mustExist: mustExist) { _ in write }
        } catch {
            throw problem(for: error, list: name)
        }
    }

    /// `If-Match` as the set of versions a write may replace (`*`: the current one, if any).
    private func versions(_ ifMatch: RequestInput.IfMatch?, of name: String) -> Set<UInt64>? {
        switch ifMatch {
        case nil: nil
        case .versions(let versions): versions
        case .any: registry.version(of: name).map { [$0.version] } ?? [UInt64.max]
        }
    }

    private func writeAnswer(_ name: String, _ version: UInt64, status: Int) -> Reply {
        var headers = JSONResponse.headers
        headers.add("ETag", "\"\(version)\"")
        return .response(
            Response(status: status, headers: headers, body: ResponseBodies.writeResult(list: name, version: version)))
    }

    private func problem(for error: ListRegistry.WriteError, list: String) -> Problem {
        switch error {
        case .listNotFound:
            return Problem(.listNotFound, detail: "No list named \(list).")
        case .versionMismatch(let current):
            var headers = HTTPHeaders()
            if current > 0 { headers.add("ETag", "\"\(current)\"") }
            return Problem(
                .versionMismatch, detail: "If-Match does not name the current version, \(current).",
                extensions: [.init("version", .int(Int(current)))], headers: headers)
        case .invalidList(let error):
            return Problem(.invalidList, detail: error.description, extensions: [.init("path", .string(error.path))])
        case .invalidOp(let error):
            if error.path == "ops" {
                return Problem(.invalidOp, detail: error.error.description, extensions: [.init("path", .string("ops"))])
            }
            return Problem(
                .invalidOp, detail: error.description,
                extensions: [.init("opIndex", .int(error.opIndex)), .init("path", .string(error.path))])
        case .storage(let reason):
            logger.error("store write failed", metadata: ["list": "\(list)", "error": "\(reason)"])
            return Problem.overloaded(
                "The list could not be stored; nothing was changed. Retry shortly.", retryAfterSeconds: 1)
        }
    }
}
