import QuireCore
import QuireHTTP

/// The JSON bodies of pages, sessions and changes (openapi.yaml), assembled from the items' stored
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

    /// A new session's first answer: its own members, then its window's page members (`page`, shared by every
    /// session opened on that window).
    static func sessionPageParts(_ session: Session, page: SharedBody) -> [BodyPart] {
        [.bytes(sessionOwnMembers(session)), .shared(page)]
    }

    /// `{"session":…,"seq":…,"format":…,` of a new session's first answer.
    private static func sessionOwnMembers(_ session: Session) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(96)
        out.appendLiteral(#"{"session":"#)
        JSONWriter.writeString(session.id, into: &out)
        out.appendLiteral(#","seq":"#)
        JSONWriter.writeInteger(session.seq, into: &out)
        out.appendLiteral(#","format":""#)
        switch session.format {
        case .batch: out.appendLiteral("batch")
        case .sequential: out.appendLiteral("sequential")
        }
        out.appendLiteral(#"","#)
        return out
    }

    /// What follows a new session's own members in its first answer: the window's page members and the
    /// closing brace. The same for every session on that window.
    static func sessionPageContent(list: String, window: Window) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160 + window.count * 128)
        writeWindowPageMembers(list: list, window: window, into: &out)
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
        // The bytes of the content, encoded once for every session given the same answer (the result type named:
        // inferred through the optional chain it was `SharedBody?`, and nothing was ever shared).
        let shared = answer.shared?.encoded { content -> SharedBody in
            var out: [UInt8] = []
            out.reserveCapacity(4096)  // a page of changes: grown from empty, it was copied five or six times
            writeContent(content, list: ViewName.list(of: session.list), format: session.format, into: &out)
            return SharedBody(out)
        }
        var out: [UInt8] = []
        out.reserveCapacity(shared == nil ? 512 : 160)  // an answer with nothing new is about 300 bytes
        out.appendLiteral(#"{"session":"#)
        JSONWriter.writeString(session.id, into: &out)
        out.appendLiteral(#","seq":"#)
        JSONWriter.writeInteger(answer.seq, into: &out)
        out.appendLiteral(#","fromSeq":"#)
        JSONWriter.writeInteger(answer.fromSeq, into: &out)
        out.appendLiteral(#","from":"#)
        JSONWriter.writeInteger(answer.from, into: &out)
        out.appendLiteral(#","version":"#)
        JSONWriter.writeInteger(window.version.version, into: &out)
        out.appendLiteral(#","format":""#)
        switch session.format {
        case .batch: out.appendLiteral("batch")
        case .sequential: out.appendLiteral("sequential")
        }
        out.appendLiteral(#"","#)
        var parts: [BodyPart] = []
        if let shared {
            parts = [.bytes(out), .shared(shared)]
            out = []
        } else {
            writeContent(answer.content, list: ViewName.list(of: session.list), format: session.format, into: &out)
        }
        out.appendLiteral(#","page":{"hasPrev":"#)
        if window.hasPrev { out.appendLiteral("true") } else { out.appendLiteral("false") }
        out.appendLiteral(#","hasNext":"#)
        if window.hasNext { out.appendLiteral("true") } else { out.appendLiteral("false") }
        out.appendLiteral(#","total":"#)
        JSONWriter.writeInteger(window.total, into: &out)
        out.appendLiteral("}}")
        parts.append(.bytes(out))
        return parts
    }

    /// Appends `"changes":…` or `"reset":{…}` of an answer.
    private static func writeContent(
        _ content: SessionAnswer.Content, list: String, format: ChangeFormat, into out: inout [UInt8]
    ) {
        switch content {
        case .changes(let changes):
            out.appendLiteral(#""changes":"#)
            switch format {
            case .batch: changes.encodeBatch(into: &out)
            case .sequential: changes.encodeSequential(into: &out)
            }
        case .unchanged(let window):
            out.appendLiteral(#""changes":"#)
            switch format {
            case .batch: writeEmptyBatch(counts: window.sectionCounts, into: &out)
            case .sequential: out.appendLiteral("[]")
            }
        case .reset(let window):
            out.appendLiteral(#""reset":{"#)
            writeWindowPageMembers(list: list, window: window, into: &out)
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A batch that changes nothing, with the window's `counts`.
    static func writeEmptyBatch(counts: [Int], into out: inout [UInt8]) {
        out.appendLiteral(#"{"deleteSections":[],"insertSections":[],"moveSections":[],"deleteItems":[],"#)
        out.appendLiteral(#""insertItems":[],"moveItems":[],"counts":["#)
        for (index, count) in counts.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeInteger(count, into: &out)
        }
        out.appendLiteral(#"],"updateItems":[],"updateSections":[]}"#)
    }

    /// `{"list":…,"version":…}`, the answer of a write.
    static func writeResult(list: String, version: UInt64) -> [UInt8] {
        var out: [UInt8] = Array(#"{"list":"#.utf8)
        JSONWriter.writeString(list, into: &out)
        out.appendLiteral(#","version":"#)
        JSONWriter.writeInteger(version, into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// `{"lists":[{"list","version","sections","items"}…],"page":{"hasNext","next"}}`: `next` is the cursor of
    /// the next page, `null` on the last.
    static func listIndex(_ summaries: some Collection<ListSummary>, next: String?) -> [UInt8] {
        var out: [UInt8] = Array(#"{"lists":["#.utf8)
        for (index, summary) in summaries.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.appendLiteral(#"{"list":"#)
            JSONWriter.writeString(summary.name, into: &out)
            out.appendLiteral(#","version":"#)
            JSONWriter.writeInteger(summary.version, into: &out)
            out.appendLiteral(#","sections":"#)
            JSONWriter.writeInteger(summary.sections, into: &out)
            out.appendLiteral(#","items":"#)
            JSONWriter.writeInteger(summary.items, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.appendLiteral(#"],"page":{"hasNext":"#)
        if next == nil { out.appendLiteral("false") } else { out.appendLiteral("true") }
        out.appendLiteral(#","next":"#)
        writeOptionalString(next, into: &out)
        out.appendLiteral("}}")
        return out
    }

    /// `"list":…,"version":…,"sections":[…],"page":{…}` of a window: a stateless page's cursors, or
    /// `null` for a session's window (sessions page with `extend`).
    private static func writeWindowPageMembers(
        list: String, window: Window, previous: String? = nil, next: String? = nil, into out: inout [UInt8]
    ) {
        out.appendLiteral(#""list":"#)
        JSONWriter.writeString(list, into: &out)
        out.appendLiteral(#","version":"#)
        JSONWriter.writeInteger(window.version, into: &out)
        out.appendLiteral(#","sections":"#)
        window.encodeSections(into: &out)
        out.appendLiteral(#","page":{"hasPrev":"#)
        if window.hasPrev { out.appendLiteral("true") } else { out.appendLiteral("false") }
        out.appendLiteral(#","hasNext":"#)
        if window.hasNext { out.appendLiteral("true") } else { out.appendLiteral("false") }
        out.appendLiteral(#","prev":"#)
        writeOptionalString(previous, into: &out)
        out.appendLiteral(#","next":"#)
        writeOptionalString(next, into: &out)
        out.appendLiteral(#","total":"#)
        JSONWriter.writeInteger(window.total, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    private static func writeOptionalString(_ value: String?, into out: inout [UInt8]) {
        if let value {
            JSONWriter.writeString(value, into: &out)
        } else {
            out.appendLiteral("null")
        }
    }
}
