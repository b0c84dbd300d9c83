import Configuration
import Foundation
import QuireCore
import SystemPackage
import Yams

/// The configuration file (`--config`): its keys, read by swift-configuration as any other source of keys, and its
/// `sources:` list, kept apart. swift-configuration's YAML holds scalars and lists of scalars, and refuses the whole
/// file at a list of mappings, which `sources:` is; so the file is read once with Yams, `sources:` taken out, and the
/// rest handed to swift-configuration's own YAML snapshot, which reads it as it reads any file.
struct SettingsFile: ConfigProvider {
    /// The value of `sources:` (strings for scalars, arrays for sequences, objects for mappings), `nil` when the file
    /// has none.
    let sources: JSONValue?
    private let keys: YAMLSnapshot

    /// Reads the file at `path`.
    ///
    /// - Throws: the file's read or parse error.
    init(path: String) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let root = try Yams.compose(yaml: String(decoding: bytes, as: UTF8.self))
        var rest = Array(bytes)
        if case .mapping(var mapping)? = root, let sources = mapping["sources"] {
            self.sources = Self.json(sources)
            mapping["sources"] = nil
            rest = Array(try Yams.serialize(node: .mapping(mapping)).utf8)
        } else {
            sources = nil
        }
        keys = try YAMLSnapshot(data: rest.span.bytes, providerName: "file \(path)", parsingOptions: .default)
    }

    /// A YAML node as JSON: every scalar a string (the keys of a source are strings), a plain `null` or `~` null.
    static func json(_ node: Node) -> JSONValue {
        switch node {
        case .scalar(let scalar):
            return scalar.style == .plain && node.null != nil ? .null : .string(scalar.string)
        case .sequence(let sequence):
            return .array(sequence.map(json))
        case .mapping(let mapping):
            return .object(
                Dictionary(mapping.map { (($0.key.string ?? "\($0.key)"), json($0.value)) }) { _, last in last })
        case .alias:
            return .null
        }
    }

    var providerName: String { keys.providerName }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try keys.value(forKey: key, type: type)
    }

    // The protocol's async requirements and their handlers run on their caller's executor (swift-configuration is
    // built with NonisolatedNonsendingByDefault), so these must say so to match them.
    nonisolated(nonsending) func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws
        -> LookupResult
    {
        try value(forKey: key, type: type)
    }

    nonisolated(nonsending) func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey, type: ConfigType,
        updatesHandler:
            nonisolated(nonsending) (
                _ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>
            ) async throws -> Return
    ) async throws -> Return {
        try await watchValueFromValue(forKey: key, type: type, updatesHandler: updatesHandler)
    }

    func snapshot() -> any ConfigSnapshot { keys }

    nonisolated(nonsending) func watchSnapshot<Return: ~Copyable>(
        updatesHandler:
            nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>)
            async throws -> Return
    ) async throws -> Return {
        try await watchSnapshotFromSnapshot(updatesHandler: updatesHandler)
    }
}
