import Logging
import QuireCore
import QuireHTTP

/// Producers' endpoints (openapi.yaml): every write is checked in the order token, media type, syntax,
/// existence, `If-Match`, content; a refused write changes nothing.
extension APIContext {
    /// The `limit` of a listing: 1 to 1,000, 100 when absent (openapi.yaml).
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
    /// The parameters are checked here; the store is read off libmicrohttpd's threads (``StoreReads``), as
    /// writes are, so that a store slow to answer holds up no other connection.
    func listIndex(_ request: Request, _ caller: Caller) throws(Problem) -> Reply {
        let limit = try RequestInput.integer(
            request, "limit", in: Self.listIndexLimits, default: Self.listIndexDefaultLimit)!
        let prefix = try RequestInput.listPrefix(request)
        let after = try Self.listCursor(request, prefix: prefix)?.after
        let selection = caller.readableLists.narrowed(toPrefix: prefix)
        return reads.deferredRead { [self] in
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
        var summaries: [ListSummary] = []
        do {
            // A source's list without rows is left out (API.md §2b: the index shows those with rows), and the page
            // read on past it so that it still holds `limit` lists when there are more.
            var cursor = after
            while summaries.count <= limit {
                let read = try registry.summaries(of: selection, after: cursor, limit: limit + 1)
                summaries += read.filter { $0.items > 0 || writes.follower(of: $0.name) == nil }
                guard read.count > limit, let last = read.last else { break }
                cursor = last.name
            }
            if summaries.count > limit + 1 { summaries.removeLast(summaries.count - limit - 1) }
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
    /// the write is made where the entry point of writes places it (``ListWrites/reply(to:)``).
    func putList(_ request: Request, _ parameters: RouteParameters) throws(Problem) -> Reply {
        let name = try RequestInput.listName(parameters)
        let body = try RequestInput.json(request)!
        let ifMatch = try RequestInput.ifMatch(request)
        return writes.reply(
            to: ListRegistry.QueuedWrite(name, ifMatch: ifMatch, mustExist: false, write: .replace(body)))
    }

    /// `POST /v1/lists/{list}/ops`: applies every op in order, or none. The request read here; the write is made by
    /// the entry point of writes (``ListWrites/reply(to:)``).
    func applyOps(_ request: Request, _ parameters: RouteParameters) throws(Problem) -> Reply {
        let name = try RequestInput.listName(parameters)
        let body = try RequestInput.json(request)!
        let ifMatch = try RequestInput.ifMatch(request)
        // The batch's own checks (no member beside `ops`, an op or more) are the write's (ListWrite): the registry
        // makes them after the list's existence (404) and If-Match (412), in the order of checks (openapi.yaml).
        return writes.reply(to: ListRegistry.QueuedWrite(name, ifMatch: ifMatch, mustExist: true, write: .ops(body)))
    }

    /// `DELETE /v1/lists/{list}`: `204`; its sessions end. The request read here; the delete is made by
    /// the entry point of writes (``ListWrites/replyToDelete(of:ifMatch:)``).
    func deleteList(_ request: Request, _ parameters: RouteParameters) throws(Problem) -> Reply {
        let name = try RequestInput.listName(parameters)
        let ifMatch = try RequestInput.ifMatch(request)
        return writes.replyToDelete(of: name, ifMatch: ifMatch)
    }
}
