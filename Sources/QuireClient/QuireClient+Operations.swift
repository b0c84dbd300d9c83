import Foundation
import OpenAPIRuntime

/// The session operations of the generated client, with their answers reduced to what the session loop
/// acts on: the decoded `200`/`201` body, or a ``Refusal`` (status, problem type, `Retry-After`).

/// An answer other than success: its status and what its problem document says.
struct Refusal: Error, Sendable {
    let status: Int
    /// The problem type's last path component (`session-not-found`), if the body was a problem document.
    let problem: String?
    let detail: String
    /// `Retry-After` in seconds (`429`, `503`).
    let retryAfter: Double?

    init(status: Int, type: String?, detail: String?, retryAfter: String? = nil) {
        self.status = status
        problem = type.flatMap { $0.split(separator: "/").last.map(String.init) }
        self.detail = detail ?? ""
        self.retryAfter = retryAfter.flatMap(Double.init)
    }

    init(_ status: Int, _ problem: Components.Schemas.Problem?) {
        self.init(status: status, type: problem?._type, detail: problem?.detail)
    }

    init(_ response: Components.Responses.InvalidRequest) { self.init(400, try? response.body.applicationProblemJson) }
    init(_ response: Components.Responses.BadBody) { self.init(400, try? response.body.applicationProblemJson) }
    init(_ response: Components.Responses.BadSessionRequest) {
        self.init(400, try? response.body.applicationProblemJson)
    }
    init(_ response: Components.Responses.Unauthorized) { self.init(401, try? response.body.applicationProblemJson) }
    init(_ response: Components.Responses.Forbidden) { self.init(403, try? response.body.applicationProblemJson) }
    init(_ response: Components.Responses.ListNotFound) { self.init(404, try? response.body.applicationProblemJson) }
    init(_ response: Components.Responses.SessionNotFound) {
        self.init(404, try? response.body.applicationProblemJson)
    }
    init(_ response: Components.Responses.UnsupportedMediaType) {
        self.init(415, try? response.body.applicationProblemJson)
    }

    init(_ response: Components.Responses.SinceMismatch) {
        let problem = try? response.body.applicationProblemJson
        self.init(status: 409, type: problem?._type.rawValue, detail: problem?.detail)
    }

    init(_ response: Components.Responses.PayloadTooLarge) {
        let problem = try? response.body.applicationProblemJson
        self.init(status: 413, type: problem?._type.rawValue, detail: problem?.detail)
    }

    init(_ response: Components.Responses.Internal) {
        let problem = try? response.body.applicationProblemJson
        self.init(status: 500, type: problem?._type.rawValue, detail: problem?.detail)
    }

    init(_ response: Components.Responses.Overloaded) {
        let problem = try? response.body.applicationProblemJson
        self.init(
            status: 503, type: problem?._type, detail: problem?.detail, retryAfter: response.headers.retryAfter)
    }

    init(_ response: Components.Responses.RateLimited) {
        let problem = try? response.body.applicationProblemJson
        self.init(
            status: 429, type: problem?._type, detail: problem?.detail, retryAfter: response.headers.retryAfter)
    }

    /// A refusal to wait out and send the same request again: `503` (starting, draining, a limit of the
    /// server's) or `429` (the client's rate limit), both with `Retry-After`.
    var isRetryLater: Bool { status == 503 || status == 429 }

    init(undocumented status: Int) {
        self.init(status: status, type: nil, detail: "an answer openapi.yaml does not document")
    }

    var error: QuireClientError {
        QuireClientError(status: status, problem: problem, description: "HTTP \(status): \(detail)")
    }
}

/// A decoded answer, or why there is none.
enum Reply<Value: Sendable>: Sendable {
    case ok(Value)
    case refused(Refusal)
}

extension QuireClient {
    /// `POST /v1/lists/{list}/sessions`.
    func createSession(list: String, _ request: Components.Schemas.SessionCreateRequest) async throws
        -> Reply<Components.Schemas.SessionPage>
    {
        switch try await api.createSession(path: .init(list: list), body: .json(request)) {
        case .created(let created): return .ok(try created.body.json)
        case .badRequest(let response): return .refused(Refusal(response))
        case .unauthorized(let response): return .refused(Refusal(response))
        case .forbidden(let response): return .refused(Refusal(response))
        case .notFound(let response): return .refused(Refusal(response))
        case .contentTooLarge(let response): return .refused(Refusal(response))
        case .unsupportedMediaType(let response): return .refused(Refusal(response))
        case .tooManyRequests(let response): return .refused(Refusal(response))
        case .internalServerError(let response): return .refused(Refusal(response))
        case .serviceUnavailable(let response): return .refused(Refusal(response))
        case .undocumented(let status, _): return .refused(Refusal(undocumented: status))
        }
    }

