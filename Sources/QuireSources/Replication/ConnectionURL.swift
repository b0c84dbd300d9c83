/// What of a connection URL may be shown: the URL with its password replaced (by `***` unless told otherwise), and
/// the password's forms to remove from any text libpq returns. The one redaction of a connection URL: a source's
/// URL in `quire config` and in messages is redacted by it too (``SourceURL/redactingPassword(of:)``).
///
/// libpq takes URLs (`postgres://user:password@host:port/db?option=value`, the scheme `postgresql://` too) and
/// key/value strings (`host=db password=secret`); the password may sit in the user part or in a `password` option
/// of either. A malformed URL is read the same way (libpq's message about it may quote the part it could not
/// read): the user part ends at the last `@` before the options, so a password holding an unescaped `@` or `/` is
/// still found whole.
public struct ConnectionURL: Sendable {
    /// The URL with every password replaced by the placeholder: what a description or a log line shows.
    public let redacted: String
    /// What replaces a password.
    private let placeholder: String
    /// The password's forms that texts must not show: as written, percent-decoded, and its pieces between
    /// separators (libpq may have split a malformed URL there).
    private let secrets: [String]

    /// - Parameters:
    ///   - url: a libpq connection URL or key/value string.
    ///   - placeholder: what replaces a password.
    /// - Complexity: O(*n*) in the length of `url`.
    public init(_ url: String, placeholder: String = "***") {
        self.placeholder = placeholder
        var passwords: [Substring] = []
        if let scheme = ["postgresql://", "postgres://"].first(where: { url.hasPrefix($0) }) {
            redacted = Self.redactURL(url, schemeLength: scheme.count, placeholder: placeholder, passwords: &passwords)
        } else {
            redacted = Self.redactKeyValues(url, placeholder: placeholder, passwords: &passwords)
        }
        var secrets: Set<String> = []
        for password in passwords where !password.isEmpty {
            secrets.insert(String(password))
            secrets.insert(Self.percentDecoded(password))
            for piece in password.split(whereSeparator: { "@/:?#&=".contains($0) }) where piece.count >= 3 {
                secrets.insert(String(piece))
            }
        }
        // Longest first, so that a password is replaced whole before any piece of it.
        self.secrets = secrets.filter { !$0.isEmpty }.sorted { $0.count > $1.count }
    }

    /// `text` with every form of the password replaced by the placeholder.
    ///
    /// - Complexity: O(*n* × *s*), *n* the length of `text` and *s* the number of the password's forms (a few).
    public func redact(_ text: String) -> String {
        secrets.reduce(text) { text, secret in text.replacing(secret, with: placeholder) }
    }

    private static func redactURL(
        _ url: String, schemeLength: Int, placeholder: String, passwords: inout [Substring]
    ) -> String {
        let afterScheme = url.index(url.startIndex, offsetBy: schemeLength)
        let queryStart = url[afterScheme...].firstIndex(of: "?") ?? url.endIndex
        var result = String(url[..<afterScheme])
        var rest = url[afterScheme..<queryStart]
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            if let colon = userInfo.firstIndex(of: ":") {
                passwords.append(userInfo[userInfo.index(after: colon)...])
                result += userInfo[...colon] + placeholder
            } else {
                result += userInfo
            }
            rest = rest[at...]
        }
        result += rest
        guard queryStart < url.endIndex else { return result }
        let items = url[url.index(after: queryStart)...].split(separator: "&", omittingEmptySubsequences: false)
        let redactedItems = items.map { item -> String in
            // Any case: libpq refuses a key it does not know, but the text is shown before it is tried.
            guard let equals = item.firstIndex(of: "="), item[..<equals].lowercased() == "password" else {
                return String(item)
            }
            passwords.append(item[item.index(after: equals)...])
            return String(item[...equals]) + placeholder
        }
        return result + "?" + redactedItems.joined(separator: "&")
    }

    /// A key/value string with `password`'s value replaced: the value is a word, or quoted with `'` and `\` escapes.
    private static func redactKeyValues(_ text: String, placeholder: String, passwords: inout [Substring]) -> String {
        var result = ""
        var index = text.startIndex
        while let match = text[index...].firstRange(of: "password") {
            result += text[index..<match.upperBound]
            var cursor = match.upperBound
            let isKeyword = match.lowerBound == text.startIndex || text[text.index(before: match.lowerBound)] == " "
            while cursor < text.endIndex, text[cursor] == " " { cursor = text.index(after: cursor) }
            guard isKeyword, cursor < text.endIndex, text[cursor] == "=" else {
                index = match.upperBound
                continue
            }
            cursor = text.index(after: cursor)
            while cursor < text.endIndex, text[cursor] == " " { cursor = text.index(after: cursor) }
            let valueStart = cursor
            if cursor < text.endIndex, text[cursor] == "'" {
                cursor = text.index(after: cursor)
                while cursor < text.endIndex, text[cursor] != "'" {
                    if text[cursor] == "\\", text.index(after: cursor) < text.endIndex {
                        cursor = text.index(after: cursor)
                    }
                    cursor = text.index(after: cursor)
                }
                if cursor < text.endIndex { cursor = text.index(after: cursor) }
            } else {
                while cursor < text.endIndex, text[cursor] != " " { cursor = text.index(after: cursor) }
            }
            passwords.append(text[valueStart..<cursor])
            passwords.append(text[valueStart..<cursor].trimmingQuotes)
            result += text[match.upperBound..<valueStart] + placeholder
            index = cursor
        }
        return result + text[index...]
    }

    /// `%XX` escapes decoded, anything else (a malformed escape too) kept as it is.
    private static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
                let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Substring {
    /// The text between a pair of single quotes around it, or itself.
    fileprivate var trimmingQuotes: Substring {
        count >= 2 && first == "'" && last == "'" ? dropFirst().dropLast() : self
    }
}
