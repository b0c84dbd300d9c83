public import QuireCore

/// A column's value as JSON, from PostgreSQL's text output of it (what pgoutput sends and `COPY … TO` writes):
///
/// - smallint, integer, bigint: a number (`.int`).
/// - real, double precision, numeric: a number written exactly as PostgreSQL printed it (`.decimal`): `1.50`,
///   `1e+100`. Their `NaN`, `Infinity` and `-Infinity` are the strings PostgreSQL printed: JSON has no such number,
///   and `null` would read as SQL's NULL.
/// - boolean: `true` or `false`.
/// - json, jsonb: the JSON itself, its numbers as they are written.
/// - arrays of these: arrays, each element by its type; nested arrays nested.
/// - NULL: `null`.
/// - anything else (text, uuid, enums, timestamps, dates, intervals, …): the text, a string.
///
/// A text that does not read as its type says (which PostgreSQL never prints) is kept as a string, so that a row is
/// never lost to it.
public enum PostgresValue {
    /// The JSON of `text`, a value of type `type`; `nil` text is SQL's NULL.
    ///
    /// - Complexity: O(*n*) in the length of `text`.
    public static func json(_ text: String?, type: PostgresType) -> JSONValue {
        guard let text else { return .null }
        switch type.kind {
        case .integer:
            return Int64(text).map(JSONValue.int) ?? .string(text)
        case .decimal:
            return JSONDecimal(text).map(JSONValue.decimal) ?? .string(text)
        case .boolean:
            switch text {
            case "t", "true": return .bool(true)
            case "f", "false": return .bool(false)
            default: return .string(text)
            }
        case .json:
            return (try? parser.parse(text)) ?? .string(text)
        case .array(let element):
            guard let array = PostgresArray.parse(text, delimiter: element.arrayDelimiter) else {
                return .string(text)
            }
            return json(array, element: element)
        case .text, .paddedText, .date, .time, .timetz, .timestamp, .timestamptz, .other:
            return .string(text)
        }
    }

    /// Numbers kept as their text; JSON nested deeper than 512 levels is kept as its text, a string.
    private static let parser = JSONParser(maxDepth: 512, keepsNumberText: true)

    private static func json(_ array: PostgresArray, element: PostgresType) -> JSONValue {
        switch array {
        case .null: .null
        case .element(let text): json(text, type: element)
        case .array(let elements): .array(elements.map { json($0, element: element) })
        }
    }
}
