import QuireCore
import QuireHTTP

/// The JSON bodies of pages, sessions and changes (API.md §3–§5), assembled from the items' stored
/// bytes: no item is encoded per request.
enum ResponseBodies {
    /// A stateless page: `list`, `version`, `sections`, `page` with cursors.
    static func page(list: String, window: Window, previous: String?, next: String?) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + window.count * 128)
        out.append(UInt8(ascii: "{"))
        writeWindowPageMembers(list: list, window: window, previous: previous, next: next, into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// A new session's first window: the page shape plus `session` and `format`.
    static func sessionPage(_ session: Session, window: Window) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + window.count * 128)
        out.append(contentsOf: #"{"session":"#.utf8)
        JSONWriter.writeString(session.id, into: &out)
        out.append(contentsOf: #","seq":"#.utf8)
        JSONWriter.writeInteger(session.seq, into: &out)
        out.append(contentsOf: #","format":""#.utf8)
        out.append(contentsOf: session.format.rawValue.utf8)
        out.append(contentsOf: #"","#.utf8)
        writeWindowPageMembers(list: session.list, window: window, into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The answer of `changes`, `expand`, `collapse` and `reset`. The content of an answer shared by
    /// several sessions (the same window) is encoded once and copied into each session's answer; what is
    /// the session's own (`session`, `seq`, `fromSeq`, `from`, `version`, `page`) is written around it.
    static func answer(_ answer: SessionAnswer) -> [UInt8] {
        answerParts(answer).flatMap { part -> [UInt8] in
            switch part {
            case .bytes(let bytes): bytes
            case .shared(let shared): shared.bytes
            }
        }
    }

    /// The answer in parts: this session's own bytes around the content, which is shared (encoded once,
    /// and compressed at most once, see ``SharedBody``) when the answer is shared by several sessions.
    static func answerParts(_ answer: SessionAnswer) -> [BodyPart] {
        let session = answer.session
        let window = answer.window
        let shared = answer.shared?.encoded { content in
            var out: [UInt8] = []
            writeContent(content, list: session.list, format: session.format, into: &out)
            return SharedBody(out)
        }
        var out: [UInt8] = []
        out.reserveCapacity(shared == nil ? 512 : 160)  // an answer with nothing new is about 300 bytes
        out.append(contentsOf: #"{"session":"#.utf8)
        JSONWriter.writeString(session.id, into: &out)
        out.append(contentsOf: #","seq":"#.utf8)
        JSONWriter.writeInteger(answer.seq, into: &out)
        out.append(contentsOf: #","fromSeq":"#.utf8)
        JSONWriter.writeInteger(answer.fromSeq, into: &out)
        out.append(contentsOf: #","from":"#.utf8)
        JSONWriter.writeInteger(answer.from, into: &out)
        out.append(contentsOf: #","version":"#.utf8)
        JSONWriter.writeInteger(window.version.version, into: &out)
        out.append(contentsOf: #","format":""#.utf8)
        out.append(contentsOf: session.format.rawValue.utf8)
        out.append(contentsOf: #"","#.utf8)
        var parts: [BodyPart] = []
        if let shared {
            parts = [.bytes(out), .shared(shared)]
            out = []
        } else {
            writeContent(answer.content, list: session.list, format: session.format, into: &out)
        }
        out.append(contentsOf: #","page":{"hasPrev":"#.utf8)
        out.append(contentsOf: (window.hasPrev ? "true" : "false").utf8)
        out.append(contentsOf: #","hasNext":"#.utf8)
        out.append(contentsOf: (window.hasNext ? "true" : "false").utf8)
        out.append(contentsOf: #","total":"#.utf8)
        JSONWriter.writeInteger(window.total, into: &out)
        out.append(contentsOf: "}}".utf8)
        parts.append(.bytes(out))
        return parts
    }

    /// Appends `"changes":…` or `"reset":{…}` of an answer.
    private static func writeContent(
        _ content: SessionAnswer.Content, list: String, format: ChangeFormat, into out: inout [UInt8]
    ) {
        switch content {
        case .changes(let changes):
            out.append(contentsOf: #""changes":"#.utf8)
            switch format {
            case .batch: changes.encodeBatch(into: &out)
            case .sequential: changes.encodeSequential(into: &out)
            }
        case .unchanged(let window):
            out.append(contentsOf: #""changes":"#.utf8)
            switch format {
            case .batch: writeEmptyBatch(counts: window.sectionCounts, into: &out)
            case .sequential: out.append(contentsOf: "[]".utf8)
            }
        case .reset(let window):
            out.append(contentsOf: #""reset":{"#.utf8)
            writeWindowPageMembers(list: list, window: window, into: &out)
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A batch that changes nothing, with the window's `counts`.
    static func writeEmptyBatch(counts: [Int], into out: inout [UInt8]) {
        out.append(
            contentsOf: #"{"deleteSections":[],"insertSections":[],"moveSections":[],"deleteItems":[],"#.utf8)
        out.append(contentsOf: #""insertItems":[],"moveItems":[],"counts":["#.utf8)
        for (index, count) in counts.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeInteger(count, into: &out)
        }
        out.append(contentsOf: #"],"updateItems":[],"updateSections":[]}"#.utf8)
    }

    /// `{"list":…,"version":…}`, the answer of a write.
    static func writeResult(list: String, version: UInt64) -> [UInt8] {
        var out: [UInt8] = Array(#"{"list":"#.utf8)
        JSONWriter.writeString(list, into: &out)
        out.append(contentsOf: #","version":"#.utf8)
        JSONWriter.writeInteger(version, into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// `{"lists":[{"list","version","sections","items"}…]}`.
    static func listIndex(_ summaries: [ListRegistry.Summary]) -> [UInt8] {
        var out: [UInt8] = Array(#"{"lists":["#.utf8)
        for (index, summary) in summaries.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"list":"#.utf8)
            JSONWriter.writeString(summary.name, into: &out)
            out.append(contentsOf: #","version":"#.utf8)
            JSONWriter.writeInteger(summary.version, into: &out)
            out.append(contentsOf: #","sections":"#.utf8)
            JSONWriter.writeInteger(summary.sections, into: &out)
            out.append(contentsOf: #","items":"#.utf8)
            JSONWriter.writeInteger(summary.items, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: "]}".utf8)
        return out
    }

    /// `"list":…,"version":…,"sections":[…],"page":{…}` of a window: a stateless page's cursors, or
    /// `null` for a session's window (sessions page with `extend`).
    private static func writeWindowPageMembers(
        list: String, window: Window, previous: String? = nil, next: String? = nil, into out: inout [UInt8]
    ) {
        out.append(contentsOf: #""list":"#.utf8)
        JSONWriter.writeString(list, into: &out)
        out.append(contentsOf: #","version":"#.utf8)
        JSONWriter.writeInteger(window.version, into: &out)
        out.append(contentsOf: #","sections":"#.utf8)
        window.encodeSections(into: &out)
        out.append(contentsOf: #","page":{"hasPrev":"#.utf8)
        out.append(contentsOf: (window.hasPrev ? "true" : "false").utf8)
        out.append(contentsOf: #","hasNext":"#.utf8)
        out.append(contentsOf: (window.hasNext ? "true" : "false").utf8)
        out.append(contentsOf: #","prev":"#.utf8)
        writeOptionalString(previous, into: &out)
        out.append(contentsOf: #","next":"#.utf8)
        writeOptionalString(next, into: &out)
        out.append(contentsOf: #","total":"#.utf8)
        JSONWriter.writeInteger(window.total, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    private static func writeOptionalString(_ value: String?, into out: inout [UInt8]) {
        if let value {
            JSONWriter.writeString(value, into: &out)
        } else {
            out.append(contentsOf: "null".utf8)
        }
    }
}
