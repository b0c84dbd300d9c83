/// A write as producers send it: the whole content (`PUT`) or a batch of ops. Applied to the same version,
/// it builds a list of the same content on every instance, so a shared store logs the write itself and
/// every other instance replays it instead of reloading the list (architecture.md, "When one machine is not
/// enough").
public enum ListWrite: Sendable, Equatable {
    /// `{ "sections": [...] }`: the whole content.
    case replace(JSONValue)
    /// `{ "ops": [...] }`: applied in order, all or none.
    case ops(JSONValue)

    /// Whether the version this write makes keeps the label of every item it does not place (ops do; a
    /// replacement labels its items anew): what ``ListVersion/storageChanges(since:keepsLabels:)`` relies on.
    public var keepsLabels: Bool {
        if case .ops = self { return true }
        return false
    }

    /// The version this write makes of `previous` (`nil`: the list does not exist yet).
    ///
    /// - Throws: ``ListRegistry/WriteError`` `.invalidList`, `.invalidOp`, or `.listNotFound` for ops on a
    ///   list that does not exist; nothing is built then.
    public func apply(to previous: ListVersion?, limits: ListLimits) throws(ListRegistry.WriteError) -> ListVersion {
        switch self {
        case .replace(let document):
            do throws(ListValidationError) {
                if let previous { return try previous.replacing(with: document) }
                return try ListVersion(document: document, limits: limits)
            } catch {
                throw .invalidList(error)
            }
        case .ops(let document):
            guard let previous else { throw .listNotFound }
            do throws(OpError) {
                let ops = try ListOp.decodeBatch(document, limits: previous.limits)
                // A producer's batch holds an op or more (an empty one applied by the core is a no-op).
                guard !ops.isEmpty else {
                    throw OpError(
                        opIndex: nil,
                        error: ListValidationError(.emptyValue, path: "ops", reason: "expected at least one op"))
                }
                return try previous.applying(ops)
            } catch {
                throw .invalidOp(error)
            }
        }
    }

    /// The write as a store logs it: its kind and its canonical JSON.
    public var logged: (kind: String, body: [UInt8]) {
        switch self {
        case .replace(let document): ("replace", JSONWriter.encode(document))
        case .ops(let document): ("ops", JSONWriter.encode(document))
        }
    }

    /// A logged write read back.
    ///
    /// - Throws: ``StoredListError`` for an unknown kind or a body that is not JSON.
    public init(kind: String, body: some Collection<UInt8>) throws(StoredListError) {
        let document: JSONValue
        do {
            document = try JSONParser(maxDepth: 256).parse(body)
        } catch {
            throw StoredListError("a logged \(kind) write is not JSON: \(error)")
        }
        switch kind {
        case "replace": self = .replace(document)
        case "ops": self = .ops(document)
        default: throw StoredListError("a logged write of unknown kind \"\(kind)\"")
        }
    }
}

/// One committed change in a shared store's log: a write (or a delete) of one list, at one position of
/// the log. Positions count every commit of every list, without gaps, in commit order.
public struct LoggedChange: Sendable {
    public let position: Int64
    public let list: String
    /// The list's version after the write; for a delete, the version that was deleted.
    public let version: UInt64
    /// The write, or `nil` for a delete.
    public let write: ListWrite?
    /// When it was committed (seconds since 1970, the database's clock), for the replication lag.
    public let committedAt: Double

    public init(position: Int64, list: String, version: UInt64, write: ListWrite?, committedAt: Double) {
        self.position = position
        self.list = list
        self.version = version
        self.write = write
        self.committedAt = committedAt
    }
}

/// Thrown by a shared store's commit or delete when the stored list is not at the version the write was
/// built on: another instance committed first. The registry replays that instance's changes and builds
/// the write again.
public struct StoreConflict: Error, CustomStringConvertible, Sendable {
    public let list: String

    public init(list: String) {
        self.list = list
    }

    public var description: String { "list \"\(list)\" was written by another instance first" }
}

/// Thrown by a store whose commit was sent but not answered (the connection failed or timed out while
/// committing): the write may or may not have been made. The registry keeps its previous version; a shared
/// store's change feed brings the write in if it was made.
public struct StoreOutcomeUnknown: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
