import Foundation

/// A session answer (of a call, a long poll or an event), from the generated `ChangesAnswer`: where it
/// applies (`fromSeq`), what it brings, and the window's ends after it.
struct Answer: Sendable {
    enum Body: Sendable {
        case batch(BatchChanges)
        case sequential([SequentialOp])
        case reset(ClientWindow)
    }

    let session: String
    let seq: Int
    let fromSeq: Int
    let body: Body
    let hasPrev: Bool
    let hasNext: Bool

    init(_ answer: Components.Schemas.ChangesAnswer) {
        switch answer {
        case .DiffAnswer(let diff): self.init(diff)
        case .ResetAnswer(let reset): self.init(reset)
        }
    }

    init(_ diff: Components.Schemas.DiffAnswer) {
        switch diff {
        case .batch(let answer):
            self.init(
                session: answer.session, seq: answer.seq, fromSeq: answer.fromSeq,
                body: .batch(BatchChanges(answer.changes)), page: answer.page)
        case .sequential(let answer):
            self.init(
                session: answer.session, seq: answer.seq, fromSeq: answer.fromSeq,
                body: .sequential(answer.changes.map(SequentialOp.init)), page: answer.page)
        }
    }

    init(_ reset: Components.Schemas.ResetAnswer) {
        self.init(
            session: reset.session, seq: reset.seq, fromSeq: reset.fromSeq,
            body: .reset(ClientWindow(sections: reset.reset.sections.map(ClientSection.init))), page: reset.page)
    }

    private init(session: String, seq: Int, fromSeq: Int, body: Body, page: Components.Schemas.WindowInfo) {
        self.session = session
        self.seq = seq
        self.fromSeq = fromSeq
        self.body = body
        hasPrev = page.hasPrev
        hasNext = page.hasNext
    }
}

// MARK: Applying answers in seq order

extension QuireSession {
    /// Applies an answer (of a call, a long poll or an event) to the window of its `fromSeq`, in `seq`
    /// order: an answer whose base has not arrived yet waits for it; one already passed is dropped (the
    /// window has moved on past it); one that cannot be placed or applied resets the session.
    func apply(_ answer: Answer) async throws {
        guard answer.session == sessionID else { return }
        guard answer.seq > seq else { return }  // already applied, or superseded
        let from = answer.fromSeq
        if case .reset(let window) = answer.body {
            publish(.reset(window), window: window, seq: answer.seq, hasPrev: answer.hasPrev, hasNext: answer.hasNext)
            return try await drainWaiting()
        }
        guard let base = windows.last(where: { $0.seq == from })?.window else {
            if from > seq {
                waiting[from] = answer  // its base is on its way (the answer of a call, or an event)
                statistics.pending = waiting.count
                return
            }
            return try await resetAfterMisfit()  // a base this client no longer holds
        }
        var next = base
        let change: SessionUpdate.Change
        do {
            switch answer.body {
            case .batch(let batch):
                try next.apply(batch)
                change = .changes(batch)
            case .sequential(let ops):
                try next.apply(ops)
                change = .sequential(ops)
            case .reset: return
            }
        } catch is ChangeError {
            return try await resetAfterMisfit()
        }
        // Applied to the window the app shows: pass the change on; to the one before: the app reloads.
        publish(
            from == seq ? change : .reset(next), window: next, seq: answer.seq, hasPrev: answer.hasPrev,
            hasNext: answer.hasNext)
        try await drainWaiting()
    }

    /// An answer this client cannot apply: start again from a fresh first page.
    private func resetAfterMisfit() async throws {
        statistics.resets += 1
        try await call(.reset(nil))
    }

    private func drainWaiting() async throws {
        waiting = waiting.filter { $0.key >= seq }
        let next = waiting.removeValue(forKey: seq)
        statistics.pending = waiting.count
        if let next { try await apply(next) }
    }

    func publish(_ change: SessionUpdate.Change, window: ClientWindow, seq: Int, hasPrev: Bool, hasNext: Bool) {
        self.window = window
        self.seq = seq
        self.hasPrev = hasPrev
        self.hasNext = hasNext
        windows.append((seq, window))
        if windows.count > 4 { windows.removeFirst(windows.count - 4) }
        continuation.yield(
            SessionUpdate(change: change, window: window, seq: seq, hasPrev: hasPrev, hasNext: hasNext))
    }
}
