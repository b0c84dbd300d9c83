internal import CLibPQ

// The one place where libpq's results and messages become Swift errors. Everything libpq says passes through
// `ConnectionURL.redact`, so that no error shows a password even when libpq quotes a malformed URL.

extension PostgresError {
    /// The error a failed result reports, from its fields (`PQresultErrorField`): the server's SQLSTATE, severity,
    /// message, detail and hint; a result without a SQLSTATE is libpq's own (the connection was lost while it
    /// waited: ``SQLState/connectionFailure``).
    init(result: OpaquePointer, context: String, url: ConnectionURL) {
        func field(_ code: Int32) -> String? {
            PQresultErrorField(result, code).map { url.redact(String(cString: $0)) }
        }
        let message = field(quire_pq_diag_message) ?? Self.trimmed(PQresultErrorMessage(result), url: url)
        self.init(
            sqlState: field(quire_pq_diag_sqlstate).map(SQLState.init(rawValue:)) ?? .connectionFailure,
            severity: field(quire_pq_diag_severity),
            message: message.isEmpty ? "no message" : message,
            detail: field(quire_pq_diag_detail), hint: field(quire_pq_diag_hint), context: url.redact(context))
    }

    /// A failure the connection reports without a result (`PQerrorMessage`): a connection that could not be made
    /// or was lost. Connections are made with verbose errors, so when the server refused the connection (a wrong
    /// password) its message names the SQLSTATE (`FATAL:  28P01: password authentication failed …`), which is
    /// taken out of the message into ``sqlState``; otherwise the error is libpq's own, given `fallback`.
    init(connection: OpaquePointer?, fallback: SQLState, context: String, url: ConnectionURL) {
        var message = connection.map { Self.trimmed(PQerrorMessage($0), url: url) } ?? ""
        var sqlState = fallback
        var severity: String?
        if let found = Self.verboseCode(in: message) {
            sqlState = found.sqlState
            severity = found.severity
            message.removeSubrange(found.range)
        }
        self.init(
            sqlState: sqlState, severity: severity, message: message.isEmpty ? "no message" : message,
            context: url.redact(context))
    }

    /// A reply whose shape its command does not have (IDENTIFY_SYSTEM without its row, an XLogData frame cut
    /// short): ``SQLState/protocolViolation``.
    static func protocolViolation(_ message: String, context: String, url: ConnectionURL) -> PostgresError {
        PostgresError(sqlState: .protocolViolation, message: message, context: url.redact(context))
    }

    /// libpq's text without its trailing newline and the `LOCATION:` lines verbose errors add (the server's source
    /// file and line), the password removed.
    private static func trimmed(_ text: UnsafePointer<CChar>?, url: ConnectionURL) -> String {
        guard let text else { return "" }
        let lines = String(cString: text).split(separator: "\n").filter { !$0.hasPrefix("LOCATION:") }
        return url.redact(lines.joined(separator: "\n").trimmingSpaces)
    }

    /// The first `SEVERITY:  CODE: ` of a verbose message: its range (the code and what follows it, to remove) and
    /// its parts.
    private static func verboseCode(
        in message: String
    ) -> (range: Range<String.Index>, sqlState: SQLState, severity: String)? {
        for severity in ["FATAL", "ERROR", "PANIC"] {
            guard let marker = message.firstRange(of: severity + ":  ") else { continue }
            let codeEnd = message.index(marker.upperBound, offsetBy: 5, limitedBy: message.endIndex)
            guard let codeEnd, codeEnd < message.endIndex, message[codeEnd] == ":" else { continue }
            let code = message[marker.upperBound..<codeEnd]
            guard code.allSatisfy({ $0.isASCII && ($0.isNumber || $0.isUppercase) }) else { continue }
            var removedEnd = message.index(after: codeEnd)
            if removedEnd < message.endIndex, message[removedEnd] == " " {
                removedEnd = message.index(after: removedEnd)
            }
            return (marker.upperBound..<removedEnd, SQLState(rawValue: String(code)), severity)
        }
        return nil
    }
}

extension StringProtocol {
    /// Without the spaces and newlines at either end.
    var trimmingSpaces: String {
        let characters = self.drop { $0 == " " || $0 == "\n" }
        var end = characters.endIndex
        while end > characters.startIndex,
            characters[characters.index(before: end)] == " "
                || characters[characters.index(before: end)] == "\n"
        {
            end = characters.index(before: end)
        }
        return String(characters[..<end])
    }
}
