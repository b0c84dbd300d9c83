/// A content coding of RFC 9110 §8.4.1 that the server can send and read.
public enum ContentCoding: String, Sendable, CaseIterable {
    case identity
    case gzip
    /// The zlib format (RFC 1950), which is what `deflate` means in HTTP.
    case deflate

    /// The coding named by one `Content-Encoding` or `Accept-Encoding` token (`x-gzip` is `gzip`), or `nil`.
    public init?(token: some StringProtocol) {
        switch token.lowercased() {
        case "identity": self = .identity
        case "gzip", "x-gzip": self = .gzip
        case "deflate": self = .deflate
        default: return nil
        }
    }

    /// What a representation's strong entity tag gets in this coding (RFC 9110 §8.8.3: a strong tag names
    /// one representation): `"7"` becomes `"7-gzip"`.
    public var entityTagSuffix: String {
        self == .identity ? "" : "-\(rawValue)"
    }

    /// `"7"` in this coding: `"7-gzip"`. A weak or malformed tag is returned as it is.
    public func entityTag(_ tag: String) -> String {
        guard self != .identity, tag.hasPrefix("\""), tag.hasSuffix("\""), tag.count >= 2 else { return tag }
        return "\(tag.dropLast())\(entityTagSuffix)\""
    }
}

/// A request's `Accept-Encoding` (RFC 9110 §12.5.3), reduced to what the server can choose among.
///
/// Parsed on every request that sends the field: three stored qualities rather than a dictionary, so that
/// reading it allocates nothing but the split of the field.
public struct AcceptEncoding: Sendable, Equatable {
    /// The quality of each coding the server knows, in thousandths (0 refuses it).
    private var identity: Int
    private var gzip: Int
    private var deflate: Int
    /// The header was absent: the server chooses, and sends `identity`.
    public let isAbsent: Bool

    /// - Parameter header: the field's value (several fields joined with `,`), or `nil` when absent.
    public init(_ header: String?) {
        guard let header else {
            (identity, gzip, deflate) = (1000, 0, 0)
            isAbsent = true
            return
        }
        isAbsent = false
        // -1: not named.
        var explicit = (identity: -1, gzip: -1, deflate: -1)
        var star: Int?
        for element in header.split(separator: ",") {
            var parameters = element.split(separator: ";").makeIterator()
            let name = parameters.next()?.trimming(" \t") ?? ""
            var quality = 1000
            while let parameter = parameters.next() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimming(" \t").lowercased() == "q" else { continue }
                quality = Self.quality(pair[1].trimming(" \t")) ?? 0
            }
            if name == "*" {
                star = max(star ?? 0, quality)
            } else {
                switch ContentCoding(token: name) {
                case .identity?: explicit.identity = max(explicit.identity, quality)
                case .gzip?: explicit.gzip = max(explicit.gzip, quality)
                case .deflate?: explicit.deflate = max(explicit.deflate, quality)
                case nil: break
                }
            }
        }
        // A coding not named takes `*`'s quality; without `*`, identity stays acceptable (unless refused, by
        // name or by `*;q=0`) and the others are not.
        identity = explicit.identity >= 0 ? explicit.identity : star ?? 1
        gzip = explicit.gzip >= 0 ? explicit.gzip : star ?? 0
        deflate = explicit.deflate >= 0 ? explicit.deflate : star ?? 0
    }

    private func quality(of coding: ContentCoding) -> Int {
        switch coding {
        case .identity: identity
        case .gzip: gzip
        case .deflate: deflate
        }
    }

    /// Whether `coding` is acceptable (quality above 0).
    public func accepts(_ coding: ContentCoding) -> Bool {
        quality(of: coding) > 0
    }

    /// The coding to send a body of `size` bytes in: the acceptable compressed coding of highest quality
    /// (gzip before deflate on a tie) when the body is at least `threshold` bytes or `identity` is refused,
    /// else `identity`. `identity` too when nothing is acceptable: RFC 9110 allows sending it then.
    public func preferred(size: Int, threshold: Int) -> ContentCoding {
        guard size >= threshold || identity == 0 else { return .identity }
        let best = gzip >= deflate ? (ContentCoding.gzip, gzip) : (.deflate, deflate)
        return best.1 > 0 && best.1 >= identity ? best.0 : .identity
    }

    /// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`, in thousandths; `nil` when malformed.
    private static func quality(_ text: some StringProtocol) -> Int? {
        let bytes = Array(text.utf8)
        guard let first = bytes.first, first == UInt8(ascii: "0") || first == UInt8(ascii: "1") else { return nil }
        var value = Int(first - UInt8(ascii: "0")) * 1000
        guard bytes.count > 1 else { return value }
        guard bytes[1] == UInt8(ascii: "."), bytes.count <= 5 else { return nil }
        var scale = 100
        for digit in bytes.dropFirst(2) {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            value += Int(digit - UInt8(ascii: "0")) * scale
            scale /= 10
        }
        return value <= 1000 ? value : nil
    }
}
