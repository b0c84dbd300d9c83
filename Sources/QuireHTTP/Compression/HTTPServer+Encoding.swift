internal import CQuireFraming
import Synchronization

// Representations on the wire, decided here for every response whatever its route: the content coding
// negotiated from `Accept-Encoding` (RFC 9110 §12.5.3), `Vary: Accept-Encoding`, an entity tag per
// representation (§8.8.3: `"7"` sent gzip is `"7-gzip"`), and `If-None-Match` evaluated against the tag of
// the representation that would be sent (§13.1.2), so that a `304` names the one the client holds. And a
// response that says nothing to caches gets `Cache-Control: no-store`: nothing is cached by heuristics.

/// Response body bytes since start, before and after compression.
final class BodyByteCounters: Sendable {
    let plain = Atomic<Int>(0)
    let sent = Atomic<Int>(0)

    func count(plain: Int, sent: Int) {
        self.plain.add(plain, ordering: .relaxed)
        self.sent.add(sent, ordering: .relaxed)
    }
}

/// What a request says about the representation it wants, kept from its headers until it is answered.
///
/// Read from the fields the framing scan found (no lookup walks the headers again), on the access handler's
/// first call. Plain bytes, copied as such: with the request's `If-None-Match` (a string) inside, every copy
/// and destroy of it would go through its value witnesses, on every request, so that field is kept beside it
/// (``EntityTagCondition``).
struct Negotiation {
    var accept: AcceptEncoding
    /// `false` for a request whose fields were not read (its framing was refused): its answer is sent as
    /// it is, neither compressed nor compared with a tag.
    var applies: Bool

    /// A request whose fields were not read.
    init() {
        accept = AcceptEncoding(nil)
        applies = false
    }

    /// - Parameter acceptEncoding: the request's `Accept-Encoding` (its fields joined), or `nil`.
    init(acceptEncoding: String?) {
        accept = AcceptEncoding(acceptEncoding)
        applies = true
    }
}

/// A request's `If-None-Match` (its fields joined), evaluated against the tag of the representation it would
/// get.
enum EntityTagCondition {
    /// Whether `ifNoneMatch` names `tag` (weak comparison, RFC 9110 §13.1.2), or is `*`. The tag is read only
    /// when the request has `If-None-Match`: most send none, and then a response's tag is not looked up.
    static func notModified(_ ifNoneMatch: String?, tag: @autoclosure () -> String?) -> Bool {
        guard let ifNoneMatch, let tag = tag() else { return false }
        let opaque = tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag)
        for candidate in ifNoneMatch.split(separator: ",") {
            let trimmed = candidate.trimming(" \t")
            if trimmed == "*" { return true }
            if (trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : Substring(trimmed)) == opaque { return true }
        }
        return false
    }
}

extension HTTPServer {
    /// Response body bytes as produced by the responder (before compression), since start.
    public var responseBodyBytes: Int { bodyBytes.plain.load(ordering: .relaxed) }

    /// Response body bytes as sent (after compression), since start.
    public var responseBodyBytesSent: Int { bodyBytes.sent.load(ordering: .relaxed) }

    /// `response` as it goes on the wire for `negotiation`: compressed when the client accepts it and
    /// the body is worth it, with the representation's entity tag; or `304` when the client holds that
    /// representation. `Vary: Accept-Encoding` and `Cache-Control: no-store` are not added to its fields but
    /// returned as flags, which the server adds as it hands the response over (``ExtraHeaders``): adding them
    /// here would copy the fields' array and grow it, twice for most answers.
    func wireResponse(_ response: Response, _ negotiation: Negotiation, ifNoneMatch: String?) -> (
        response: Response, vary: Bool, noStore: Bool
    ) {
        let noStore = !response.headers.contains("Cache-Control")
        let settings = configuration.compression
        guard negotiation.applies, settings.enabled || ifNoneMatch != nil else {
            bodyBytes.count(plain: response.body.count, sent: response.body.count)
            return (response, false, noStore)
        }
        let compressible = settings.enabled && Self.isCompressible(response)
        let coding =
            compressible
            ? negotiation.accept.preferred(size: response.body.count, threshold: settings.minimumBytes) : .identity
        var headers = response.headers  // copied only when the tag changes
        if coding != .identity, let tag = headers["ETag"] { headers.replace("ETag", with: coding.entityTag(tag)) }
        if response.status == 200, EntityTagCondition.notModified(ifNoneMatch, tag: headers["ETag"]) {
            return (Self.notModified(headers), compressible, noStore)
        }
        guard coding != .identity else {
            bodyBytes.count(plain: response.body.count, sent: response.body.count)
            return (response, compressible, noStore)
        }
        headers.add("Content-Encoding", coding.rawValue)
        let body =
            response.parts.map { Compression.splice($0, as: coding, level: settings.level) }
            ?? Compression.compress(response.body, as: coding, level: settings.level)
        bodyBytes.count(plain: response.body.count, sent: body.count)
        return (Response(status: response.status, headers: headers, body: body), compressible, noStore)
    }

