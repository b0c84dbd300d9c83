import FoundationEssentials
import Logging
import QuireAuth
import QuireCore
import QuireHTTP

/// Sessions (openapi.yaml): a per-client snapshot answered as changes against exactly what the client holds.
extension APIContext {
    /// `POST /v1/lists/{list}/sessions` with `{ limit, format, around, expanded, keep }`, all optional.
    func createSession(_ request: Request, _ parameters: RouteParameters, _ caller: Caller) throws(Problem) -> Reply {
        guard !isStopping else {
            throw Problem.overloaded("The service is shutting down: open the session again.", retryAfterSeconds: 1)
        }
        let name = try RequestInput.listName(parameters)
        let body = try RequestInput.json(request, required: false)
        let options = try SessionOptions(
            body, pages: configuration.pages, maxKeep: configuration.sessions.maxKeep,
            maxIDLength: registry.limits.maxIDLength)
        if let syncing = sourceSyncing(name) { throw syncing }
        // Pinned while the session is made, so that the list cannot leave memory before the session holds it.
        registry.pins.add(name)
        if let (version, _, generation) = registry.handledVersion(of: name) {
            defer { registry.pins.remove(name) }
            return .response(openSession(name, options, caller, list: version, generation: generation))
        }
        registry.pins.remove(name)
        guard registry.storeKeepsLists else { throw Self.listNotFound(name) }
        if registry.isOverBudget {
            registry.enforceBudget()  // sessions may have ended since the lists in use filled the budget
        }
        if registry.isOverBudget {
            throw Problem.overloaded(
                "The lists in use fill the memory budget (lists.memoryBytes): no session opens on a list not in memory until some sessions end. Retry shortly.",
                retryAfterSeconds: 5)
        }
        return try withLoadedList(name, pinned: true) { [self] _ in
            guard let (version, _, generation) = registry.handledVersion(of: name) else {
                return Self.listNotFound(name).response
            }
            return openSession(name, options, caller, list: version, generation: generation)
        }
    }

    /// A new session on `list`, the current version of `name` (of `generation`), or on its view through the
    /// options' filter; stored; its first answer.
    private func openSession(
        _ name: String, _ options: SessionOptions, _ caller: Caller, list: ListVersion, generation: UInt64
    ) -> Response {
        let sessionList = options.filter.map { ViewName.of(list: name, filter: $0) } ?? name
        let version = options.filter.map { views.version(of: name, filter: $0, parent: list) } ?? list
        // A first window at the list's head is the same for every session opened on that page of that
        // version: it is cut, and its bytes made and compressed, once (clients opening a feed all start
        // there). Cutting it each time would be a large share of a session's creation. A view's are cut each time.
        let first: FirstWindow
        if options.around == nil && options.expanded.isEmpty && options.filter == nil {
            first = sessionFirstWindows.value(for: FirstWindowKey(generation: generation, limit: options.limit)) {
                FirstWindow(
                    list: name, Session.initialWindow(of: version, limit: options.limit, around: nil, expanded: []),
                    of: version)
            }
        } else {
            let window = Session.initialWindow(
                of: version, limit: options.limit, around: options.around, expanded: options.expanded)
            first = FirstWindow(list: name, window, of: version)
        }
        let session = Session(
            id: SessionID.generate(instance: configuration.instance), list: sessionList, format: options.format,
            limit: options.limit, window: first.window, bound: WindowBound(keep: options.keep),
            subject: caller.subject)
        sessions.insert(session)
        var headers = JSONResponse.headers
        headers.add("Location", "/v1/sessions/\(session.id)")
        return Response(
            status: 201, headers: headers, parts: ResponseBodies.sessionPageParts(session, page: first.page))
    }

