import Synchronization

/// Bytes that many responses carry inside their own (the content of a session answer shared by every
/// session holding the same window): compressed at most once, as a raw deflate fragment that each
/// response's gzip or deflate body splices in between its own bytes (sent as stored blocks), with the
/// checksums combined by zlib (`crc32_combine`, `adler32_combine`): one valid gzip or zlib stream, as
/// pigz builds from pieces compressed apart.
public final class SharedBody: Sendable {
    public let bytes: [UInt8]
    private let fragment = Mutex<DeflatedFragment?>(nil)

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The fragment, made by the first caller (two first callers may both make it; the result is the
    /// same and neither waits).
    func deflated(level: Int) -> DeflatedFragment {
        if let made = fragment.withLock({ $0 }) { return made }
        let made = DeflatedFragment(bytes, level: level)
        fragment.withLock { $0 = $0 ?? made }
        return made
    }
}

/// Raw deflate data that ends on a byte boundary without a final block (`Z_SYNC_FLUSH`), so that other
/// blocks may follow it; with the checksums of its uncompressed bytes.
struct DeflatedFragment: Sendable {
    let bytes: [UInt8]
    let crc: UInt32
    let adler: UInt32
    let count: Int

    init(_ plain: [UInt8], level: Int) {
        let stream = DeflateStream(.raw, level: level)
        bytes = stream.compress(plain, flush: .sync)
        (crc, adler) = plain.withUnsafeBytes { (Compression.crc32($0), Compression.adler32($0)) }
        count = plain.count
    }
}

/// One piece of a response body given in parts (see ``Response/init(status:headers:parts:)``).
public enum BodyPart: Sendable {
    /// Bytes of this response alone (small: they are sent uncompressed inside a compressed body).
    case bytes([UInt8])
    /// Bytes shared with other responses, compressed once.
    case shared(SharedBody)
}

extension Response {
    /// A response whose body is the concatenation of `parts`: compressed, it is spliced from the shared
    /// parts' fragments (compressed once) and its own parts, never compressed whole.
    public init(status: Int, headers: HTTPHeaders = [:], parts: [BodyPart]) {
        var body: [UInt8] = []
        body.reserveCapacity(
            parts.reduce(0) {
                switch $1 {
                case .bytes(let bytes): $0 + bytes.count
                case .shared(let shared): $0 + shared.bytes.count
                }
            })
        for part in parts {
            switch part {
            case .bytes(let bytes): body += bytes
            case .shared(let shared): body += shared.bytes
            }
        }
        self.init(status: status, headers: headers, body: body)
        self.parts = parts
    }
}

extension Compression {
    /// `parts` as one gzip or zlib stream: a header, each part (own bytes as stored blocks, shared ones as
    /// their fragment), an empty final block, the combined checksum and length.
    ///
    /// - Complexity: O(*n*) in the own parts' sizes, O(1) per shared part besides copying its fragment.
    static func splice(_ parts: [BodyPart], as coding: ContentCoding, level: Int) -> [UInt8] {
        precondition(coding != .identity)
        var out: [UInt8] = coding == .gzip ? [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff] : [0x78, 0x9c]
        var crc: UInt32 = 0
        var adler: UInt32 = 1
        var total = 0
        for part in parts {
            switch part {
            case .bytes(let bytes):
                var offset = 0
                while offset < bytes.count {
                    let length = min(bytes.count - offset, 0xffff)
                    // A stored, non-final block: BFINAL 0, BTYPE 00, then LEN and NLEN, little-endian.
                    out += [0, UInt8(length & 0xff), UInt8(length >> 8), ~UInt8(length & 0xff), ~UInt8(length >> 8)]
                    out += bytes[offset..<offset + length]
                    offset += length
                }
                bytes.withUnsafeBytes { raw in
                    if coding == .gzip {
                        crc = crc32(raw, continuing: crc)
                    } else {
                        adler = adler32(raw, continuing: adler)
                    }
                }
                total += bytes.count
            case .shared(let shared):
                let fragment = shared.deflated(level: level)
                out += fragment.bytes
                if coding == .gzip {
                    crc = crc32Combine(crc, fragment.crc, secondLength: fragment.count)
                } else {
                    adler = adler32Combine(adler, fragment.adler, secondLength: fragment.count)
                }
                total += fragment.count
            }
        }
        // The final block: fixed Huffman codes, BFINAL 1, holding only the end-of-block code.
        out += [0x03, 0x00]
        if coding == .gzip {
            for value in [crc, UInt32(truncatingIfNeeded: total)] {
                out += [
                    UInt8(value & 0xff), UInt8((value >> 8) & 0xff), UInt8((value >> 16) & 0xff), UInt8(value >> 24),
                ]
            }
        } else {
            out += [UInt8(adler >> 24), UInt8((adler >> 16) & 0xff), UInt8((adler >> 8) & 0xff), UInt8(adler & 0xff)]
        }
        return out
    }
}
