import Configuration
import Foundation
import QuireAPI
import QuireHTTP
import QuireSources
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
        let input = try await Settings.input(configFile: configFile, environment: environment, flags: flags)
        return try Settings.yaml(input, header: "test")
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
        #expect(defaults.map(\.key) == Settings.keys.map(\.key) + ["sources"])
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
        #expect(Settings.redactingPassword(of: "postgres://h/d?password=p") == "postgres://h/d?password=<redacted>")
    }

    /// The contract's example source, and one with its URL in the environment, a quoted table name and a type column.
    static let sourcesFile = """
        server:
          port: 9100
        sources:
          - name: inbox
            url: postgres://quire:hunter2@127.0.0.1:5432/app
            table: public.messages
            list: "inbox-{owner}"
            section: folder
            sectionOrder: asc
            order: ["sent_at desc", "id"]
            type: message
            data: [sender, subject, unread, sent_at]
          - name: sent
            table: '"Sent Items"'
            list: sent
            section: day
            type: "{kind}"
        """

    @Test("sources are read from the file beside its keys, and printed with every key, passwords redacted")
    func sources() async throws {
        let path = try SettingsTests.file(Self.sourcesFile)
        let environment = ["QUIRE_SOURCES_SENT_URL": "postgresql://app:hunter3@db/app?password=hunter4"]
        let settings = try await Settings.load(configFile: path, environment: environment, flags: [:])
        #expect(settings.service.http.port == 9100)
        #expect(settings.sources.map(\.name) == ["inbox", "sent"])
        #expect(settings.sources[1].url == "postgresql://app:hunter3@db/app?password=hunter4")
        #expect(settings.sources[1].table == TableName(name: "Sent Items"))
        let printed = try await Self.printed(configFile: path, environment: environment)
        let tail = printed[printed.range(of: "\nsources:\n")!.lowerBound...]
        #expect(
            tail == """

                sources:
                  - name: inbox
                    url: "postgres://quire:<redacted>@127.0.0.1:5432/app"
                    table: public.messages
                    list: "inbox-{owner}"
                    section: folder
                    sectionOrder: asc
                    order: ["sent_at desc", id]
                    type: message
                    data: [sender, subject, unread, sent_at]
                  - name: sent
                    url: "postgresql://app:<redacted>@db/app?password=<redacted>"
                    table: "public.\\"Sent Items\\""
                    list: sent
                    section: day
                    sectionOrder: asc
                    order: []
                    type: "{kind}"
                    data: []

                """)
        for secret in ["hunter2", "hunter3", "hunter4"] {
            #expect(!printed.contains(secret), "\(secret) printed")
        }
        #expect(settings.sources.map(\.name) == ["inbox", "sent"])
        #expect(try await Self.printed().hasSuffix("\nsources: []\n"))
    }

    @Test("a source that cannot work is refused, naming the source and the key; its password never shows")
    func refusedSources() async throws {
        let cases: [(String, String)] = [
            ("order: [\"sent_at sideways\"]", #"sources[inbox].order: "sent_at sideways" is not "column [asc|desc]""#),
            (
                "colour: red",
                "sources[inbox].colour: unknown key; a source's keys are name, url, table, list, section, sectionOrder, order, type, data"
            ),
            ("table: a.b.c", "sources[inbox].table: \"a.b.c\" is not \"schema.table\""),
            ("name: Inbox", "sources[#1].name: \"Inbox\" is not [a-z0-9_]{1,32}"),
        ]
        for (line, message) in cases {
            var lines = [
                "name: inbox", "url: postgres://quire:hunter2@db/app", "table: messages", "list: inbox",
                "section: folder", "type: message",
            ]
            let key = line.prefix { $0 != ":" }
            lines.removeAll { $0.hasPrefix("\(key):") }
            lines.append(line)
            let path = try SettingsTests.file("sources:\n  - " + lines.joined(separator: "\n    ") + "\n")
            do {
                _ = try await Self.printed(configFile: path)
                Issue.record("accepted: \(line)")
            } catch let error as SourceConfigurationError {
                #expect(error.description.hasPrefix(message), "\(error)")
                #expect(!error.description.contains("hunter2"))
            }
        }
        let notAList = try SettingsTests.file("sources:\n  inbox: {}\n")
        await #expect(throws: SourceConfigurationError.self) { _ = try await Self.printed(configFile: notAList) }
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
