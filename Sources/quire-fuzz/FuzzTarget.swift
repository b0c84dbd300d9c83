import Crypto
import Dispatch
import FoundationEssentials
import Logging
import QuireAPI
import QuireAuth
import QuireCore
import QuireHTTP
import QuireSources
import Synchronization

/// The parsers that read bytes a client sent, each with the property its fuzz target checks on every input
/// it accepts. A refused input is fine (that is the parser's job); a crash, a sanitizer report or a broken
/// property is a finding.
enum FuzzTarget: String, CaseIterable, Sendable {
    /// The JSON reader: what it accepts, written back and read again, writes the same bytes.
    case json
    /// A list document (`PUT /v1/lists/{list}`): what validates, built and written back, builds the same list.
    case document
    /// Operations (`POST /v1/lists/{list}/ops`) applied to a list with sections, children and headers: the
    /// list they produce writes a document that builds the same list again.
    case ops
    /// Page cursors (`after` / `before`, opaque strings from clients): one that decodes encodes to a cursor
    /// that decodes the same, and pages the list without trapping.
    case cursor
    /// Session ids (a path segment): checked for form only, never trapping.
    case sessionID = "session-id"
    /// Bearer tokens as clients send them, through jwt-kit's parser and Quire's checks (HS256 configured):
    /// refused or verified, never trapping.
    case token
    /// The claims of a token signed with the configured secret (the input is its payload), so that the
    /// claim checks and the scope parser see every input: one that verifies has a subject and an expiry.
    case tokenClaims = "token-claims"
    /// Whole requests as libmicrohttpd hands them over (method, path, query items, header fields, body),
    /// answered by the service's router over an in-memory store with the demo list: the query values,
    /// path parameters, headers (`If-Match`, `Content-Type`, `Content-Encoding`, `Accept-Encoding`, …) and
    /// bodies of every route. Never a `500`. The input is `METHOD TARGET`, then `Name: value` lines, an
    /// empty line and the body; the target's query is split on `&` and the first `=` as libmicrohttpd does.
    case request
    /// What an app's PostgreSQL sends a source (QuireSources): a pgoutput message, or a frame of the replication
    /// stream (XLogData, whose payload is decoded too, or a keepalive). What decodes encodes back to the same bytes.
    case pgoutput

    /// A finding that is not a crash: the property the target checks does not hold.
    struct Broken: Error, CustomStringConvertible {
        let description: String
    }

    func run(_ bytes: UnsafeRawBufferPointer) throws(Broken) {
        switch self {
        case .json: try Self.json(bytes)
        case .document: try Self.document(bytes)
        case .ops: try Self.ops(bytes)
        case .cursor: try Self.cursor(bytes)
        case .sessionID: _ = SessionID.isWellFormed(String(decoding: bytes, as: UTF8.self))
        case .token: _ = try? Self.verifier.verify(String(decoding: bytes, as: UTF8.self), now: Self.now)
        case .tokenClaims: try Self.tokenClaims(bytes)
        case .request: try Self.request(bytes)
        case .pgoutput: try Self.pgoutput(bytes)
        }
    }

    private static let parser = JSONParser()

    private static func json(_ bytes: UnsafeRawBufferPointer) throws(Broken) {
        guard let value = try? parser.parse(bytes) else { return }
        let written = JSONWriter.encode(value)
        guard let again = try? parser.parse(written) else { throw Broken(description: "its own output does not parse") }
        guard JSONWriter.encode(again) == written else { throw Broken(description: "written twice, different bytes") }
    }

    private static func document(_ bytes: UnsafeRawBufferPointer) throws(Broken) {
        guard let value = try? parser.parse(bytes), let list = try? ListVersion(document: value) else { return }
        try roundTrip(list)
    }

    private static func ops(_ bytes: UnsafeRawBufferPointer) throws(Broken) {
        guard let value = try? parser.parse(bytes), let next = try? base.applying(opsDocument: value) else { return }
        try roundTrip(next)
    }

    private static func cursor(_ bytes: UnsafeRawBufferPointer) throws(Broken) {
        guard let cursor = PageCursor(encoded: String(decoding: bytes, as: UTF8.self)) else { return }
        guard PageCursor(encoded: cursor.encoded) == cursor else {
            throw Broken(description: "a decoded cursor does not survive encoding")
        }
        _ = cursor.page(in: base, limit: 50)
    }

    private static func tokenClaims(_ bytes: UnsafeRawBufferPointer) throws(Broken) {
        let signingInput = Self.tokenHeader + "." + base64URL(Array(bytes))
        let mac = HMAC<SHA256>.authenticationCode(for: Array(signingInput.utf8), using: secretKey)
        let token = signingInput + "." + base64URL(Array(mac))
        guard let verified = try? verifier.verify(token, now: now) else { return }
        guard !verified.subject.isEmpty, verified.acceptedUntil.isFinite, verified.acceptedUntil > now else {
            throw Broken(description: "a verified token without a subject or a future expiry")
        }
        _ = verified.scopes.mayRead("inbox")
        _ = verified.scopes.mayWrite("inbox")
    }

