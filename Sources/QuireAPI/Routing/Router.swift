import Glibc
public import Logging
public import QuireHTTP
import Synchronization

/// The path parameters a route matched, by name (`{list}` → `parameters["list"]`).
///
/// Routes have one or two parameters: those are kept inline, so that matching allocates nothing.
public struct RouteParameters: Sendable, Equatable {
    private var first: (name: String, value: String)?
    private var second: (name: String, value: String)?
    private var more: [(name: String, value: String)] = []

    public init() {}

    public subscript(name: String) -> String? {
        if let first, first.name == name { return first.value }
        if let second, second.name == name { return second.value }
        return more.first { $0.name == name }?.value
    }

    mutating func append(_ name: String, _ value: String) {
        if first == nil {
            first = (name, value)
        } else if second == nil {
            second = (name, value)
        } else {
            more.append((name, value))
        }
    }

    /// Takes back the last `append` (a branch of the route tree that did not match).
    mutating func removeLast() {
        if !more.isEmpty {
            more.removeLast()
        } else if second != nil {
            second = nil
        } else {
            first = nil
        }
    }

    private var all: [(name: String, value: String)] {
        [first, second].compactMap { $0 } + more
    }

    public static func == (lhs: RouteParameters, rhs: RouteParameters) -> Bool {
        lhs.all.elementsEqual(rhs.all) { $0.name == $1.name && $0.value == $1.value }
    }
}

/// A route's handler: answers now or defers; throws a ``Problem`` (or any error, which becomes `500`).
public typealias RouteHandler = @Sendable (Request, RouteParameters) throws -> Reply

/// The handler of a product route, called once ``AccessControl`` admitted its caller.
typealias GuardedRouteHandler = @Sendable (Request, RouteParameters, Caller) throws -> Reply

/// A route's handler as the tree keeps it: open, or behind an access check.
enum RouteEntry: Sendable {
    case open(RouteHandler)
    case guarded(RouteAccess, GuardedRouteHandler)
}

/// Collects routes, then builds an immutable responder (see ``buildResponder(logger:)``).
///
/// Patterns are paths whose segments are literals or `{name}` parameters: `/v1/lists/{list}/ops`.
/// A literal segment wins over a parameter at the same place.
public struct Router {
    private var routes: [(method: String, pattern: String, handler: RouteEntry)] = []

    public init() {}

    /// Adds a route. `HEAD` is answered by the `GET` route of the same path unless one is added for it.
    public mutating func on(_ method: String, _ pattern: String, _ handler: @escaping RouteHandler) {
        routes.append((method, pattern, .open(handler)))
    }

    /// Adds a route whose caller the responder's ``AccessControl`` admits first, for `access`.
    mutating func on(
        _ method: String, _ pattern: String, access: RouteAccess, _ handler: @escaping GuardedRouteHandler
    ) {
        routes.append((method, pattern, .guarded(access, handler)))
    }

    /// The routes as `(method, pattern)`, in the order they were added.
    public var routeList: [(method: String, pattern: String)] {
        routes.map { ($0.method, $0.pattern) }
    }

    /// Validates the routes and freezes them into a responder that any thread may call.
    ///
    /// - Precondition: no two routes share a method and a pattern, and every pattern starts with `/`.
    public func buildResponder(
        logger: Logger, observer: (any RequestObserver)? = nil, cachePolicy: CachePolicy = CachePolicy()
    ) -> RouterResponder {
        buildResponder(logger: logger, observer: observer, access: nil, cachePolicy: cachePolicy)
    }

