import QuireSources

extension CapturedPgOutput {
    /// The messages of `step`, decoded, in their order.
    static func decoded(_ step: String) throws -> [PgOutput.Message] {
        try messages.filter { $0.step == step }.map { try PgOutput.Message(decoding: $0.bytes) }
    }

    /// The captured message `index` of `step`.
    static func message(_ step: String, _ index: Int) -> Message? {
        messages.first { $0.step == step && $0.index == index }
    }
}

extension CapturedPgOutput.Message {
    /// The message's bytes.
    var bytes: [UInt8] { hexBytes(hex) }
}

/// The bytes of a hexadecimal text (white space ignored).
func hexBytes(_ hex: String) -> [UInt8] {
    let digits = hex.unicodeScalars.filter { !$0.properties.isWhitespace }.map(Character.init)
    return stride(from: 0, to: digits.count - 1, by: 2).compactMap { UInt8(String(digits[$0...$0 + 1]), radix: 16) }
}

extension PgOutput.Message {
    /// The one-letter kind of the message, as pgoutput writes it.
    var kind: Character {
        switch self {
        case .begin: "B"
        case .commit: "C"
        case .origin: "O"
        case .relation: "R"
        case .type: "Y"
        case .insert: "I"
        case .update: "U"
        case .delete: "D"
        case .truncate: "T"
        case .message: "M"
        }
    }

    var begin: PgOutput.Begin? { if case .begin(let value) = self { value } else { nil } }
    var commit: PgOutput.Commit? { if case .commit(let value) = self { value } else { nil } }
    var relation: PgOutput.Relation? { if case .relation(let value) = self { value } else { nil } }
    var insert: PgOutput.Insert? { if case .insert(let value) = self { value } else { nil } }
    var update: PgOutput.Update? { if case .update(let value) = self { value } else { nil } }
    var delete: PgOutput.Delete? { if case .delete(let value) = self { value } else { nil } }
    var truncate: PgOutput.Truncate? { if case .truncate(let value) = self { value } else { nil } }
    var logicalMessage: PgOutput.LogicalMessage? { if case .message(let value) = self { value } else { nil } }
}

extension PgOutput.Tuple {
    /// The values as strings: text as itself, `nil` for null, `"(unchanged)"` for an unchanged TOASTed value,
    /// `"(binary n)"` for n bytes of binary.
    var strings: [String?] {
        map { value in
            switch value {
            case .null: nil
            case .unchangedToast: "(unchanged)"
            case .text: value.string
            case .binary(let bytes): "(binary \(bytes.count))"
            }
        }
    }
}