    private static func request(_ bytes: UnsafeRawBufferPointer) throws(Broken) {
        guard let request = Self.parseRequest(Array(bytes)) else { return }
        let status: Int
        switch service.router.respond(to: request) {
        case .response(let response): status = response.status
        case .prepared(let prepared), .preparedWithFields(let prepared, _): status = prepared.response.status
        case .deferred(let pending):  // a long poll: not waited for
            pending.resume(with: Response(status: 204))
            return
        case .stream(let stream): stream.finish(); return
        }
        guard status != 500 else { throw Broken(description: "answered 500") }
    }

    private static func pgoutput(_ bytes: UnsafeRawBufferPointer) throws(Broken) {
        let input = Array(bytes)
        if let message = try? PgOutput.Message(decoding: input) {
            guard message.encoded == input else { throw Broken(description: "a pgoutput message encodes otherwise") }
        }
        guard let frame = try? ReplicationMessage(decoding: input) else { return }
        guard frame.encoded == input else { throw Broken(description: "a replication frame encodes otherwise") }
        if case .xLogData(let data) = frame, let message = try? PgOutput.Message(decoding: data.payload) {
            guard message.encoded == data.payload else { throw Broken(description: "a payload encodes otherwise") }
        }
    }

    /// The request the bytes describe, or nil when they describe none (no request line).
    static func parseRequest(_ bytes: [UInt8]) -> Request? {
        let end = bytes.indices.dropLast().first { bytes[$0] == 10 && bytes[$0 + 1] == 10 }
        let head = String(decoding: end.map { bytes[..<$0] } ?? bytes[...], as: UTF8.self)
        let body = end.map { Array(bytes[($0 + 2)...]) } ?? []
        var lines = head.split(separator: "\n", omittingEmptySubsequences: false).makeIterator()
        guard let requestLine = lines.next() else { return nil }
        let parts = requestLine.split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let target = parts[1]
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [NamedValue] = []
        if path.count == 2 {
            for item in path[1].split(separator: "&") {
                let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                query.append(NamedValue(name: String(pair[0]), value: pair.count == 2 ? String(pair[1]) : ""))
            }
        }
        var headers = HTTPHeaders()
        while let line = lines.next() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.add(String(line[..<colon]), line[line.index(after: colon)...].trimming(" \t"))
        }
        return Request(method: String(parts[0]), path: String(path[0]), query: query, headers: headers, body: body)
    }

    /// The service, with the demo list, its store in memory, no listening socket.
    private static let service: QuireService = {
        var logger = Logger(label: "quire-fuzz")
        logger.logLevel = .critical
        var configuration = QuireService.Configuration()
        configuration.accessLog = false
        let service = QuireService(configuration: configuration, logger: logger)
        do {
            try service.load()
        } catch {
            fatalError("the fuzz targets' service does not load: \(error)")
        }
        return service
    }()

    /// The instant tokens are checked at (fixed: the same input gives the same answer).
    private static let now = 1_900_000_000.0
    private static let secret = "quire-fuzz-secret-of-at-least-32-bytes!"
    private static let secretKey = SymmetricKey(data: Array(secret.utf8))
    private static let tokenHeader = base64URL(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))

    /// A verifier with the HS256 secret, keeping few verified tokens (so that its cache is emptied often).
    private static let verifier: TokenVerifier = {
        var settings = TokenSettings()
        settings.secret = secret
        settings.cacheEntries = 16
        let loaded = Mutex<TokenKeys?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let keys = try? await TokenKeys.load(settings)
            loaded.withLock { $0 = keys }
            done.signal()
        }
        done.wait()
        guard let keys = loaded.withLock({ $0 }) else { fatalError("the fuzz targets' token keys do not load") }
        return TokenVerifier(settings: settings, keys: keys)
    }()

    private static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacing("+", with: "-").replacing("/", with: "_")
            .replacing("=", with: "")
    }

    /// A list's document builds a list whose document is the same.
    private static func roundTrip(_ list: ListVersion) throws(Broken) {
        let document = list.documentBytes
        guard let value = try? parser.parse(document) else { throw Broken(description: "its document does not parse") }
        do {
            let rebuilt = try ListVersion(document: value)
            guard rebuilt.documentBytes == document else {
                throw Broken(description: "its document builds a different list")
            }
        } catch let error as Broken {
            throw error
        } catch {
            throw Broken(description: "its document does not validate: \(error)")
        }
    }

    /// The list operations and cursors are tried on: two sections with headers and footers, items with
    /// children, so that every kind of op has something to act on.
    static let base: ListVersion = {
        let text = """
            {"sections":[
              {"id":"s1","header":{"type":"h","data":{"title":"One"}},"footer":{"type":"f","data":{}},
               "items":[{"id":"a","type":"row","data":{"n":1}},
                        {"id":"b","type":"row","data":{"n":2},"children":[{"id":"b1","type":"row","data":{}},{"id":"b2","type":"row","data":{}}]},
                        {"id":"c","type":"row","data":{"n":3}}]},
              {"id":"s2","items":[{"id":"d","type":"row","data":{}},{"id":"e","type":"card","data":{"x":[1,2]}}]}
            ]}
            """
        do {
            return try ListVersion(document: try JSONParser().parse(text))
        } catch {
            fatalError("the fuzz targets' base list does not build: \(error)")
        }
    }()
}