    /// - Parameters:
    ///   - limiter: the clients' buckets, drawn on by every guarded route once its caller is admitted; `nil` when
    ///     rate limits are off.
    ///   - crossOrigin: the CORS fields of every answer and the preflights' answers; `nil` when no origin is allowed.
    /// - Precondition: as above, and `access` is given when a route needs it.
    func buildResponder(
        logger: Logger, observer: (any RequestObserver)?, access: AccessControl?, cachePolicy: CachePolicy,
        limiter: RateLimiter? = nil, crossOrigin: CrossOrigin? = nil
    ) -> RouterResponder {
        let root = RouteNode.Builder()
        for route in routes {
            precondition(route.pattern.hasPrefix("/"), "route pattern \(route.pattern) must start with /")
            var node = root
            for segment in Self.segments(of: route.pattern) {
                if segment.hasPrefix("{") && segment.hasSuffix("}") {
                    let name = String(segment.dropFirst().dropLast())
                    if node.parameter == nil { node.parameter = (name, RouteNode.Builder()) }
                    precondition(node.parameter!.name == name, "conflicting parameter names at \(route.pattern)")
                    node = node.parameter!.node
                } else {
                    if node.literals[segment] == nil { node.literals[segment] = RouteNode.Builder() }
                    node = node.literals[segment]!
                }
            }
            precondition(node.handlers[route.method] == nil, "route \(route.method) \(route.pattern) added twice")
            if case .guarded = route.handler {
                precondition(access != nil, "route \(route.method) \(route.pattern) needs an access control")
            }
            node.handlers[route.method] = route.handler
            node.pattern = route.pattern
        }
        return RouterResponder(
            root: root.freeze(), logger: logger, observer: observer, access: access, cachePolicy: cachePolicy,
            limiter: limiter, crossOrigin: crossOrigin)
    }

    static func segments(of path: String) -> [String] {
        path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    }
}

/// One node of the frozen route tree.
final class RouteNode: Sendable {
    /// The literal children, scanned in order: a node has a handful, where comparing bytes beats hashing.
    let literals: [(segment: [UInt8], node: RouteNode)]
    /// The parameter child and its name (two properties, not an optional pair: binding the pair copied both).
    let parameterName: String
    let parameterNode: RouteNode?
    let handlers: [String: RouteEntry]
    /// `handlers["GET"]`, the method of nearly every request, without hashing the method per request.
    let getHandler: RouteEntry?
    /// The route template of this node (`/v1/lists/{list}`), for logs and metrics, with its observer's state.
    let label: RouteLabel
    var pattern: String { label.pattern }
    /// The methods allowed here, for `Allow` (with `HEAD` where `GET` is).
    let allowed: [String]

    init(
        literals: [String: RouteNode], parameter: (name: String, node: RouteNode)?, handlers: [String: RouteEntry],
        pattern: String
    ) {
        self.literals = literals.sorted { $0.key < $1.key }.map { (Array($0.key.utf8), $0.value) }
        parameterName = parameter?.name ?? ""
        parameterNode = parameter?.node
        self.handlers = handlers
        getHandler = handlers["GET"]
        label = RouteLabel(pattern)
        var methods = Set(handlers.keys)
        if methods.contains("GET") { methods.insert("HEAD") }
        allowed = methods.sorted()
    }

    /// The literal child named by `segment`, if any.
    func literal(matching segment: UnsafeBufferPointer<UInt8>) -> RouteNode? {
        // memcmp, not `elementsEqual`: an array against a buffer is walked element by element through
        // their iterators, on every request of a session's paths.
        for literal in literals where literal.segment.count == segment.count {
            let equal =
                segment.isEmpty
                || literal.segment.withUnsafeBufferPointer {
                    memcmp($0.baseAddress!, segment.baseAddress!, $0.count) == 0
                }
            if equal { return literal.node }
        }
        return nil
    }

    /// The mutable form, used while routes are added.
    final class Builder {
        var literals: [String: Builder] = [:]
        var parameter: (name: String, node: Builder)?
        var handlers: [String: RouteEntry] = [:]
        var pattern = ""

        func freeze() -> RouteNode {
            RouteNode(
                literals: literals.mapValues { $0.freeze() },
                parameter: parameter.map { ($0.name, $0.node.freeze()) },
                handlers: handlers, pattern: pattern
            )
        }
    }
}