    /// The representation of `prepared` to send for `negotiation` (its compressed variants are made once
    /// and kept beside it), or the `304` to send instead; and whether to add `Vary` (to either).
    func wireRepresentation(_ prepared: PreparedResponse, _ negotiation: Negotiation, ifNoneMatch: String?)
        -> (representation: PreparedResponse, notModified: Response?, vary: Bool)
    {
        let settings = configuration.compression
        guard negotiation.applies, settings.enabled || ifNoneMatch != nil else {
            bodyBytes.count(plain: prepared.response.body.count, sent: prepared.response.body.count)
            return (prepared, nil, false)
        }
        let compressible = settings.enabled && prepared.isCompressible
        let coding =
            compressible
            ? negotiation.accept.preferred(size: prepared.response.body.count, threshold: settings.minimumBytes)
            : .identity
        let chosen = coding == .identity ? prepared : prepared.variant(coding, level: settings.level)
        if prepared.response.status == 200, EntityTagCondition.notModified(ifNoneMatch, tag: chosen.entityTag) {
            return (chosen, Self.notModified(chosen.response.headers), compressible)  // `Vary` by the flag
        }
        bodyBytes.count(plain: prepared.response.body.count, sent: chosen.response.body.count)
        return (chosen, nil, compressible)
    }

    /// The coding of an event stream for `negotiation`: compressed event by event when the client accepts
    /// gzip or deflate and compression is on (every event is worth it: the threshold is for whole bodies,
    /// a stream's length is unknown), `nil` for identity.
    func streamCoding(_ stream: StreamingResponse, _ negotiation: Negotiation) -> ContentCoding? {
        let settings = configuration.compression
        guard settings.enabled, negotiation.applies, !stream.headers.contains("Content-Encoding") else { return nil }
        let coding = negotiation.accept.preferred(size: .max, threshold: 0)
        return coding == .identity ? nil : coding
    }

    /// A `304` with the header fields a `200` would have had that RFC 9110 §15.4.5 asks for.
    private static func notModified(_ headers: HTTPHeaders) -> Response {
        var kept = HTTPHeaders()
        for field in headers {
            switch field.name.lowercased() {
            case "etag", "vary", "cache-control", "content-location", "expires", "date":
                kept.add(field.name, field.value)
            default: break
            }
        }
        return Response(status: 304, headers: kept)
    }

    /// Whether compressing `response` can help: a body, not yet encoded, of a textual media type. Event
    /// streams are compressed event by event (``DeflateStream``), never whole.
    static func isCompressible(_ response: Response) -> Bool {
        guard !response.body.isEmpty, response.status != 206, !response.headers.contains("Content-Encoding") else {
            return false
        }
        guard let type = response.headers["Content-Type"] else { return false }
        if type == "application/json" { return true }  // nearly every answer: no string work
        let media = (type.split(separator: ";", maxSplits: 1).first ?? "").trimming(" \t").lowercased()
        if media == "text/event-stream" { return false }
        return media.hasPrefix("text/") || media.hasSuffix("json") || media.hasSuffix("+json")
            || media == "application/yaml" || media == "application/javascript" || media.hasSuffix("+xml")
            || media == "application/xml"
    }
}

extension PreparedResponse {
    /// The compressed representation in `coding`, made by the first caller and kept (two first callers
    /// may both make it; the result is the same and neither waits).
    func variant(_ coding: ContentCoding, level: Int) -> PreparedResponse {
        let index = coding == .gzip ? 0 : 1
        if let made = variants.withLock({ $0[index] }) { return made }
        var headers = response.headers
        headers.add("Content-Encoding", coding.rawValue)
        if let tag = headers["ETag"] { headers.replace("ETag", with: coding.entityTag(tag)) }
        let body =
            response.parts.map { Compression.splice($0, as: coding, level: level) }
            ?? Compression.compress(response.body, as: coding, level: level)
        let made = PreparedResponse(Response(status: response.status, headers: headers, body: body))
        return variants.withLock { variants in
            if let earlier = variants[index] { return earlier }
            variants[index] = made
            return made
        }
    }
}