    /// `GET /v1/sessions/{id}/changes?since=|seq=&extend=&limit=&wait=`. A long poll ends when the
    /// caller's token does: with `401` (expired) if nothing changed before.
    func changes(_ request: Request, _ parameters: RouteParameters, _ caller: Caller) throws(Problem) -> Reply {
        let id = parameters["id"] ?? ""
        // The request clients repeat most, a poll that names its position and nothing else: answered from the
        // prepared "nothing new" answer when there is one, without looking for each of the other items, absent
        // here, one by one, which would cost more than the answer itself. Anything else takes the whole way below.
        if request.query.count == 1, let position = Self.onlyPosition(request.query),
            let unchanged = unchangedAnswer(session: id, at: position)
        {
            return .prepared(unchanged)
        }
        let since = try RequestInput.position(
            since: RequestInput.queryInteger(request, "since"), seq: RequestInput.queryInteger(request, "seq"))
        let limit = try RequestInput.integer(request, "limit", in: 1...configuration.pages.maxLimit, default: nil)
        let requested = min(
            try RequestInput.seconds(request, "wait", in: 0...3600, default: 0), configuration.longPolls.maxWaitSeconds)
        // The token is checked again when it expires: the wait ends then.
        let tokenLeft = caller.acceptedUntil.map { max(0, $0 - TokenVerifier.now()) } ?? .infinity
        let endsWithToken = tokenLeft < requested
        let wait = min(requested, tokenLeft)
        let change: SessionChange
        switch request.queryValue("extend") {
        case nil: change = .update
        case "next": change = .extendNext(limit ?? 0)
        case "prev": change = .extendPrevious(limit ?? 0)
        case let other?: throw Problem(.invalidRequest, detail: "extend must be next or prev, not \(other).")
        }
        if wait == 0, change == .update, let unchanged = unchangedAnswer(session: id, at: since) {
            return .prepared(unchanged)
        }
        let answer = try answer(session: id, since: since, change: change, defaultLimit: limit == nil)
        guard wait > 0, change == .update, answer.isEmpty, let list = answer.listName else {
            return reply(answer)
        }
        // Nothing to tell yet: wait, holding no thread, for the list to change or the time to pass.
        let seenVersion = answer.version
        let parked = answer.response
        let parkedSeq = answer.answer.seq
        let reply = try longPolls.wait(on: list, seconds: wait) { [self] wake in
            if endsWithToken && (wake == .timedOut || TokenVerifier.now() >= caller.acceptedUntil ?? 0) {
                return access.deny(.expired, "The token expired while the request waited.").response
            }
            // Another answer moved the session while this one waited (the client's extend or expand, a
            // stream event): answering from the window this poll named would undo it. The poll ends with
            // the empty answer it parked with; the client polls again from its newer seq (openapi.yaml).
            if let session = sessions.session(id), session.seq != parkedSeq { return parked }
            do throws(Problem) {
                return try self.answer(session: id, since: since, change: .update, defaultLimit: false).response
            } catch {
                return error.response
            }
        }
        if (try? currentVersion(of: list))??.version != seenVersion {
            longPolls.notify(list)  // it changed while the waiter was being parked
        }
        return reply
    }

    /// The position named by a query of one item, `since` or `seq` with a version as
    /// ``RequestInput/position(since:seq:)`` reads it; `nil` for any other item or value.
    private static func onlyPosition(_ query: RequestFields) -> SessionPosition? {
        if let since = query.withValue(of: "since", RequestInput.decimal), let since {
            return RequestInput.versions.contains(since) ? .version(UInt64(since)) : nil
        }
        if let seq = query.withValue(of: "seq", RequestInput.decimal), let seq {
            return RequestInput.versions.contains(seq) ? .seq(UInt64(seq)) : nil
        }
        return nil
    }

    /// The prepared "nothing new" answer for a client at `position`, when it holds the session's current window,
    /// that window is of the list's latest version, and the answer of that state was made before: what
    /// ``answer(session:since:change:defaultLimit:)`` would answer for an update (`Session.answer`'s first
    /// case), found without copying the session out of the store or computing anything. `nil` sends the request
    /// the whole way, which makes the answer (``reply(_:)``) for the next time.
    private func unchangedAnswer(session id: String, at position: SessionPosition) -> PreparedResponse? {
        // Not checked for a session id's shape, which would cost a walk of the id on every poll: keys are compared by
        // their bytes, so only an id the service made finds a session, and anything else goes the whole way, which
        // refuses it.
        let key = SessionKey(id)
        guard let (seq, version) = sessions.position(of: key) else {
            return nil
        }
        switch position {
        case .version(let since) where since == version, .seq(let since) where since == seq: break
        default: return nil
        }
        // The list still at the session's version: the answer was made of it, and the list has not moved since.
        guard
            let answer = unchangedAnswers.cachedValue(
                for: UnchangedAnswerKey(session: key, seq: seq, version: version)),
            answer.isCurrent
        else { return nil }
        return answer.response
    }

    /// The reply of an answer sent at once: a "nothing new" answer is prepared once per session state.
    private func reply(_ answer: SessionReply) -> Reply {
        guard let key = UnchangedAnswerKey(answer) else { return .response(answer.response) }
        let made = unchangedAnswers.value(for: key) {
            // Sent at once by ``unchangedAnswer(session:at:)`` only while the list is at the answer's version.
            let current = answer.listName.flatMap { registry.handledVersion(of: $0) }
            return ListResponse(
                PreparedResponse(answer.response),
                madeOf: current.flatMap { $0.version.version == key.version ? ($0.handle, $0.generation) : nil })
        }
        return .prepared(made.response)
    }