/// The immutable, thread-safe result of ``Router/buildResponder(logger:)``: `404 not-found`,
/// `405 method-not-allowed` with `Allow`, every thrown error as a problem document, and every response
/// with its `Cache-Control` (``CachePolicy``).
public final class RouterResponder: HTTPResponder {
    let root: RouteNode
    let logger: Logger
    let observer: (any RequestObserver)?
    /// Admits callers to the guarded routes (the product API).
    let access: AccessControl?
    /// `Cache-Control` by route kind.
    let cachePolicy: CachePolicy
    /// The clients' rate-limit buckets (API.md §6c), or `nil` when limits are off.
    let limiter: RateLimiter?
    /// Cross-origin requests (`server.cors`), or `nil` when no origin is allowed.
    let crossOrigin: CrossOrigin?
    /// The label of requests no route matched.
    let unmatched = RouteLabel("unmatched")
    /// The label of CORS preflights answered (``CrossOrigin``).
    let preflight = RouteLabel("preflight")

    /// A class, not a struct: the server holds it as an existential and every request reaches its fields, which
    /// as a struct's would be copied per request (the optional access control's outlined copy).
    init(
        root: RouteNode, logger: Logger, observer: (any RequestObserver)?, access: AccessControl?,
        cachePolicy: CachePolicy, limiter: RateLimiter?, crossOrigin: CrossOrigin? = nil
    ) {
        self.limiter = limiter
        self.crossOrigin = crossOrigin
        self.root = root
        self.logger = logger
        self.observer = observer
        self.access = access
        self.cachePolicy = cachePolicy
    }

    public func respond(to request: Request) -> Reply {
        // Read even without an observer (a clock read), so that no optional instant is carried.
        let start = MonotonicInstant.now
        let trace = TraceContext.traceID(of: request)
        if let crossOrigin {
            return respondCrossOrigin(to: request, crossOrigin, trace: trace, since: start)
        }
        let routed = route(request, at: start)
        let reply = finish(routed, of: request, trace: trace)
        if let observer { observe(reply, of: request, routed: routed, trace: trace, since: start, by: observer) }
        return reply
    }

    /// ``respond(to:)`` with CORS configured: a preflight answered here, every other answer with the fields of its
    /// origin (a branch of its own, so that without CORS the way of a request is what it was).
    private func respondCrossOrigin(
        to request: Request, _ crossOrigin: CrossOrigin, trace: TraceID, since start: MonotonicInstant
    ) -> Reply {
        let routed: Routed
        var reply: Reply
        if let preflight = crossOrigin.preflight(request) {
            routed = Routed(reply: .response(preflight), route: self.preflight, subject: nil)
            reply = routed.reply
        } else {
            routed = route(request, at: start)
            reply = finish(routed, of: request, trace: trace)
            let fields = crossOrigin.fields(for: request)
            if fields.count > 0 { reply = reply.adding(fields) }
        }
        if let observer { observe(reply, of: request, routed: routed, trace: trace, since: start, by: observer) }
        return reply
    }

    /// A routed reply with its `Cache-Control` and, for a `5xx`, its trace id.
    @inline(__always)
    private func finish(_ routed: Routed, of request: Request, trace: TraceID) -> Reply {
        let reply: Reply
        switch routed.reply {
        case .response(let response):
            let traced = response.status >= 500 ? Problem.naming(trace, in: response) : response
            reply = .response(cachePolicy.apply(to: traced, method: request.method, route: routed.pattern))
        case .prepared(let prepared), .preparedWithFields(let prepared, _):
            assert(
                prepared.response.headers["Cache-Control"]
                    == cachePolicy.headerValue(
                        method: request.method, route: routed.pattern, status: prepared.response.status),
                "a prepared response of \(routed.pattern) must carry its CachePolicy")
            reply = routed.reply
        case .deferred(let pending):
            // Answered later: no-store, from the server (see CachePolicy); a 5xx names the trace all the same.
            pending.adjust { $0.status >= 500 ? Problem.naming(trace, in: $0) : $0 }
            reply = routed.reply
        case .stream:
            reply = routed.reply  // one client's stream: no-store, from the server (see CachePolicy)
        }
        return reply
    }