    /// `GET /v1/sessions/{id}/changes?seq=…` (with `extend`/`limit`, or `wait` for a long poll).
    func changes(session id: String, _ query: Operations.GetSessionChanges.Input.Query) async throws
        -> Reply<Components.Schemas.ChangesAnswer>
    {
        switch try await api.getSessionChanges(path: .init(id: id), query: query) {
        case .ok(let ok): return .ok(try ok.body.json)
        case .badRequest(let response): return .refused(Refusal(response))
        case .unauthorized(let response): return .refused(Refusal(response))
        case .forbidden(let response): return .refused(Refusal(response))
        case .notFound(let response): return .refused(Refusal(response))
        case .conflict(let response): return .refused(Refusal(response))
        case .tooManyRequests(let response): return .refused(Refusal(response))
        case .internalServerError(let response): return .refused(Refusal(response))
        case .serviceUnavailable(let response): return .refused(Refusal(response))
        case .undocumented(let status, _): return .refused(Refusal(undocumented: status))
        }
    }

    /// `POST /v1/sessions/{id}/expand` or `/collapse`.
    func expand(session id: String, _ request: Components.Schemas.ExpandRequest, expanding: Bool) async throws
        -> Reply<Components.Schemas.ChangesAnswer>
    {
        if expanding {
            switch try await api.expandSessionItem(path: .init(id: id), body: .json(request)) {
            case .ok(let ok): return .ok(try ok.body.json)
            case .badRequest(let response): return .refused(Refusal(response))
            case .unauthorized(let response): return .refused(Refusal(response))
            case .forbidden(let response): return .refused(Refusal(response))
            case .notFound(let response): return .refused(Refusal(response))
            case .conflict(let response): return .refused(Refusal(response))
            case .contentTooLarge(let response): return .refused(Refusal(response))
            case .unsupportedMediaType(let response): return .refused(Refusal(response))
            case .tooManyRequests(let response): return .refused(Refusal(response))
            case .internalServerError(let response): return .refused(Refusal(response))
            case .serviceUnavailable(let response): return .refused(Refusal(response))
            case .undocumented(let status, _): return .refused(Refusal(undocumented: status))
            }
        }
        switch try await api.collapseSessionItem(path: .init(id: id), body: .json(request)) {
        case .ok(let ok): return .ok(try ok.body.json)
        case .badRequest(let response): return .refused(Refusal(response))
        case .unauthorized(let response): return .refused(Refusal(response))
        case .forbidden(let response): return .refused(Refusal(response))
        case .notFound(let response): return .refused(Refusal(response))
        case .conflict(let response): return .refused(Refusal(response))
        case .contentTooLarge(let response): return .refused(Refusal(response))
        case .unsupportedMediaType(let response): return .refused(Refusal(response))
        case .tooManyRequests(let response): return .refused(Refusal(response))
        case .internalServerError(let response): return .refused(Refusal(response))
        case .serviceUnavailable(let response): return .refused(Refusal(response))
        case .undocumented(let status, _): return .refused(Refusal(undocumented: status))
        }
    }

    /// `POST /v1/sessions/{id}/reset`.
    func reset(session id: String, _ request: Components.Schemas.ResetRequest) async throws
        -> Reply<Components.Schemas.ChangesAnswer>
    {
        switch try await api.resetSession(path: .init(id: id), body: .json(request)) {
        case .ok(let ok): return .ok(.ResetAnswer(try ok.body.json))
        case .badRequest(let response): return .refused(Refusal(response))
        case .unauthorized(let response): return .refused(Refusal(response))
        case .forbidden(let response): return .refused(Refusal(response))
        case .notFound(let response): return .refused(Refusal(response))
        case .contentTooLarge(let response): return .refused(Refusal(response))
        case .unsupportedMediaType(let response): return .refused(Refusal(response))
        case .tooManyRequests(let response): return .refused(Refusal(response))
        case .internalServerError(let response): return .refused(Refusal(response))
        case .serviceUnavailable(let response): return .refused(Refusal(response))
        case .undocumented(let status, _): return .refused(Refusal(undocumented: status))
        }
    }

    /// `DELETE /v1/sessions/{id}`.
    func deleteSession(_ id: String) async throws {
        _ = try await api.deleteSession(path: .init(id: id))
    }

    /// `GET /v1/sessions/{id}/events` with `Last-Event-ID: seq`: the stream's body, or why there is none.
    func events(session id: String, after seq: Int) async throws -> Reply<HTTPBody> {
        switch try await api.getSessionEvents(path: .init(id: id), headers: .init(lastEventID: String(seq))) {
        case .ok(let ok): return .ok(try ok.body.textEventStream)
        case .badRequest(let response): return .refused(Refusal(response))
        case .unauthorized(let response): return .refused(Refusal(response))
        case .forbidden(let response): return .refused(Refusal(response))
        case .notFound(let response): return .refused(Refusal(response))
        case .conflict(let response): return .refused(Refusal(response))
        case .tooManyRequests(let response): return .refused(Refusal(response))
        case .internalServerError(let response): return .refused(Refusal(response))
        case .serviceUnavailable(let response): return .refused(Refusal(response))
        case .undocumented(let status, _): return .refused(Refusal(undocumented: status))
        }
    }
}
