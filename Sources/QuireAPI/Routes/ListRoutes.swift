import Logging
import QuireCore
import QuireHTTP

/// Producers' endpoints (API.md §2): every write is checked in the order token, media type, syntax,
/// existence, `If-Match`, content; a refused write changes nothing.
extension APIContext {
    /// The `limit` of a listing: 1 to 1,000, 100 when absent (API.md §2).
    static let listIndexLimits = 1...1_000
    static let listIndexDefaultLimit = 100

    /// `GET /v1/lists?limit=&after=&prefix=`: a page of the lists the caller may read, in name order (byte
    /// order), read from the store: every stored list, whether this instance holds it in memory or not.
    ///
    /// The caller's `read:` patterns, narrowed to `prefix`, are ranges of names that the store reads in order
    /// (``ListSelection``): a page costs one index seek per pattern and at most `limit + 1` lists read (the
    /// one past the page says whether another follows), however many lists the caller may not read. The cursor
    /// (``ListCursor``) is the name of the page's last list: the next page starts after it, so paging never
    /// skips or repeats a list that exists throughout.
    ///
    /// The parameters are checked here; the store is read off libmicrohttpd's threads (``StoreWrites``), as
    /// writes are, so that a store slow to answer holds up no other connection.
    func listIndex(_ request: Request, _ caller: Caller) throws(Problem) -> Reply {
        let limit = try RequestInput.integer(
            request, "limit", in: Self.listIndexLimits, default: Self.listIndexDefaultLimit)!
        let prefix = try RequestInput.listPrefix(request)
        let after = try Self.listCursor(request, prefix: prefix)?.after
        let selection = caller.readableLists.narrowed(toPrefix: prefix)
        return storeWrites.deferredRead { [self] in
            do throws(Problem) {
                return try listIndexPage(selection, prefix: prefix, after: after, limit: limit)
            } catch {
                return error.response
            }
        }
    }

    /// The `after` of a listing: `nil` when absent; else a cursor `GET /v1/lists` gave for `prefix` (`400
    /// invalid-cursor` otherwise).
    private static func listCursor(_ request: Request, prefix: String) throws(Problem) -> ListCursor? {
        guard let text = request.queryValue("after") else { return nil }
        guard let cursor = ListCursor(encoded: text, prefix: prefix), PlainName.isValid(cursor.after) else {
            throw Problem(
                .invalidCursor, detail: "The cursor is not one GET /v1/lists gave (as page.next) for this prefix.")
        }
        return cursor
    }

    /// The page of the list index, read from the store.
    ///
    /// The `ETag` is a hash of the body (``CachePolicy/entityTag(of:)``): a page depends on the caller's scopes,
    /// the store's lists and the cursor, and the body is the one value that says all of it; the store is read
    /// for a revalidation too, as it must be (another instance may have written), and only the bytes are saved.
    /// `Cache-Control` is set here: the router gives it to the answers it has at once, and this one comes later.
    private func listIndexPage(_ selection: ListSelection, prefix: String, after: String?, limit: Int)
        throws(Problem) -> Response
    {
        let summaries: [ListSummary]
        do {
            summaries = try registry.summaries(of: selection, after: after, limit: limit + 1)
        } catch {
            logger.error("listing the lists failed", metadata: ["error": "\(error)"])
            throw Problem.overloaded("The lists could not be read from the store. Retry shortly.", retryAfterSeconds: 1)
        }
        let page = summaries.prefix(limit)
        let next = summaries.count > limit ? page.last.map { ListCursor(after: $0.name, prefix: prefix).encoded } : nil
        let body = ResponseBodies.listIndex(page, next: next)
        var headers = JSONResponse.headers
        headers.add("ETag", CachePolicy.entityTag(of: body))
        headers.add("Cache-Control", configuration.cache.headerValue(for: .revalidated))
        return Response(status: 200, headers: headers, body: body)
    }

    /// `PUT /v1/lists/{list}`: replaces the whole content (`201` when it creates the list). The request read here;
    /// the write is made by ``made(_:)``.
    func putList(_ request: Request, _ parameters: RouteParameters) throws(Problem) -> ListRegistry.QueuedWrite {
        let name = try RequestInput.listName(parameters)
        let body = try RequestInput.json(request)!
        let ifMatch = try RequestInput.ifMatch(request)
        return ListRegistry.QueuedWrite(name, ifMatch: ifMatch, mustExist: false, write: .replace(body))
    }

    /// `POST /v1/lists/{list}/ops`: applies every op in order, or none. The request read here; the write is made by
    /// ``made(_:)``.
    func applyOps(_ request: Request, _ parameters: RouteParameters) throws(Problem) -> ListRegistry.QueuedWrite {
        let name = try RequestInput.listName(parameters)
        let body = try RequestInput.json(request)!
        let ifMatch = try RequestInput.ifMatch(request)
        // The batch's own checks (no member beside `ops`, an op or more) are the write's (ListWrite): the registry
        // makes them after the list's existence (404) and If-Match (412), in the order of checks (openapi.yaml).
        return ListRegistry.QueuedWrite(name, ifMatch: ifMatch, mustExist: true, write: .ops(body))
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

    /// The answer of `write`, made now on this thread.
    func writeNow(_ write: ListRegistry.QueuedWrite) -> Response {
        let outcome = Result { () throws(ListRegistry.WriteError) in
            try registry.write(write.name, ifMatch: write.ifMatch, mustExist: write.mustExist) { _ in write.write }
        }
        return writeResponse(outcome, list: write.name)
    }

    /// `DELETE /v1/lists/{list}`: `204`; its sessions end. The request read here; the delete is made by
    /// ``deleteNow(_:ifMatch:)``.
    func deleteList(_ request: Request, _ parameters: RouteParameters) throws(Problem) -> (
        name: String, ifMatch: ListRegistry.IfMatch?
    ) {
        (try RequestInput.listName(parameters), try RequestInput.ifMatch(request))
    }

    /// The answer of a delete of `name`, made now on this thread.
    func deleteNow(_ name: String, ifMatch: ListRegistry.IfMatch?) -> Response {
        do throws(ListRegistry.WriteError) {
            try registry.delete(name, ifMatch: ifMatch)
        } catch {
            return problem(for: error, list: name).response
        }
        return Response(status: 204)
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