    private func observe(
        _ reply: Reply, of request: Request, routed: Routed, trace: TraceID, since start: MonotonicInstant,
        by observer: any RequestObserver
    ) {
        let (route, subject) = (routed.route, routed.subject)
        switch reply {
        case .response(let response):
            observer.requestDidFinish(
                request, route: route, response: response, since: start, subject: subject, trace: trace)
        case .prepared(let prepared), .preparedWithFields(let prepared, _):
            observer.requestDidFinish(
                request, route: route, response: prepared.response, since: start, subject: subject, trace: trace)
        case .deferred(let pending):
            pending.whenResolved { response in
                observer.requestDidFinish(
                    request, route: route, response: response, since: start, subject: subject, trace: trace)
            }
        case .stream(let stream):
            // Logged when it starts: a stream lasts as long as its client stays.
            observer.requestDidFinish(
                request, route: route, response: Response(status: stream.status, headers: stream.headers),
                since: start, subject: subject, trace: trace)
        }
    }

    /// What routing a request gave: the reply, the route template that gave it (`unmatched` for a 404 of the
    /// router), and the subject of the caller's token. A struct, not a tuple: the tuple's copies are outlined
    /// into a helper shared with other types, which copies through the runtime's generic tuple functions,
    /// several times a request.
    private struct Routed {
        let reply: Reply
        let route: RouteLabel
        let subject: String?
        var pattern: String { route.pattern }
    }

    /// The request routed and answered; `start` is when it arrived (what its client's bucket refills by).
    private func route(_ request: Request, at start: MonotonicInstant) -> Routed {
        var parameters = RouteParameters()
        guard let node = match(request.path, &parameters) else {
            return Routed(reply: .response(Problem.notFound(request.path).response), route: unmatched, subject: nil)
        }
        let method = request.method
        let isGet = method == "GET"
        guard
            let handler = isGet ? node.getHandler : node.handlers[method] ?? (method == "HEAD" ? node.getHandler : nil)
        else {
            if node.handlers.isEmpty {
                return Routed(
                    reply: .response(Problem.notFound(request.path).response), route: unmatched, subject: nil)
            }
            return Routed(
                reply: .response(Problem.methodNotAllowed(method, allowed: node.allowed).response),
                route: node.label, subject: nil)
        }
        // The handler is called here, not through a closure given to a helper: the closure's capture copied the
        // request and its parameters (every field retained and released), on every request.
        switch handler {
        case .open(let handler):
            let reply: Reply
            do {
                reply = try handler(request, parameters)
            } catch {
                reply = failure(error, of: request)
            }
            return Routed(reply: reply, route: node.label, subject: nil)
        case .guarded(let needed, let handler):
            let caller: Caller
            do throws(Problem) {
                caller = try access!.admit(request, needed, parameters)
            } catch {
                return Routed(reply: .response(error.response), route: node.label, subject: nil)
            }
            // One branch when limits are off; when on, the bucket is drawn on before the handler does any work, so
            // that a refused write never reaches the write lane and a refused session holds nothing.
            var decision: RateLimiter.Decision?
            if let limiter {
                let kind = Self.rateLimitKind(needed, method: method)
                let drawn = limiter.draw(kind, for: RateLimitClient(caller, from: request.peerAddress), at: start)
                guard drawn.allowed else {
                    return Routed(reply: limiter.refusal(drawn), route: node.label, subject: caller.subject)
                }
                decision = drawn
            }
            var reply: Reply
            do {
                reply = try handler(request, parameters, caller)
            } catch {
                reply = failure(error, of: request)
            }
            if let decision, let limiter {
                reply = reply.adding(limiter.fields(of: decision), recurring: decision.recurring)
            }
            return Routed(reply: reply, route: node.label, subject: caller.subject)
        }
    }

    /// The bucket a guarded route draws on (API.md §6c): writes for a list's writes, sessions for a session's
    /// creation (the one `POST` on a readable list), reads for everything else.
    private static func rateLimitKind(_ access: RouteAccess, method: String) -> RateLimitKind {
        switch access {
        case .writeList: .writes
        case .readList: method == "POST" ? .sessions : .reads
        case .listIndex, .session: .reads
        }
    }

    /// The answer to a handler's error: its problem document, or a logged `500` for anything else.
    private func failure(_ error: any Error, of request: Request) -> Reply {
        if let problem = error as? Problem { return .response(problem.response) }
        let requestID = request.requestID.isEmpty ? RequestID.generate() : request.requestID
        logger.error(
            "unexpected error",
            metadata: [
                "request-id": "\(requestID)", "method": "\(request.method)", "path": "\(request.path)",
                "error": "\(error)",
            ]
        )
        return .response(Problem.internal(requestID: requestID).response)
    }

