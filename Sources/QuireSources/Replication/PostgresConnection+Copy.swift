internal import CLibPQ

extension PostgresConnection {
    /// Streams the rows of `select` through `COPY (select) TO STDOUT`, one call of `row` per row as it arrives:
    /// a table of any size is copied in the memory of one row.
    ///
    /// Values are PostgreSQL's text output of them, as ``query(_:_:)`` gives them (`nil` for SQL's null);
    /// ``describe(_:)`` gives the columns' names and types. When `row` throws, the copy is cancelled and the
    /// connection is ready for the next command.
    ///
    /// - Parameters:
    ///   - select: a `SELECT` (or `TABLE name`, `VALUES …`): what `COPY ( … )` takes.
    ///   - row: called with each row's values, in the order the server sends them.
    /// - Returns: the number of rows copied.
    /// - Throws: ``PostgresError`` when the copy fails, or what `row` throws.
    /// - Complexity: O(*n*) in the size of the rows, in the memory of the largest one.
    @discardableResult
    public func copy(_ select: String, row: ([String?]) throws -> Void) throws -> Int {
        let context = "copying \(select)"
        let started = try connection.run("COPY (\(select)) TO STDOUT", context: context)
        guard started.isCopyOut else {
            throw PostgresError.protocolViolation("COPY did not start", context: context, url: connection.url)
        }
        var count = 0
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let length = PQgetCopyData(connection.handle, &buffer, 0)
            if length == -1 { break }
            guard length > 0, let buffer else {
                try connection.finishResults(context: context)
                throw connection.connectionError(context, .connectionFailure)
            }
            let values = CopyText.row(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
            PQfreemem(buffer)
            do {
                try row(values)
            } catch {
                cancelCopy()
                throw error
            }
            count += 1
        }
        try connection.finishResults(context: context)
        return count
    }

    /// Asks the server to cancel the copy in progress (`PQcancel`, on a connection of its own), then reads and drops
    /// what it sent until it stopped, so that the connection is ready for the next command.
    private func cancelCopy() {
        if let cancel = PQgetCancel(connection.handle) {
            var message = [CChar](repeating: 0, count: 256)
            _ = PQcancel(cancel, &message, Int32(message.count))
            PQfreeCancel(cancel)
        }
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let length = PQgetCopyData(connection.handle, &buffer, 0)
            if let buffer { PQfreemem(buffer) }
            if length < 0 { break }
        }
        // The cancellation's own error (57014), or the copy's success when it ended first.
        _ = try? connection.finishResults(context: "cancelling a copy")
    }
}

/// COPY's text format (the manual's "COPY", "Text Format"): a row is its fields separated by tabs and ended by a
/// newline; `\N` alone is SQL's null; a backslash escapes the next character (`\t`, `\n`, `\\`, `\b`, `\f`, `\r`,
/// `\v`, octal `\123`, hexadecimal `\x41`, any other character as itself).
enum CopyText {
    /// The values of one row.
    ///
    /// - Complexity: O(*n*) in the length of the row.
    static func row(_ bytes: UnsafeRawBufferPointer) -> [String?] {
        var end = bytes.count
        if end > 0 && bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        var values: [String?] = []
        var field: [UInt8] = []
        var fieldStart = 0
        var index = 0
        while index <= end {
            guard index < end, bytes[index] != UInt8(ascii: "\t") else {
                let isNull =
                    index - fieldStart == 2 && bytes[fieldStart] == UInt8(ascii: "\\")
                    && bytes[fieldStart + 1] == UInt8(ascii: "N")
                values.append(isNull ? nil : String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
                index += 1
                fieldStart = index
                continue
            }
            let byte = bytes[index]
            index += 1
            guard byte == UInt8(ascii: "\\"), index < end else {
                field.append(byte)
                continue
            }
            field.append(escaped(bytes, end: end, at: &index))
        }
        return values
    }

    /// The byte the escape after a backslash stands for; `index` moves past the escape.
    private static func escaped(_ bytes: UnsafeRawBufferPointer, end: Int, at index: inout Int) -> UInt8 {
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "b"): return 8
        case UInt8(ascii: "f"): return 12
        case UInt8(ascii: "n"): return 10
        case UInt8(ascii: "r"): return 13
        case UInt8(ascii: "t"): return 9
        case UInt8(ascii: "v"): return 11
        case UInt8(ascii: "0")...UInt8(ascii: "7"):
            var value = UInt32(byte - UInt8(ascii: "0"))
            var digits = 1
            while digits < 3, index < end, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(bytes[index]) {
                value = value << 3 | UInt32(bytes[index] - UInt8(ascii: "0"))
                index += 1
                digits += 1
            }
            return UInt8(truncatingIfNeeded: value)
        case UInt8(ascii: "x"):
            var value: UInt8 = 0
            var digits = 0
            while digits < 2, index < end, let nibble = hexValue(bytes[index]) {
                value = value << 4 | nibble
                index += 1
                digits += 1
            }
            return digits == 0 ? byte : value
        default:
            return byte
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