    /// `POST /v1/sessions/{id}/expand` and `/collapse` with `{ "since": v, "id": "…" }` (or `"seq": n`).
    func expand(_ request: Request, _ parameters: RouteParameters, expanding: Bool) throws(Problem) -> Reply {
        let body = try RequestInput.json(request)!
        guard body.objectValue != nil else { throw Problem(.invalidRequest, detail: "The body must be an object.") }
        try Self.rejectUnknownMembers(body, allowed: ["since", "seq", "id"])
        let since = try RequestInput.position(since: body["since"], seq: body["seq"])
        guard let item = body["id"]?.stringValue, !item.isEmpty, item.utf8.count <= registry.limits.maxIDLength else {
            throw Problem(.invalidRequest, detail: "id must be the id of an item.")
        }
        let change: SessionChange = expanding ? .expand(item) : .collapse(item)
        return .response(
            try answer(session: parameters["id"] ?? "", since: since, change: change, defaultLimit: false).response)
    }

    /// `POST /v1/sessions/{id}/reset` with `{ "limit": n }` (optional): a fresh first page.
    func resetSession(_ request: Request, _ parameters: RouteParameters) throws(Problem) -> Reply {
        let body = try RequestInput.json(request, required: false)
        if let body {
            guard body.objectValue != nil else { throw Problem(.invalidRequest, detail: "The body must be an object.") }
            try Self.rejectUnknownMembers(body, allowed: ["limit"])
        }
        let limit = try body?["limit"].map { value throws(Problem) in
            try Self.limit(value, max: configuration.pages.maxLimit)
        }
        let id = parameters["id"] ?? ""
        for _ in 0..<3 {
            let (session, latest) = try sessionAndList(id)
            // As at creation: a bounded window holds a whole page (openapi.yaml).
            if let limit, session.bound.keep > 0, limit > session.bound.keep {
                throw Problem(
                    .invalidRequest,
                    detail: "limit (\(limit)) must be at most the session's keep (\(session.bound.keep)).")
            }
            let answer = session.reset(latest: latest, limit: limit ?? session.limit)
            if sessions.update(answer.session, expectedRevision: session.revision) {
                return .response(SessionReply(answer).response)
            }
        }
        throw Problem.overloaded("The session is being changed by other requests; retry.", retryAfterSeconds: 1)
    }

    /// `DELETE /v1/sessions/{id}`.
    func deleteSession(_ request: Request, _ parameters: RouteParameters) throws(Problem) -> Reply {
        let id = parameters["id"] ?? ""
        guard sessions.remove(id) else { throw Self.sessionNotFound }
        streams.end(session: id, gone: true)
        return .response(Response(status: 204))
    }

    /// Answers `change` for the session, storing its new windows. A concurrent update of the same
    /// session is retried, since the answer is recomputed from the stored state. `since == nil` answers
    /// from the session's current window (an event stream's next event).
    func answer(session id: String, since: SessionPosition?, change: SessionChange, defaultLimit: Bool)
        throws(Problem) -> SessionReply
    {
        for _ in 0..<3 {
            let (session, latest) = try sessionAndList(id)
            let since = since ?? .seq(session.seq)
            var change = change
            if defaultLimit {
                switch change {
                case .extendNext: change = .extendNext(session.limit)
                case .extendPrevious: change = .extendPrevious(session.limit)
                default: break
                }
            }
            let answer: SessionAnswer
            do throws(SessionError) {
                answer = try session.answer(
                    at: since, latest: latest, change: change, resetShare: configuration.sessions.resetShare,
                    cache: sharedAnswers)
            } catch {
                guard case .sinceMismatch(let current, let seq) = error else { throw Self.sessionNotFound }
                throw Self.sinceMismatch(since, version: current, seq: seq)
            }
            if answer.session.revision == session.revision
                || sessions.update(answer.session, expectedRevision: session.revision)
            {
                return SessionReply(answer)
            }
        }
        throw Problem.overloaded("The session is being changed by other requests; retry.", retryAfterSeconds: 1)
    }

    /// `409 since-mismatch` with the session's `version` and `seq`.
    static func sinceMismatch(_ position: SessionPosition, version: UInt64, seq: UInt64) -> Problem {
        Problem(
            .sinceMismatch,
            detail:
                "\(position) names neither this session's window (version \(version), seq \(seq)) nor the one before; reset the session.",
            extensions: [.init("version", .int(Int(version))), .init("seq", .int(Int(seq)))])
    }

    func sessionAndList(_ id: String) throws(Problem) -> (Session, ListVersion) {
        guard let key = SessionKey(validating: id), let session = sessions.session(key) else {
            throw Self.sessionNotFound
        }
        guard let latest = try currentVersion(of: session.list) else { throw Self.sessionNotFound }
        return (session, latest)
    }

