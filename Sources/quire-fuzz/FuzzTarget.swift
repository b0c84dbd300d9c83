import QuireCore

/// The parsers that read bytes a client sent, each with the property its fuzz target checks on every input
/// it accepts. A refused input is fine (that is the parser's job); a crash, a sanitizer report or a broken
/// property is a finding.
enum FuzzTarget: String, CaseIterable, Sendable {
    /// The JSON reader: what it accepts, written back and read again, writes the same bytes.
    case json
    /// A list document (`PUT /v1/lists/{list}`): what validates, built and written back, builds the same list.
    case document
    /// Operations (`POST /v1/lists/{list}/ops`) applied to a list with sections, children and headers: the
    /// list they produce writes a document that builds the same list again.
    case ops
    /// Page cursors (`after` / `before`, opaque strings from clients): one that decodes encodes to a cursor
    /// that decodes the same, and pages the list without trapping.
    case cursor
    /// Session ids (a path segment): checked for form only, never trapping.
    case sessionID = "session-id"

    /// A finding that is not a crash: the property the target checks does not hold.
    struct Broken: Error, CustomStringConvertible {
        let description: String
    }

    func run(_ bytes: UnsafeRawBufferPointer) throws(Broken) {
        switch self {
        case .json: try Self.json(bytes)
        case .document: try Self.document(bytes)
        case .ops: try Self.ops(bytes)
        case .cursor: try Self.cursor(bytes)
        case .sessionID: _ = SessionID.isWellFormed(String(decoding: bytes, as: UTF8.self))
        }
    }

    private static let parser = JSONParser()

    private static func json(_ bytes: UnsafeRawBufferPointer) throws(Broken) {
        guard let value = try? parser.parse(bytes) else { return }
        let written = JSONWriter.encode(value)
        guard let again = try? parser.parse(written) else { throw Broken(description: "its own output does not parse") }
        guard JSONWriter.encode(again) == written else { throw Broken(description: "written twice, different bytes") }
    }

    private static func document(_ bytes: UnsafeRawBufferPointer) throws(Broken) {
        guard let value = try? parser.parse(bytes), let list = try? ListVersion(document: value) else { return }
        try roundTrip(list)
    }

    private static func ops(_ bytes: UnsafeRawBufferPointer) throws(Broken) {
        guard let value = try? parser.parse(bytes), let next = try? base.applying(opsDocument: value) else { return }
        try roundTrip(next)
    }

    private static func cursor(_ bytes: UnsafeRawBufferPointer) throws(Broken) {
        guard let cursor = PageCursor(encoded: String(decoding: bytes, as: UTF8.self)) else { return }
        guard PageCursor(encoded: cursor.encoded) == cursor else {
            throw Broken(description: "a decoded cursor does not survive encoding")
        }
        _ = cursor.page(in: base, limit: 50)
    }

    /// A list's document builds a list whose document is the same.
    private static func roundTrip(_ list: ListVersion) throws(Broken) {
        let document = list.documentBytes
        guard let value = try? parser.parse(document) else { throw Broken(description: "its document does not parse") }
        do {
            let rebuilt = try ListVersion(document: value)
            guard rebuilt.documentBytes == document else {
                throw Broken(description: "its document builds a different list")
            }
        } catch let error as Broken {
            throw error
        } catch {
            throw Broken(description: "its document does not validate: \(error)")
        }
    }

    /// The list operations and cursors are tried on: two sections with headers and footers, items with
    /// children, so that every kind of op has something to act on.
    static let base: ListVersion = {
        let text = """
            {"sections":[
              {"id":"s1","header":{"type":"h","data":{"title":"One"}},"footer":{"type":"f","data":{}},
               "items":[{"id":"a","type":"row","data":{"n":1}},
                        {"id":"b","type":"row","data":{"n":2},"children":[{"id":"b1","type":"row","data":{}},{"id":"b2","type":"row","data":{}}]},
                        {"id":"c","type":"row","data":{"n":3}}]},
              {"id":"s2","items":[{"id":"d","type":"row","data":{}},{"id":"e","type":"card","data":{"x":[1,2]}}]}
            ]}
            """
        do {
            return try ListVersion(document: try JSONParser().parse(text))
        } catch {
            fatalError("the fuzz targets' base list does not build: \(error)")
        }
    }()
}
