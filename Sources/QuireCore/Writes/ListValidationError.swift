/// A list document or an op that breaks the data model's rules, with the exact path of the offending
/// value (`sections[2].items[17].id`). The HTTP layer answers it as `422 invalid-list` (with `path`) or,
/// wrapped in ``OpError``, as `422 invalid-op` (with `opIndex`).
public struct ListValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of rule was broken.
    public enum Kind: String, Sendable, Hashable {
        case missingField, wrongType, emptyValue, invalidCharacter, tooLong, tooLarge, tooDeep, tooMany, unknownMember
        case duplicateID, unknownID, invalidAnchor, invalidOp
    }

    /// The kind of problem.
    public let kind: Kind
    /// Where: a path from the document's (or the op's) root, like `sections[2].items[17].id`.
    public let path: String
    /// A short human explanation.
    public let reason: String

    public init(_ kind: Kind, path: String, reason: String) {
        self.kind = kind
        self.path = path
        self.reason = reason
    }

    public var description: String { path.isEmpty ? reason : "\(path): \(reason)" }
}

/// An op batch that cannot be applied: the index of the first failing op and what is wrong in it
/// (`path` is relative to that op, like `items[0].id`). No op of the batch is applied.
public struct OpError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Index of the failing op in the batch; `nil` when the batch itself is refused (no `ops` array, no op in
    /// it, a member beside it).
    public let opIndex: Int?
    /// The problem, with a path inside the op (or the batch).
    public let error: ListValidationError

    public init(opIndex: Int?, error: ListValidationError) {
        self.opIndex = opIndex
        self.error = error
    }

    /// The path inside the op.
    public var path: String { error.path }

    public var description: String {
        guard let opIndex else { return error.description }
        return "ops[\(opIndex)]\(error.path.isEmpty ? "" : ".")\(error.description)"
    }
}

/// A path being walked while decoding, rendered only when an error needs it.
struct JSONPath {
    enum Component {
        case key(String)
        case index(Int)
    }

    var components: [Component] = []

    mutating func push(_ key: String) { components.append(.key(key)) }
    mutating func push(_ index: Int) { components.append(.index(index)) }
    mutating func pop() { components.removeLast() }

    var rendered: String {
        var text = ""
        for component in components {
            switch component {
            case .key(let key): text += text.isEmpty ? key : ".\(key)"
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    func error(_ kind: ListValidationError.Kind, _ reason: String) -> ListValidationError {
        ListValidationError(kind, path: rendered, reason: reason)
    }

    func error(_ kind: ListValidationError.Kind, at key: String, _ reason: String) -> ListValidationError {
        var path = self
        path.push(key)
        return path.error(kind, reason)
    }
}
