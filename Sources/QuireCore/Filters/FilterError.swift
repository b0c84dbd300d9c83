/// A filter the contract refuses (openapi.yaml), with the part that is wrong. The HTTP layer answers it as
/// `400 invalid-filter` with ``description`` as the problem's `detail`, so the description names the part
/// (`all[2].any[0]: "contains" must be a string of 1 to 64 bytes`) and reads the same on every run.
public struct FilterError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of rule was broken.
    public enum Kind: String, Sendable, Hashable {
        /// The `filter=` text is not JSON.
        case invalidJSON
        /// A filter that is not an object, or an object that is neither a term nor `all`, `any` or `not`.
        case notAFilter
        /// A member the grammar does not have, or one beside `all`, `any` or `not`.
        case unknownMember
        /// A term without `field`, or without an operator.
        case missingMember
        /// A term with more than one operator.
        case tooManyOperators
        /// A `field` that is not `id`, `type` or `data.<key>…`.
        case invalidField
        /// An operator's value of the wrong kind or size, or `all`/`any` without a filter.
        case invalidValue
        /// More than ``ListFilter/maxTerms`` terms.
        case tooManyTerms
        /// More than ``ListFilter/maxLevels`` levels of `all`, `any` and `not`.
        case tooDeep
    }

    /// The kind of problem.
    public let kind: Kind
    /// Where: a path from the filter's root, like `all[2].any[0]` or `all[0].not`; empty for the whole filter.
    public let path: String
    /// A short explanation that names the member at fault.
    public let reason: String

    /// An error at `path`.
    public init(_ kind: Kind, path: String, reason: String) {
        self.kind = kind
        self.path = path
        self.reason = reason
    }

    /// `path: reason`, or the reason alone for the whole filter.
    public var description: String { path.isEmpty ? reason : "\(path): \(reason)" }
}