    /// The current version of what a session is on: a list, or a view of one (``ViewName``); `nil` when the list
    /// does not exist. A session pins its list in memory; the list is not held only when it was deleted (its
    /// sessions end) or reloaded by replication meanwhile: then it is read from the store, rarely, on this thread.
    func currentVersion(of name: String) throws(Problem) -> ListVersion? {
        let view = ViewName.split(name)
        let list = view?.list ?? name
        var parent = registry.version(of: list)
        if parent == nil {
            do {
                parent = try registry.loadedVersion(of: list)
            } catch {
                logger.error("loading a list failed", metadata: ["list": "\(list)", "error": "\(error)"])
                throw Problem.overloaded(
                    "The list could not be read from the store. Retry shortly.", retryAfterSeconds: 1)
            }
        }
        guard let parent, let view else { return parent }
        return views.version(of: list, canonical: view.filter, parent: parent)
    }

    static let sessionNotFound = Problem(
        .sessionNotFound, detail: "No such session: it expired, was evicted or deleted, or its list was deleted.")

    /// Refuses a body with a member not in `allowed` (the first in byte order is named). A handful of names,
    /// scanned: a set literal was hashed and built on every call.
    static func rejectUnknownMembers(_ body: JSONValue, allowed: [String]) throws(Problem) {
        guard let object = body.objectValue, !object.keys.allSatisfy(allowed.contains) else { return }
        for key in object.keys.sorted() where !allowed.contains(key) {
            throw Problem(.invalidRequest, detail: "Unknown member \(key).")
        }
    }

    static func limit(_ value: JSONValue, max: Int) throws(Problem) -> Int {
        guard let number = value.intValue, number >= 1, number <= Int64(max) else {
            throw Problem(.invalidRequest, detail: "limit must be an integer from 1 to \(max).")
        }
        return Int(number)
    }
}

/// A session answer ready to send.
struct SessionReply {
    let answer: SessionAnswer

    init(_ answer: SessionAnswer) {
        self.answer = answer
    }

    var isEmpty: Bool { answer.isEmpty }
    var version: UInt64 { answer.window.version.version }
    var listName: String? { answer.session.list }

    var response: Response {
        Response(status: 200, headers: JSONResponse.privateHeaders, parts: ResponseBodies.answerParts(answer))
    }
}

/// The options of a new session.
struct SessionOptions {
    var limit: Int
    var format = ChangeFormat.batch
    var around: String?
    var expanded: Set<String> = []
    /// Items the client holds at most (openapi.yaml); 0: no bound. Capped by `sessions.maxKeep`.
    var keep = 0
    /// Only the top-level items that match (openapi.yaml).
    var filter: ListFilter?

    init(_ body: JSONValue?, pages: QuireService.PageSettings, maxKeep: Int, maxIDLength: Int) throws(Problem) {
        limit = pages.defaultLimit
        keep = maxKeep
        guard let body else { return }
        guard body.objectValue != nil else { throw Problem(.invalidRequest, detail: "The body must be an object.") }
        try APIContext.rejectUnknownMembers(body, allowed: ["limit", "format", "around", "expanded", "keep", "filter"])
        if let value = body["filter"] {
            do throws(FilterError) {
                filter = try ListFilter(json: value)
            } catch {
                throw Problem(.invalidFilter, detail: "filter: \(error)")
            }
        }
        if let value = body["limit"] { limit = try APIContext.limit(value, max: pages.maxLimit) }
        if let value = body["keep"] {
            guard let number = value.intValue, number >= 0, number <= Int64(Int32.max) else {
                throw Problem(.invalidRequest, detail: "keep must be an integer from 0 (no bound) up.")
            }
            let asked = Int(number)
            keep = maxKeep > 0 ? (asked == 0 ? maxKeep : min(asked, maxKeep)) : asked
        }
        if keep > 0 && keep < limit {
            throw Problem(
                .invalidRequest, detail: "keep (\(keep)) must be 0 or at least limit (\(limit)): a window holds a page."
            )
        }
        if let value = body["format"] {
            guard let name = value.stringValue, let format = ChangeFormat(rawValue: name) else {
                throw Problem(.invalidRequest, detail: "format must be batch or sequential.")
            }
            self.format = format
        }
        if let value = body["around"] {
            guard let id = value.stringValue, !id.isEmpty, id.utf8.count <= maxIDLength else {
                throw Problem(.invalidRequest, detail: "around must be an item id.")
            }
            around = id
        }
        if let value = body["expanded"] {
            guard let ids = value.arrayValue?.compactMap(\.stringValue), ids.count == value.arrayValue?.count,
                ids.allSatisfy({ !$0.isEmpty && $0.utf8.count <= maxIDLength })
            else { throw Problem(.invalidRequest, detail: "expanded must be an array of item ids.") }
            expanded = Set(ids)
        }
    }
}
