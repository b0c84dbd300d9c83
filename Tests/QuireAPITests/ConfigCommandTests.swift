import Configuration
import Foundation
import Testing

@testable import quire

/// `quire config`: the settings `quire serve` would run with, as YAML, and the shipped file held to its defaults.
@Suite("quire config: the effective configuration as YAML")
struct ConfigCommandTests {
    /// The leaves of YAML written as config/quire.yaml and `quire config` write it (two spaces a level, one key a
    /// line, scalars plain or double-quoted), as dotted key paths with their values unquoted, in their order.
    static func leaves(_ yaml: String) throws -> [(key: String, value: String)] {
        var leaves: [(key: String, value: String)] = []
        var sections: [String] = []
        for line in yaml.split(separator: "\n") {
            let text = line.drop { $0 == " " }
            guard !text.isEmpty, !text.hasPrefix("#") else { continue }
            let depth = (line.count - text.count) / 2
            let colon = try #require(text.firstIndex(of: ":"), "not a key: \(line)")
            let key = String(text[..<colon])
            let rest = text[text.index(after: colon)...].drop { $0 == " " }
            sections = Array(sections.prefix(depth))
            try #require(sections.count == depth, "indented past its section: \(line)")
            if rest.isEmpty {
                sections.append(key)
            } else {
                let value = try scalar(rest)
                leaves.append((key: (sections + [key]).joined(separator: "."), value: value))
            }
        }
        return leaves
    }

    /// A plain scalar (up to a comment) or a double-quoted one, unescaped.
    static func scalar(_ text: Substring) throws -> String {
        guard text.first == "\"" else {
            return String(text.split(separator: " #", maxSplits: 1).first ?? text)
        }
        var value = ""
        var escaped = false
        for character in text.dropFirst() {
            if escaped {
                value.append(character == "n" ? "\n" : character == "t" ? "\t" : character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                return value
            } else {
                value.append(character)
            }
        }
        Issue.record("an unterminated string: \(text)")
        return value
    }

    /// What `quire config` prints for these sources.
    static func printed(
        configFile: String? = nil, environment: [String: String] = [:], flags: [String: ConfigContent] = [:]
    ) async throws -> String {
        let reader = try await Settings.reader(configFile: configFile, environment: environment, flags: flags)
        return try Settings.yaml(reader, header: "test")
    }

    @Test("config/quire.yaml holds every key of `quire config --defaults`, with its value, in its order, and no other")
    func shippedFileIsTheDefaults() async throws {
        let file = try Self.leaves(try String(contentsOfFile: SettingsTests.configFile, encoding: .utf8))
        let defaults = try Self.leaves(try await Self.printed())
        let (fileKeys, defaultKeys) = (Set(file.map(\.key)), Set(defaults.map(\.key)))
        #expect(file.count == fileKeys.count, "config/quire.yaml sets a key twice")
        #expect(
            fileKeys.subtracting(defaultKeys).isEmpty,
            "in config/quire.yaml, not in quire config --defaults: \(fileKeys.subtracting(defaultKeys).sorted())")
        #expect(
            defaultKeys.subtracting(fileKeys).isEmpty,
            "in quire config --defaults, not in config/quire.yaml: \(defaultKeys.subtracting(fileKeys).sorted())")
        let fileValues = Dictionary(file.map { ($0.key, $0.value) }) { first, _ in first }
        for (key, value) in defaults where fileKeys.contains(key) {
            #expect(
                fileValues[key] == value,
                "\(key): config/quire.yaml says \(fileValues[key] ?? ""), the default is \(value)")
        }
        #expect(file.map(\.key) == defaults.map(\.key), "config/quire.yaml lists the keys in another order")
        #expect(defaults.map(\.key) == Settings.keys.map(\.key))
    }

    @Test("a file's, the environment's and a flag's values show; secrets as <redacted>, of the URL its password alone")
    func effectiveConfiguration() async throws {
        let path = try SettingsTests.file(
            """
            server:
              tls:
                keyPassword: tls-password
            auth:
              jwt:
                secret: jwt-secret-0123456789abcdef0123456789
                issuer: https://id.example.test
            storage:
              url: postgres://quire:hunter2@db.example:5432/lists
            """)
        let printed = try await Self.printed(
            configFile: path, environment: ["QUIRE_LOG_LEVEL": "debug", "QUIRE_AUTH_READ_TOKEN": "reader-secret"],
            flags: [
                "server.port": .int(9000), "auth.writeToken": .string("writer-secret"),
                "storage.path": .string(":memory:"),
            ])
        let values = Dictionary(try Self.leaves(printed).map { ($0.key, $0.value) }) { first, _ in first }
        #expect(values["server.port"] == "9000")
        #expect(values["log.level"] == "debug")
        #expect(values["auth.jwt.issuer"] == "https://id.example.test")
        #expect(values["storage.path"] == ":memory:" && printed.contains(#"  path: ":memory:""#))
        for key in ["auth.writeToken", "auth.readToken", "auth.jwt.secret", "server.tls.keyPassword"] {
            #expect(values[key] == "<redacted>", "\(key)")
        }
        #expect(values["storage.url"] == "postgres://quire:<redacted>@db.example:5432/lists")
        for secret in ["tls-password", "jwt-secret", "hunter2", "reader-secret", "writer-secret"] {
            #expect(!printed.contains(secret), "\(secret) printed")
        }
        #expect(values["auth.jwt.audience"] == "", "an unset secret-free value is empty")
        #expect(try Self.leaves(try await Self.printed()).first { $0.key == "auth.writeToken" }?.value == "")
    }

    @Test("a value quire serve would refuse is refused, naming its key")
    func refused() async throws {
        await #expect(throws: SettingsError.self) {
            _ = try await Self.printed(environment: ["QUIRE_LOG_FORMAT": "xml"])
        }
    }

    @Test("the password of a URL's user information, and nothing else, is redacted")
    func redactedURL() {
        #expect(Settings.redactingPassword(of: "postgres://u:p@h:1/d") == "postgres://u:<redacted>@h:1/d")
        #expect(Settings.redactingPassword(of: "postgres://u:p:q@h/d?x=1") == "postgres://u:<redacted>@h/d?x=1")
        #expect(Settings.redactingPassword(of: "postgres://u@h/d") == "postgres://u@h/d")
        #expect(Settings.redactingPassword(of: "postgres://h/d?user=u:p@x") == "postgres://h/d?user=u:p@x")
        #expect(Settings.redactingPassword(of: "") == "")
    }

    @Test("strings are plain when YAML reads them back as strings, else quoted")
    func scalars() {
        for plain in ["127.0.0.1", "data/quire.sqlite", "info", "sqlite"] {
            #expect(Settings.yamlScalar(plain) == plain)
        }
        for quoted in ["", ":memory:", "true", "No", "null", "12", "1.5", "-x", "a b", "x: y", "0x1F", ".inf"] {
            #expect(Settings.yamlScalar(quoted).hasPrefix("\""), "\(quoted)")
        }
        #expect(Settings.yamlScalar(#"a"b\c"#) == #""a\"b\\c""#)
    }
}
