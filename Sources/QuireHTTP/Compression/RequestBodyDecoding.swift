internal import CZlib

/// Decoding a request body sent with `Content-Encoding` (gzip or deflate), with the body limit applied to
/// the *decoded* size: inflation stops as soon as the output passes the limit, so a small body that would
/// decode to gigabytes (a "gzip bomb") costs at most the limit in memory and little time.
enum RequestBodyDecoding {
    /// `body` decoded from `coding`, at most `limit` bytes.
    ///
    /// A gzip body may hold several members (RFC 1952 §2.2); they are decoded one after the other.
    ///
    /// - Throws: ``InflateStream/Failure/tooLarge`` past `limit`, ``InflateStream/Failure/malformed`` for
    ///   bytes that are not the coding's or that end early.
    /// - Complexity: O(*n* + *m*) in the encoded and decoded sizes, *m* ≤ `limit`.
    static func decode(_ body: [UInt8], coding: ContentCoding, limit: Int) throws(InflateStream.Failure) -> [UInt8] {
        guard coding != .identity else {
            guard body.count <= limit else { throw .tooLarge }
            return body
        }
        let stream = InflateStream(coding == .gzip ? .gzip : .zlib)
        let output = try stream.decompress(body, limit: limit)
        guard stream.isFinished else { throw .malformed }
        return output
    }
}

/// A decompressing stream (gzip or zlib format) over zlib: bytes in as they arrive, what they decode to
/// out at once. What a client of a compressed event stream reads with; the server decodes request
/// bodies with it.
final class InflateStream {
    enum Failure: Error, Equatable {
        /// The decoded bytes are more than the limit.
        case tooLarge
        /// The bytes are not valid data of the format.
        case malformed
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private let format: DeflateStream.Format
    private var decoded = 0
    /// The stream ended (its trailer checked), with no bytes after it.
    private(set) var isFinished = false

    init(_ format: DeflateStream.Format) {
        self.format = format
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let result = quire_z_inflate_init(stream, format.windowBits)
        precondition(result == Z_OK, "zlib inflateInit2 failed: \(result)")
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    /// What `input` decodes to, given everything before it; at most `limit` bytes in all since the start.
    func decompress(_ input: [UInt8], limit: Int = .max) throws(Failure) -> [UInt8] {
        var output: [UInt8] = []
        let failure: Failure? = input.withUnsafeBufferPointer { input in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.pointee.avail_in = UInt32(input.count)
            defer {
                stream.pointee.next_in = nil
                stream.pointee.next_out = nil
            }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64 << 10) { scratch in
                while true {
                    stream.pointee.next_out = scratch.baseAddress
                    stream.pointee.avail_out = UInt32(scratch.count)
                    let result = inflate(stream, Z_NO_FLUSH)
                    let produced = scratch.count - Int(stream.pointee.avail_out)
                    decoded += produced
                    // Past the limit nothing more is kept, and nothing more is inflated.
                    if decoded > limit { return .tooLarge }
                    output.append(contentsOf: scratch[..<produced])
                    switch result {
                    case Z_STREAM_END:
                        isFinished = true
                        if stream.pointee.avail_in == 0 { return nil }
                        // Another gzip member may follow; anything else after the end is not the format's.
                        guard format == .gzip, inflateReset(stream) == Z_OK else { return .malformed }
                        isFinished = false
                    case Z_OK:
                        // Room left over: everything decodable from the input so far is out.
                        if stream.pointee.avail_out > 0 && stream.pointee.avail_in == 0 { return nil }
                    case Z_BUF_ERROR:
                        // No progress: every input byte is taken, and more is needed.
                        return stream.pointee.avail_in == 0 ? nil : .malformed
                    default:
                        return .malformed
                    }
                }
            }
        }
        if let failure { throw failure }
        return output
    }
}
