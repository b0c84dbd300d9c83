extension PgOutput {
    /// The values of a row, one per column of its ``Relation``, in the relation's order.
    public struct Tuple: Hashable, Sendable, RandomAccessCollection, ExpressibleByArrayLiteral {
        /// The values.
        public var values: [Value]

        public init(_ values: [Value]) {
            self.values = values
        }

        public init(arrayLiteral values: Value...) {
            self.values = values
        }

        public var startIndex: Int { values.startIndex }
        public var endIndex: Int { values.endIndex }
        public subscript(position: Int) -> Value { values[position] }
    }

    /// One column's value in a ``Tuple``.
    public enum Value: Hashable, Sendable {
        /// `n`: SQL's null.
        case null
        /// `u`: a TOASTed value the change did not touch, which the log does not repeat: the value is the one the
        /// row had.
        case unchangedToast
        /// `t`: PostgreSQL's text output of the value (UTF-8: the stream's client encoding).
        case text([UInt8])
        /// `b`: the value's binary form (only when the stream asked for `binary`).
        case binary([UInt8])

        /// A text value of `string`.
        public static func text(_ string: String) -> Value {
            .text(Array(string.utf8))
        }

        /// A text value's string, or nil for the other kinds and for bytes that are not UTF-8.
        ///
        /// - Complexity: O(*n*) in the value's length.
        public var string: String? {
            guard case .text(let bytes) = self else { return nil }
            return String(validating: bytes, as: UTF8.self)
        }
    }
}
