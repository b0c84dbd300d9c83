/// Names of tables and columns as the configuration writes them: as they are, or in double quotes (`"sent at"`,
/// `"a ""b"""` for `a "b"`) when they hold a space, a dot or a double quote. Nothing is folded to lower case: the
/// name is the catalog's.
enum Identifier {
    /// PostgreSQL keeps 63 bytes of a name (NAMEDATALEN - 1) and cuts longer ones silently: a longer name in the
    /// configuration could never match the catalog's.
    static let maximumBytes = 63

    /// Whether `name` is written as it is: not empty, and no whitespace, `.`, `"`, `{` or `}`.
    static func isBare(_ name: some StringProtocol) -> Bool {
        !name.isEmpty
            && !name.unicodeScalars.contains { $0.properties.isWhitespace || ".\"{}".unicodeScalars.contains($0) }
    }

    /// `name`, in double quotes when it is not bare.
    static func quotedIfNeeded(_ name: String) -> String {
        isBare(name) ? name : sqlQuoted(name)
    }

    /// `name` in double quotes, a quote doubled: SQL's quoted identifier.
    static func sqlQuoted(_ name: String) -> String {
        var quoted = "\""
        for character in name {
            quoted.append(character)
            if character == "\"" { quoted.append(character) }
        }
        return quoted + "\""
    }

    /// Reads one name at the start of `text`, bare (up to whitespace, `.` or the end) or quoted.
    ///
    /// - Returns: the name and what follows it; `nil` when there is no name there (an empty one, an unterminated
    ///   quote).
    static func read(_ text: Substring) -> (name: String, rest: Substring)? {
        guard text.first == "\"" else {
            let name = text.prefix { !$0.isWhitespace && $0 != "." && $0 != "\"" }
            return name.isEmpty ? nil : (String(name), text[name.endIndex...])
        }
        var name = ""
        var index = text.index(after: text.startIndex)
        while index < text.endIndex {
            let character = text[index]
            index = text.index(after: index)
            guard character == "\"" else {
                name.append(character)
                continue
            }
            guard index < text.endIndex, text[index] == "\"" else {
                return name.isEmpty ? nil : (name, text[index...])
            }
            name.append("\"")
            index = text.index(after: index)
        }
        return nil
    }

    /// Why `name` cannot be a PostgreSQL name, or `nil` when it can.
    static func problem(_ name: String) -> String? {
        if name.isEmpty { return "is empty" }
        if name.utf8.count > maximumBytes {
            return "is longer than \(maximumBytes) bytes, which PostgreSQL cuts its names to"
        }
        if name.utf8.contains(0) { return "holds the NUL character" }
        return nil
    }
}
