internal import CZlib

/// A compressing stream in gzip, zlib (`deflate`) or raw deflate format, over zlib: what an event stream
/// compresses with, one event at a time, flushing after each so that the client can decode it at once.
///
/// ```swift
/// let stream = DeflateStream(.gzip)
/// send(stream.compress(event1))   // a complete, decodable prefix of the gzip stream
/// send(stream.compress(event2))
/// send(stream.finish())           // the last block and the gzip trailer
/// ```
///
/// Not `Sendable`: one stream belongs to one connection, used by one thread at a time.
public final class DeflateStream {
    /// The framing around the deflate data.
    public enum Format: Sendable {
        /// RFC 1952, `Content-Encoding: gzip`.
        case gzip
        /// RFC 1950, `Content-Encoding: deflate`.
        case zlib
        /// RFC 1951 alone, without header or trailer (spliced into the other two).
        case raw

        var windowBits: Int32 {
            switch self {
            case .gzip: 15 + 16
            case .zlib: 15
            case .raw: -15
            }
        }
    }

    /// What to do after the input of one call.
    public enum Flush: Sendable {
        /// Nothing: output may wait in zlib's buffers (best compression).
        case none
        /// `Z_SYNC_FLUSH`: everything so far is output, ending on a byte boundary.
        case sync
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private var isFinished = false

    /// - Parameters:
    ///   - format: gzip, zlib or raw deflate.
    ///   - level: zlib's compression level, 1 (fastest) to 9 (smallest).
    public init(_ format: Format, level: Int = 6) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let result = quire_z_deflate_init(stream, Int32(min(max(level, 1), 9)), format.windowBits, 8)
        // Only Z_MEM_ERROR is possible with these valid arguments: no way to go on without memory.
        precondition(result == Z_OK, "zlib deflateInit2 failed: \(result)")
    }

    /// A stream for a response's `Content-Encoding` (`gzip` or `deflate`).
    ///
    /// - Precondition: `coding` is not `identity`.
    public convenience init(coding: ContentCoding, level: Int = 6) {
        precondition(coding != .identity, "identity needs no compressor")
        self.init(coding == .gzip ? .gzip : .zlib, level: level)
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    /// Compresses `bytes` and returns what is ready to send: with `.sync` (the default) everything given
    /// so far, decodable without waiting for more.
    ///
    /// - Precondition: ``finish()`` was not called.
    /// - Complexity: O(*n*) in the size of `bytes`.
    public func compress(_ bytes: some Collection<UInt8>, flush: Flush = .sync) -> [UInt8] {
        precondition(!isFinished, "compress after finish")
        var output: [UInt8] = []
        run(bytes, mode: flush == .sync ? Z_SYNC_FLUSH : Z_NO_FLUSH, into: &output)
        return output
    }

    /// Ends the stream: the last block and, in gzip and zlib format, the trailer (checksum and length).
    public func finish() -> [UInt8] {
        guard !isFinished else { return [] }
        isFinished = true
        var output: [UInt8] = []
        run(EmptyCollection<UInt8>(), mode: Z_FINISH, into: &output)
        return output
    }

    private func run(_ bytes: some Collection<UInt8>, mode: Int32, into output: inout [UInt8]) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            deflateAll(buffer, mode: mode, into: &output)
        }
        if done == nil {
            Array(bytes).withUnsafeBufferPointer { deflateAll($0, mode: mode, into: &output) }
        }
    }

    private func deflateAll(_ input: UnsafeBufferPointer<UInt8>, mode: Int32, into output: inout [UInt8]) {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
        stream.pointee.avail_in = UInt32(input.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.next_out = nil
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32 << 10) { scratch in
            while true {
                stream.pointee.next_out = scratch.baseAddress
                stream.pointee.avail_out = UInt32(scratch.count)
                let result = deflate(stream, mode)
                output.append(contentsOf: scratch[..<(scratch.count - Int(stream.pointee.avail_out))])
                if result == Z_STREAM_END { return }
                precondition(result == Z_OK || result == Z_BUF_ERROR, "zlib deflate failed: \(result)")
                // Done when zlib left room: all input taken and the flush complete.
                if stream.pointee.avail_out > 0 && stream.pointee.avail_in == 0 { return }
            }
        }
    }
}

/// One-shot compression and the checksums the splicing of ``SharedBody`` needs.
public enum Compression {
    /// `bytes` compressed whole in `coding` (`gzip` or `deflate`).
    ///
    /// - Complexity: O(*n*).
    public static func compress(_ bytes: some Collection<UInt8>, as coding: ContentCoding, level: Int = 6) -> [UInt8] {
        guard coding != .identity else { return Array(bytes) }
        let stream = DeflateStream(coding: coding, level: level)
        var output = stream.compress(bytes, flush: .none)
        output += stream.finish()
        return output
    }

    static func crc32(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        return UInt32(CZlib.crc32(UInt(crc), base.assumingMemoryBound(to: UInt8.self), UInt32(bytes.count)))
    }

    static func adler32(_ bytes: UnsafeRawBufferPointer, continuing adler: UInt32 = 1) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return adler }
        return UInt32(CZlib.adler32(UInt(adler), base.assumingMemoryBound(to: UInt8.self), UInt32(bytes.count)))
    }

    static func crc32Combine(_ first: UInt32, _ second: UInt32, secondLength: Int) -> UInt32 {
        UInt32(crc32_combine(UInt(first), UInt(second), secondLength))
    }

    static func adler32Combine(_ first: UInt32, _ second: UInt32, secondLength: Int) -> UInt32 {
        UInt32(adler32_combine(UInt(first), UInt(second), secondLength))
    }
}