    public func response(for rejection: RequestRejection, origin: String?) -> Response {
        var response =
            switch rejection {
            case .payloadTooLarge(let limit): Problem.payloadTooLarge(limit: limit).response
            case .unsupportedContentEncoding(let coding):
                Problem(
                    .unsupportedMediaType,
                    detail: "The body's Content-Encoding, \(coding), is not one this service decodes (gzip, deflate).",
                    headers: ["Accept-Encoding": RequestRejection.acceptedRequestEncodings]
                ).response
            case .malformedContentEncoding(let coding):
                Problem(.invalidRequest, detail: "The body is not valid \(coding.rawValue) data.").response
            case .malformedFraming(let refusal):
                Problem(refusal.status == 501 ? .notImplemented : .invalidRequest, detail: refusal.detail).response
            }
        if let crossOrigin {
            for field in crossOrigin.fields(origin: origin) { response.headers.add(field.name, field.value) }
        }
        return response
    }

    /// Walks the tree segment by segment, trying a literal before the parameter at each level.
    ///
    /// The parameters are gathered into the caller's `parameters`: returned beside the node, in a tuple, they would
    /// be copied and the copy destroyed on every request.
    ///
    /// - Complexity: O(*s*) in the number of segments (a handful of literals compared as bytes per level, then
    ///   the parameter branch).
    func match(_ path: String, _ parameters: inout RouteParameters) -> RouteNode? {
        var path = path
        // A request's path is a native string, so this never copies; the bytes are walked as a buffer because
        // String.UTF8View's index arithmetic was most of the router's time in a profile of the page endpoint.
        return path.withUTF8 { bytes in
            guard bytes.first == UInt8(ascii: "/") else { return nil }
            return Self.match(bytes, from: 1, node: root, &parameters)
        }
    }

    private static func match(
        _ path: UnsafeBufferPointer<UInt8>, from start: Int, node: RouteNode, _ parameters: inout RouteParameters
    ) -> RouteNode? {
        var end = start
        while end < path.count && path[end] != UInt8(ascii: "/") { end += 1 }
        let segment = UnsafeBufferPointer(rebasing: path[start..<end])
        let isLast = end == path.count
        let rest = isLast ? end : end + 1
        if let literal = node.literal(matching: segment) {
            if isLast { return literal }
            if let found = match(path, from: rest, node: literal, &parameters) { return found }
        }
        if let child = node.parameterNode, !segment.isEmpty {
            // Appended in place and taken back if the branch fails, not tried on a copy: a failed match leaves
            // `parameters` as it found them.
            parameters.append(node.parameterName, String(decoding: segment, as: UTF8.self))
            if isLast { return child }
            if let found = match(path, from: rest, node: child, &parameters) { return found }
            parameters.removeLast()
        }
        return nil
    }
}

/// Told of every request the router answered, with its route template, the subject of the caller's
/// token (never the token) and its trace id (``TraceContext``): for access logs and metrics.
public protocol RequestObserver: AnyObject, Sendable {
    func requestDidFinish(
        _ request: Request, route: RouteLabel, response: Response, since start: MonotonicInstant,
        subject: String?, trace: TraceID)
}

/// A route's template as its observer is told it (`/v1/lists/{list}`, or `unmatched`), with what the
/// observer keeps per route. Made once per route when the responder is built, so that the observer finds its
/// state for the route without hashing the template on every request.
public final class RouteLabel: Sendable {
    public let pattern: String
    /// The metrics' series of this route, by method and status: a handful (see ``ServiceMetrics``).
    let series = Mutex<[RequestSeries]>([])
    /// The series of `GET` answered `200`, once made: most requests' series, read without the lock. Unretained:
    /// `series` holds it for the route's life (a series is never removed). `AtomicLazyReference` would do, but its
    /// `load` is not specialized: a generic metadata lookup per call, on every request.
    let okGet = Atomic<Unmanaged<RequestSeries>?>(nil)
    /// The route's request durations (see ``ServiceMetrics``).
    let latency = RouteLatency()

    init(_ pattern: String) {
        self.pattern = pattern
    }
}
