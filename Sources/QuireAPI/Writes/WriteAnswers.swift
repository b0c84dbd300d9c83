import Logging
import QuireCore
import QuireHTTP

/// A write made, and its outcome as a response: its version (`201` when it created the list), or the problem that
/// refused it (openapi.yaml's order of checks: existence, `If-Match`, content).
extension ListWrites {
    /// The outcome of `write`, made now on this thread.
    func commitNow(_ write: ListRegistry.QueuedWrite) -> Result<ListRegistry.Commit, ListRegistry.WriteError> {
        Result { () throws(ListRegistry.WriteError) in
            try registry.write(write.name, ifMatch: write.ifMatch, mustExist: write.mustExist) { _ in write.write }
        }
    }

    /// The answer of `write`, made now on this thread.
    func writeNow(_ write: ListRegistry.QueuedWrite) -> Response {
        writeResponse(commitNow(write), list: write.name)
    }

    /// The answer of a write made: its version (`201` when it created the list), or the problem that refused it.
    func writeResponse(_ outcome: Result<ListRegistry.Commit, ListRegistry.WriteError>, list: String) -> Response {
        switch outcome {
        case .success(let commit):
            var headers = JSONResponse.headers
            headers.add("ETag", "\"\(commit.version.version)\"")
            return Response(
                status: commit.created ? 201 : 200, headers: headers,
                body: ResponseBodies.writeResult(list: list, version: commit.version.version))
        case .failure(let error):
            return problem(for: error, list: list).response
        }
    }

    /// The answer of a delete of `name`, made now on this thread: `204`; its sessions end.
    func deleteNow(_ name: String, ifMatch: ListRegistry.IfMatch?) -> Response {
        do throws(ListRegistry.WriteError) {
            try registry.delete(name, ifMatch: ifMatch)
        } catch {
            return problem(for: error, list: name).response
        }
        return Response(status: 204)
    }

    /// The problem document of a write of `list` refused for `error`.
    func problem(for error: ListRegistry.WriteError, list: String) -> Problem {
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
            guard let opIndex = error.opIndex else {
                return Problem(.invalidOp, detail: error.description, extensions: [.init("path", .string(error.path))])
            }
            return Problem(
                .invalidOp, detail: error.description,
                extensions: [.init("opIndex", .int(opIndex)), .init("path", .string(error.path))])
        case .storage(let reason):
            logger.error("store write failed", metadata: ["list": "\(list)", "error": "\(reason)"])
            return Problem.overloaded(
                "The list could not be stored; nothing was changed. Retry shortly.", retryAfterSeconds: 1,
                written: .no)
        case .storageOutcomeUnknown(let reason):
            logger.error("store write outcome unknown", metadata: ["list": "\(list)", "error": "\(reason)"])
            return Problem.overloaded(
                "The database stopped answering while the write was being committed: it may or may not have been made. Read the list's version before writing again.",
                retryAfterSeconds: 1, written: .unknown)
        }
    }
}
