import Logging
import QuireCore
import QuireHTTP

/// Stateless pages (openapi.yaml): `GET /v1/lists/{list}?limit=&after=|before=`, from the page cache; with
/// `filter=`, pages of the list's view through the filter (§4d).
extension APIContext {
    func page(_ request: Request, _ parameters: RouteParameters) throws(Problem) -> Reply {
        let pages = configuration.pages
        let after = request.queryValue("after")
        let before = request.queryValue("before")
        let filterText = request.queryValue("filter")
        // A page the cache holds, of the list's current version, answers at once: it was made for these very
        // inputs (the name, the limit, the cursor as sent), which were checked then. Checking them again (the
        // name's characters; a cursor's decoding) would be a large share of a cached page's cost, more with a
        // cursor. Anything else takes the whole way below, in the order its errors are reported. A source's list
        // whose table is being copied again is not whole: its cached pages do not answer (`503 source-syncing`).
        if filterText == nil, writes.sources.isEmpty || sourceSyncing(parameters["list"] ?? "") == nil,
            let limit = try? RequestInput.integer(
                request, "limit", in: 1...pages.maxLimit, default: pages.defaultLimit),
            let page = pageCache.currentValue(
                for: PageQuery(list: parameters["list"] ?? "", limit: limit, after: after, before: before),
                ifCurrent: \.isCurrent)
        {
            return .prepared(page.response)
        }
        let name = try RequestInput.listName(parameters)
        let limit = try RequestInput.integer(request, "limit", in: 1...pages.maxLimit, default: pages.defaultLimit)!
        if after != nil && before != nil {
            throw Problem(.invalidRequest, detail: "Give after or before, not both.")
        }
        var filter: ListFilter?
        if let filterText {
            do throws(FilterError) {
                filter = try ListFilter(text: filterText)
            } catch {
                throw Problem(.invalidFilter, detail: "filter: \(error)")
            }
        }
        // A view's cursors are issued for the view: one of the whole list does not page through it, nor back.
        let cursorOwner = filter.map { ViewName.of(list: name, filter: $0) } ?? name
        var cursor: PageCursor?
        if let text = after ?? before {
            guard let decoded = PageCursor(encoded: text),
                decoded.direction == (after != nil ? .after : .before)
            else {
                throw Problem(
                    .invalidCursor,
                    detail: "The \(after != nil ? "after" : "before") cursor is not one this service made.")
            }
            guard decoded.isIssued(for: cursorOwner) else {
                throw Problem(
                    .invalidCursor,
                    detail: filter == nil
                        ? "The cursor was made for another list than \(name)."
                        : "The cursor was made for another list or filter than this one.")
            }
            cursor = decoded
        }
        if let filter {
            return try filteredPage(name, filter: filter, limit: limit, cursor: cursor)
        }
        // If-None-Match is evaluated by the server against the representation it sends (plain or
        // compressed, each with its own tag). A cached page costs one lookup; the version is read only to make
        // a page the cache does not hold, or holds of an older version.
        let query = PageQuery(list: name, limit: limit, after: after, before: before)
        if let syncing = sourceSyncing(name) { throw syncing }
        if let page = cachedPage(query, cursor: cursor) { return .prepared(page.response) }
        let decoded = cursor
        return try withLoadedList(name) { [self] version in
            // Left memory again at once (a budget smaller than the lists in use): answered from the loaded version.
            let page =
                cachedPage(query, cursor: decoded)?.response
                ?? Self.pageResponse(
                    list: name, window: decoded?.page(in: version, limit: limit) ?? version.firstPage(limit: limit),
                    limit: limit, cacheControl: configuration.cache.headerValue(for: .revalidated))
            return page.response
        }
    }

    /// The page of `query` from the cache, or made of the list's current version and cached; `nil` when the list is
    /// not held in memory.
    private func cachedPage(_ query: PageQuery, cursor: PageCursor?) -> ListResponse? {
        pageCache.value(for: query, ifCurrent: \.isCurrent) { () -> ListResponse? in
            guard let (version, list, generation) = registry.handledVersion(of: query.list) else { return nil }
            let window = cursor?.page(in: version, limit: query.limit) ?? version.firstPage(limit: query.limit)
            let response = Self.pageResponse(
                list: query.list, window: window, limit: query.limit,
                cacheControl: configuration.cache.headerValue(for: .revalidated))
            return ListResponse(response, madeOf: (list, generation))
        }
    }

    /// A page of the view of `name` through `filter`: never cached (a view's page is cut from the view's version,
    /// O(`limit` log *n*)); the list loaded off libmicrohttpd's threads when it is not held.
    private func filteredPage(_ name: String, filter: ListFilter, limit: Int, cursor: PageCursor?) throws(Problem)
        -> Reply
    {
        let cacheControl = configuration.cache.headerValue(for: .revalidated)
        let make: @Sendable (ListVersion) -> Response = { [self] parent in
            let view = views.version(of: name, filter: filter, parent: parent)
            let window = cursor?.page(in: view, limit: limit) ?? view.firstPage(limit: limit)
            return Self.pageResponse(
                list: name, window: window, limit: limit, cacheControl: cacheControl, filter: filter.canonicalText
            ).response
        }
        if let parent = registry.handledVersion(of: name)?.version { return .response(make(parent)) }
        return try withLoadedList(name, make)
    }

    /// The page as a prepared response, with `ETag`, `Link` and `Cache-Control`; of the view through the filter
    /// whose canonical text is `filter`, when given (its cursors are the view's, its links carry the filter).
    static func pageResponse(
        list: String, window: Window, limit: Int, cacheControl: String, filter: String? = nil
    ) -> PreparedResponse {
        let owner = filter.map { ViewName.of(list: list, canonical: $0) } ?? list
        let previous = window.hasPrev ? PageCursor.previous(before: window, list: owner)?.encoded : nil
        let next = window.hasNext ? PageCursor.next(after: window, list: owner)?.encoded : nil
        var headers = JSONResponse.headers
        headers.add("ETag", "\"\(window.version)\"")
        headers.add("Cache-Control", cacheControl)
        let filterQuery = filter.map { "&filter=\(Self.percentEncoded($0))" } ?? ""
        var links: [String] = []
        if let next { links.append("</v1/lists/\(list)?limit=\(limit)\(filterQuery)&after=\(next)>; rel=\"next\"") }
        if let previous {
            links.append("</v1/lists/\(list)?limit=\(limit)\(filterQuery)&before=\(previous)>; rel=\"prev\"")
        }
        if !links.isEmpty { headers.add("Link", links.joined(separator: ", ")) }
        let body = ResponseBodies.page(list: list, window: window, previous: previous, next: next)
        return PreparedResponse(Response(status: 200, headers: headers, body: body))
    }
}
