import Configuration
import Foundation
import QuireSources

/// The configuration as YAML, for `quire config`: every key of ``Settings/keys`` in its order, nested as
/// config/quire.yaml nests it, so that the two can be compared line by line.
extension Settings {
    /// What replaces a secret's value (a token, the JWT secret, the TLS key's password, the password in
    /// `storage.url`). An empty secret is printed as it is, `""`: that it is unset is no secret.
    static let redacted = "<redacted>"

    /// The values `input` gives for every key, as YAML, after the checks `quire serve` makes of them, then its
    /// sources (`sources: []` when there are none).
    ///
    /// - Parameter header: the comment printed first, without its `# `.
    /// - Throws: ``SettingsError`` naming a key whose value `quire serve` would refuse, or `SourceConfigurationError`
    ///   naming a source and its key.
    static func yaml(_ input: Input, header: String) throws -> String {
        let settings = try Settings(input)
        let reader = input.reader
        var lines = ["# \(header)"]
        var open: [Substring] = []
        for (key, value) in keys {
            let path = key.split(separator: ".")
            let sections = Array(path.dropLast())
            // The sections this key shares with the one before stay open; a new top-level one follows a blank line.
            let kept = zip(open, sections).prefix { $0.0 == $0.1 }.count
            if kept == 0 { lines.append("") }
            for depth in kept..<sections.count {
                lines.append("\(String(repeating: "  ", count: depth))\(sections[depth]):")
            }
            open = sections
            let text = try Self.text(of: key, like: value, in: reader)
            lines.append("\(String(repeating: "  ", count: sections.count))\(path[path.count - 1]): \(text)")
        }
        lines.append("")
        lines += yaml(settings.sources)
        return lines.joined(separator: "\n") + "\n"
    }

    /// `sources:` as config/quire.yaml's example writes it, every key of each source, its URL's password redacted.
    static func yaml(_ sources: [SourceConfiguration]) -> [String] {
        guard !sources.isEmpty else { return ["sources: []"] }
        var lines = ["sources:"]
        for source in sources {
            let values: [String] = [
                yamlScalar(source.name), yamlScalar(source.redactedURL), yamlScalar(source.table.description),
                yamlScalar(source.list.description), yamlScalar(source.section), source.sectionOrder.rawValue,
                flow(source.order.map(\.description)), yamlScalar(source.type.description), flow(source.data),
            ]
            for (index, (key, value)) in zip(SourceConfiguration.keys, values).enumerated() {
                lines.append("\(index == 0 ? "  - " : "    ")\(key): \(value)")
            }
        }
        return lines
    }

    /// `[a, "b c"]`.
    private static func flow(_ texts: [String]) -> String {
        "[" + texts.map(yamlScalar).joined(separator: ", ") + "]"
    }

    /// The value of `key` as YAML, read as the type of its default (`like`).
    private static func text(of key: String, like value: ConfigContent, in reader: ConfigReader) throws -> String {
        let configKey = ConfigKey(key)
        let isSecret = secretKeys.contains(key)
        switch value {
        case .int:
            return String(try reader.requiredInt(forKey: configKey, isSecret: isSecret))
        case .double:
            return String(try reader.requiredDouble(forKey: configKey, isSecret: isSecret))
        case .bool:
            return String(try reader.requiredBool(forKey: configKey, isSecret: isSecret))
        case .stringArray:
            return flow(try reader.requiredStringArray(forKey: configKey, isSecret: isSecret))
        default:
            let text = try reader.requiredString(forKey: configKey, isSecret: isSecret)
            // The URL names the database an operator checks; only its password is secret.
            if key == "storage.url" { return yamlScalar(redactingPassword(of: text)) }
            return isSecret && !text.isEmpty ? redacted : yamlScalar(text)
        }
    }

    /// `url` with the password of its user information (`postgres://user:password@host/db`) and of a `password`
    /// query parameter replaced by ``redacted``: the one redaction of a URL, which sources' URLs share.
    static func redactingPassword(of url: String) -> String {
        SourceURL.redactingPassword(of: url)
    }

    /// `text` as a YAML scalar: plain when YAML reads it back as this string (`127.0.0.1`, `data/quire.sqlite`,
    /// `info`), else double-quoted (`""`, `:memory:`, a GnuTLS priority string).
    static func yamlScalar(_ text: String) -> String {
        isPlain(text) ? text : quoted(text)
    }

    /// Whether `text` may be written as a plain scalar: letters, digits and `._/-` only, not starting with `-`, and
    /// neither a number (starting with a digit, only digits, dots and slashes that do not make one: an address) nor
    /// a word YAML reads as a boolean, null or a float.
    private static func isPlain(_ text: String) -> Bool {
        let digits: ClosedRange<Unicode.Scalar> = "0"..."9"
        guard let first = text.unicodeScalars.first, first != "-" else { return false }
        if digits.contains(first) {
            return Double(text) == nil
                && text.unicodeScalars.allSatisfy { digits.contains($0) || $0 == "." || $0 == "/" }
        }
        let reserved: Set<String> = ["true", "false", "yes", "no", "on", "off", "y", "n", "null", ".inf", ".nan"]
        return !reserved.contains(text.lowercased())
            && text.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || digits.contains($0) || "._/-".unicodeScalars.contains($0))
            }
    }

    /// `text` double-quoted, with YAML's escapes.
    private static func quoted(_ text: String) -> String {
        var quoted = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\t": quoted += "\\t"
            case _ where scalar.value < 0x20:
                quoted += (scalar.value < 0x10 ? "\\x0" : "\\x") + String(scalar.value, radix: 16)
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}
