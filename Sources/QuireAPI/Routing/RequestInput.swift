import QuireCore
import QuireHTTP

/// Reading what a request carries, with the API's errors: JSON bodies (`415`, `400 invalid-json`),
/// integer and enumerated query parameters and path names (`400 invalid-request`), and the
/// conditional headers.
enum RequestInput {
    /// List names: plain names (``PlainName``), `[A-Za-z0-9._-]{1,128}`.
    static func listName(_ parameters: RouteParameters) throws(Problem) -> String {
        let name = parameters["list"] ?? ""
        guard PlainName.isValid(name) else {
            throw Problem(.invalidRequest, detail: "A list name is 1 to 128 characters of A-Z a-z 0-9 . _ -.")
        }
        return name
    }

    /// The `prefix` of a listing: `""` when absent or empty, else up to 128 characters of a list name's
    /// (``PlainName``).
    static func listPrefix(_ request: Request) throws(Problem) -> String {
        guard let prefix = request.queryValue("prefix"), !prefix.isEmpty else { return "" }
        guard PlainName.isValid(prefix) else {
            throw Problem(.invalidRequest, detail: "prefix is up to 128 characters of A-Z a-z 0-9 . _ -.")
        }
        return prefix
    }

    /// The body as JSON. `required: false` accepts an empty body (`nil`).
    static func json(_ request: Request, required: Bool = true) throws(Problem) -> JSONValue? {
        if request.body.isEmpty {
            guard required else { return nil }
            throw Problem(.invalidJSON, detail: "The request needs a JSON body.")
        }
        let contentType = request.headers["Content-Type"] ?? ""
        // The type nearly every client sends, as sent, answers without splitting (which costs more than parsing
        // a small body).
        guard contentType == "application/json" || Self.mediaType(of: contentType) == "application/json" else {
            throw Problem(
                .unsupportedMediaType,
                detail: "The body must be application/json, not \(contentType.isEmpty ? "untyped" : contentType).")
        }
        do {
            return try JSONParser().parse(request.body)
        } catch {
            throw Problem(.invalidJSON, detail: error.description, extensions: [.init("offset", .int(error.offset))])
        }
    }

    /// The media type of a `Content-Type` value, without its parameters, in lower case.
    private static func mediaType(of contentType: String) -> String? {
        contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimming(" \t").lowercased() }
    }

    /// An integer query parameter within `range`, or `defaultValue` when absent.
    static func integer(
        _ request: Request, _ name: StaticString, in range: ClosedRange<Int>, default defaultValue: Int?
    )
        throws(Problem) -> Int?
    {
        // Parsed from the item's bytes: decoding it into a string first would make a string on every page.
        guard let parsed = request.query.withValue(of: name, Self.decimal) else { return defaultValue }
        guard let value = parsed, range.contains(value) else {
            throw Problem(
                .invalidRequest, detail: "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound).")
        }
        return value
    }

    /// The integer `bytes` spell as `Int(_: String)` reads one: an optional sign, then one or more ASCII digits;
    /// `nil` for anything else, or past `Int`'s range.
    static func decimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var digits = bytes[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative || digits.first == UInt8(ascii: "+") { digits = digits.dropFirst() }
        guard !digits.isEmpty else { return nil }
        var value = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let digit = Int(byte &- UInt8(ascii: "0"))
            let (times10, overflowed) = value.multipliedReportingOverflow(by: 10)
            // Accumulated negative for a negative number, so that Int.min is read too.
            let (next, overflowedAgain) =
                negative ? times10.subtractingReportingOverflow(digit) : times10.addingReportingOverflow(digit)
            guard !overflowed, !overflowedAgain else { return nil }
            value = next
        }
        return value
    }

    /// A number of seconds in `range` (fractions allowed), or `defaultValue` when absent.
    static func seconds(_ request: Request, _ name: String, in range: ClosedRange<Double>, default defaultValue: Double)
        throws(Problem) -> Double
    {
        guard let text = request.queryValue(name) else { return defaultValue }
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            throw Problem(
                .invalidRequest,
                detail: "\(name) must be a number of seconds from \(Int(range.lowerBound)) to \(Int(range.upperBound))."
            )
        }
        return value
    }

    /// A version or `seq` number from a JSON member or a query parameter: 1 to 2^53 − 1.
    /// The versions and `seq` numbers a request may name (integers JSON numbers hold exactly).
    static let versions: ClosedRange<Int> = 1...(1 << 53) - 1

    static func version(_ value: JSONValue?, name: String) throws(Problem) -> UInt64 {
        guard let number = value?.intValue, versions.contains(Int(number)) else {
            throw Problem(.invalidRequest, detail: "\(name) must be an integer from 1 to 2^53 - 1.")
        }
        return UInt64(number)
    }

    /// The window a request names: `since` (a version) or `seq` (an answer counter), exactly one of them,
    /// each from a query parameter or a body member.
    static func position(since: JSONValue?, seq: JSONValue?) throws(Problem) -> SessionPosition {
        switch (since, seq) {
        case (let since?, nil): return .version(try version(since, name: "since"))
        case (nil, let seq?): return .seq(try version(seq, name: "seq"))
        case (nil, nil): throw Problem(.invalidRequest, detail: "Name the window held: since=<version> or seq=<n>.")
        case (.some, .some): throw Problem(.invalidRequest, detail: "Give since or seq, not both.")
        }
    }

    /// A query parameter as the JSON integer it holds (a string that is not one stays a string, to be refused).
    static func queryInteger(_ request: Request, _ name: String) -> JSONValue? {
        request.queryValue(name).map { text in Int64(text).map(JSONValue.int) ?? .string(text) }
    }

    /// `If-Match`: `nil` when absent; `*` matches any existing version; else the quoted versions.
    static func ifMatch(_ request: Request) throws(Problem) -> ListRegistry.IfMatch? {
        guard let value = request.headers["If-Match"] else { return nil }
        if value.trimming(" \t") == "*" { return .any }
        guard let versions = entityTags(value) else {
            throw Problem(.invalidRequest, detail: "If-Match must be * or quoted versions such as \"7\".")
        }
        return .versions(versions)
    }

    /// `"1", "2"` → {1, 2}; weak tags never match; `nil` when malformed. The tag of a compressed
    /// representation of a page names the same version (`"7-gzip"` → 7).
    private static func entityTags(_ value: String) -> Set<UInt64>? {
        var versions = Set<UInt64>()
        for part in value.split(separator: ",") {
            let tag = part.trimming(" \t")
            if tag.hasPrefix("W/") { continue }
            guard tag.count >= 3, tag.hasPrefix("\""), tag.hasSuffix("\"") else { return nil }
            var opaque = tag.dropFirst().dropLast()
            for coding in ContentCoding.allCases where coding != .identity && opaque.hasSuffix(coding.entityTagSuffix) {
                opaque = opaque.dropLast(coding.entityTagSuffix.count)
            }
            guard let version = UInt64(opaque) else { return nil }
            versions.insert(version)
        }
        return versions
    }
}
