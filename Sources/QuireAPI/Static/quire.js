// quire.js: the web client of Quire (openapi.yaml: sessions, streams, the `sequential` format). A dependency-free
// ES module, served by Quire at /client/quire.js; no build step.
//
//   import { QuireSession } from "/client/quire.js";
//   const session = new QuireSession({ list: "inbox", renderer: { reset, insert, delete: remove, move, update } });
//   await session.open();
//
// With `filter` (openapi.yaml), the session shows only the top-level items that match, e.g.
// `{ list: "inbox", filter: { all: [{ field: "data.unread", eq: true }, { field: "data.text", contains: "lunch" }] } }`.
//
// A session keeps the window the server holds for it: the first page arrives as a `reset`, then every answer
// (from the event stream, long polls, or the app's own calls: extend, expand, collapse, refresh) is applied in
// `seq` order to the window of its `fromSeq`, as `sequential` operations, each passed to the renderer. 409 resets,
// 404 opens a new session around the first item shown, 503 and 429 (a rate limit) wait Retry-After, a lost
// connection is retried with exponential backoff and jitter. List data is never interpreted: items are handed to
// the renderer as parsed JSON.

/**
 * @typedef {Object} Item  An item of the window (openapi.yaml).
 * @property {string} id
 * @property {string} type  The cell kind.
 * @property {*} data  Any JSON value.
 * @property {number} [childCount]  Children it has (when it has any).
 * @property {string} [parent]  The parent's id, for a child shown under an expanded item.
 * @property {number} [depth]  1 for a top-level item's children, 2 for theirs...
 */
/**
 * @typedef {Object} Supplementary  A section header or footer.
 * @property {string} type
 * @property {*} [data]
 */
/**
 * @typedef {Object} Section
 * @property {string} id
 * @property {Supplementary|null} header
 * @property {Supplementary|null} footer
 * @property {Item[]} items  The section's items in the window (a slice of the section).
 */
/**
 * @typedef {Object} Window  The run of the list the client holds.
 * @property {Section[]} sections
 */
/**
 * @typedef {{op:"insertItem", at:[number,number], item:Item}
 *   | {op:"deleteItem", at:[number,number], id:string}
 *   | {op:"moveItem", from:[number,number], to:[number,number], id:string}
 *   | {op:"updateItem", at:[number,number], item:Item}
 *   | {op:"insertSection", index:number, section:Section}
 *   | {op:"deleteSection", index:number, id:string}
 *   | {op:"moveSection", from:number, to:number, id:string}
 *   | {op:"updateSection", index:number, id:string, header:Supplementary|null, footer:Supplementary|null}
 * } SequentialOp  One operation of the `sequential` format; indexes refer to the state the previous op left.
 */
/**
 * @typedef {"open"|"stream"|"poll"|"next"|"prev"|"expand"|"collapse"|"refresh"|"sync"|"recover"} Origin
 *   What an update answers: the first page, a write pushed on the stream or a long poll, an extend, ...
 */
/**
 * @typedef {Object} UpdateInfo
 * @property {Origin} origin
 * @property {number} seq  The answer's `seq`.
 * @property {Window} window  The window after the update.
 * @property {boolean} hasPrev
 * @property {boolean} hasNext
 */
/**
 * @typedef {Object} Renderer  The app's callbacks; every one is optional.
 * @property {(window: Window, info: UpdateInfo) => void} [reset]  The whole window is new (reload it).
 * @property {(info: UpdateInfo) => void} [begin]  Before the ops of one answer.
 * @property {(op: SequentialOp, info: UpdateInfo) => void} [insert]  `insertItem` or `insertSection`.
 * @property {(op: SequentialOp, info: UpdateInfo) => void} [delete]  `deleteItem` or `deleteSection`.
 * @property {(op: SequentialOp, info: UpdateInfo) => void} [move]  `moveItem` or `moveSection`.
 * @property {(op: SequentialOp, info: UpdateInfo) => void} [update]  `updateItem` or `updateSection`.
 * @property {(info: UpdateInfo) => void} [end]  After the ops of one answer (or after a reset).
 */
/**
 * @typedef {"connecting"|"live"|"polling"|"reconnecting"|"offline"|"error"|"closed"} ConnectionState
 *   `live`: the event stream is open; `polling`: long polls; `offline`: the server cannot be reached (retrying).
 */
/**
 * @typedef {{field: string, eq?: *, ne?: *, in?: Array<*>, lt?: (number|string), lte?: (number|string),
 *   gt?: (number|string), gte?: (number|string), contains?: string, exists?: boolean}
 *   | {all: Filter[]} | {any: Filter[]} | {not: Filter}} Filter
 *   Which top-level items a filtered session shows (openapi.yaml): a term (`field` — `id`, `type` or
 *   `data.<key>…` — and exactly one operator), or `all`, `any`, `not` of filters. At most 32 terms and 4
 *   levels; the server refuses another with `400 invalid-filter`.
 */
/**
 * @typedef {Object} Options
 * @property {string} list  The list's name.
 * @property {string} [base]  The service's URL ("" = this page's origin).
 * @property {number} [limit]  Items per page (first page and every extend); the server's default otherwise.
 * @property {number} [keep]  Items held at most (openapi.yaml); the server's default otherwise.
 * @property {string} [around]  Open the first page around this item.
 * @property {string[]} [expanded]  Items shown expanded from the start.
 * @property {Filter} [filter]  Show only the items that match: the window, paging, changes and `total` are those of
 *   the filtered list (an item updated into the filter arrives as an insert, one updated out of it as a delete). A
 *   new session after a 404 keeps it; to show another filter, close the session and open a new one. A filter the
 *   server refuses makes `open()` throw a QuireError (400, `invalid-filter`, the part at fault in its message).
 * @property {string|(() => (string|null|Promise<string|null>))} [token]  A bearer token, or a function giving one.
 * @property {"auto"|"events"|"longPolls"} [transport]  How writes are followed (default "auto": the stream, long
 *   polls when the server has none).
 * @property {number} [longPollWait]  Seconds a long poll waits (default 25).
 * @property {number} [maxBackoff]  The longest pause between reconnections, in seconds (default 10).
 * @property {number} [streamTimeout]  Seconds without a byte (heartbeats included) after which the stream is
 *   taken for dead and reopened (default 45).
 * @property {Renderer} [renderer]
 * @property {(state: ConnectionState, detail?: *) => void} [onState]
 * @property {(error: QuireError) => void} [onError]  A call that failed after the client's own recoveries.
 * @property {typeof fetch} [fetch]
 */

/** An HTTP answer the client could not recover from. */
export class QuireError extends Error {
    /**
     * @param {number} status  The HTTP status (0: no answer).
     * @param {string|null} problem  The problem type's name (`invalid-request`), if any.
     * @param {string} message
     */
    constructor(status, problem, message) {
        super(message);
        this.name = "QuireError";
        this.status = status;
        this.problem = problem;
    }
}

/** A window copy that shares the items (they are never mutated). @param {Window} window @returns {Window} */
function copyWindow(window) {
    return { sections: window.sections.map((section) => ({ ...section, items: section.items.slice() })) };
}

/**
 * Applies `sequential` ops to a copy of `window`, checking each (indexes in range, ids matching what they name).
 * @param {Window} window
 * @param {SequentialOp[]} ops
 * @returns {Window} the window after the ops
 * @throws {Error} naming the first op that does not fit (the window given is unchanged)
 */
export function applySequential(window, ops) {
    if (!Array.isArray(ops)) throw new Error("sequential changes must be an array");
    const state = copyWindow(window).sections;
    const itemAt = (path, insertion = false) => {
        if (!Array.isArray(path) || path.length !== 2) throw new Error(`bad index path ${path}`);
        const [s, i] = path;
        if (!(s >= 0 && s < state.length) || !(i >= 0 && i < state[s].items.length + (insertion ? 1 : 0))) {
            throw new Error(`index path ${path} out of range`);
        }
        return state[s];
    };
    const sectionAt = (index, id) => {
        if (!(index >= 0 && index < state.length) || state[index].id !== id) throw new Error(`no section ${id} at ${index}`);
    };
    ops.forEach((op, number) => {
        try {
            switch (op.op) {
                case "deleteSection":
                    sectionAt(op.index, op.id);
                    state.splice(op.index, 1);
                    break;
                case "insertSection":
                    if (!(op.index >= 0 && op.index <= state.length)) throw new Error(`section index ${op.index} out of range`);
                    state.splice(op.index, 0, { ...op.section, items: (op.section.items || []).slice() });
                    break;
                case "moveSection": {
                    sectionAt(op.from, op.id);
                    const [section] = state.splice(op.from, 1);
                    if (!(op.to >= 0 && op.to <= state.length)) throw new Error(`section index ${op.to} out of range`);
                    state.splice(op.to, 0, section);
                    break;
                }
                case "updateSection":
                    sectionAt(op.index, op.id);
                    state[op.index] = { ...state[op.index], header: op.header ?? null, footer: op.footer ?? null };
                    break;
                case "deleteItem": {
                    const section = itemAt(op.at);
                    if (section.items[op.at[1]].id !== op.id) throw new Error(`no item ${op.id} at ${op.at}`);
                    section.items.splice(op.at[1], 1);
                    break;
                }
                case "insertItem":
                    itemAt(op.at, true).items.splice(op.at[1], 0, op.item);
                    break;
                case "moveItem": {
                    const from = itemAt(op.from);
                    if (from.items[op.from[1]].id !== op.id) throw new Error(`no item ${op.id} at ${op.from}`);
                    const [item] = from.items.splice(op.from[1], 1);
                    itemAt(op.to, true).items.splice(op.to[1], 0, item);
                    break;
                }
                case "updateItem": {
                    const section = itemAt(op.at);
                    if (section.items[op.at[1]].id !== op.item.id) throw new Error(`${op.at} holds another item`);
                    section.items[op.at[1]] = op.item;
                    break;
                }
                default:
                    throw new Error(`unknown op ${op.op}`);
            }
        } catch (error) {
            throw new Error(`op ${number}: ${error.message}`);
        }
    });
    return { sections: state };
}

/** Waits `seconds`, or until `signal` aborts. */
const sleep = (seconds, signal) =>
    new Promise((resolve) => {
        const done = () => {
            clearTimeout(timer);
            signal?.removeEventListener("abort", done);
            resolve();
        };
        const timer = setTimeout(done, seconds * 1000);
        signal?.addEventListener("abort", done, { once: true });
    });

/** A lost connection (as opposed to an HTTP answer). */
class TransportError extends Error {}

/**
 * A live session on one list (openapi.yaml): keeps its window exact and renders every change.
 *
 * Calls (``loadNext``, ``expand``...) are sent one at a time, each naming the window the client holds (`seq`);
 * answers from the stream and from calls are applied in `seq` order.
 */
export class QuireSession {
    /** @param {Options} options */
    constructor(options) {
        if (!options || typeof options.list !== "string") throw new TypeError("options.list is required");
        /** @type {Options} */
        this.options = { transport: "auto", longPollWait: 25, maxBackoff: 10, streamTimeout: 45, base: "", ...options };
        /** @type {Window} The window as rendered after the last update. */
        this.window = { sections: [] };
        /** The `seq` of the last answer applied (0 before the first page). */
        this.seq = 0;
        /** @type {string|null} */
        this.sessionId = null;
        this.hasPrev = false;
        this.hasNext = false;
        /** The total number of items the list shows (as of the last answer that said). */
        this.total = 0;
        /** @type {Set<string>} Items shown expanded. */
        this.expanded = new Set(this.options.expanded || []);
        /** @type {ConnectionState} */
        this.state = "connecting";
        /** What the session did: for diagnostics and tests. */
        this.statistics = { sessionsOpened: 0, resets: 0, retryAfterWaits: 0, events: 0, longPolls: 0, retries: 0, streams: 0, misfits: 0 };
        /** @type {{seq:number, window:Window}[]} the last windows, to apply an answer given on an earlier one */
        this._windows = [];
        /** @type {Map<number, {answer:*, origin:Origin}>} answers whose `fromSeq` has not arrived yet */
        this._waiting = new Map();
        this._visibleItem = null;
        this._closed = false;
        this._queue = Promise.resolve();
        /** App calls queued or running (see _enqueue). */
        this._appCalls = 0;
        this._closing = new AbortController();
        /** @type {AbortController|null} */
        this._stream = null;
        this._recovering = null;
        /** @type {AbortController|null} the long poll that waits */
        this._pollAbort = null;
    }

    /** Creates the session (its first page is rendered as a reset) and starts following the list's writes. */
    async open() {
        await this._create(this.options.around, "open");
        this._follow();
    }

    /** The item the app shows first: after a 404 the new session opens around it. @param {string|null} id */
    setVisibleItem(id) { this._visibleItem = id; }

    /** Extends the window with the next page. @param {number} [limit] */
    loadNext(limit) { return this._enqueue({ kind: "extend", direction: "next", limit }); }

    /** Extends the window with the previous page. @param {number} [limit] */
    loadPrevious(limit) { return this._enqueue({ kind: "extend", direction: "prev", limit }); }

    /** Shows an item's children. @param {string} id */
    expand(id) { return this._enqueue({ kind: "expand", id, expanding: true }); }

    /** Hides an item's children. @param {string} id */
    collapse(id) { return this._enqueue({ kind: "expand", id, expanding: false }); }

    /** Expands or collapses. @param {string} id */
    toggle(id) { return this.expanded.has(id) ? this.collapse(id) : this.expand(id); }

    /** Pull-to-refresh: a fresh first page, rendered as a reset. @param {number} [limit] */
    refresh(limit) { return this._enqueue({ kind: "reset", limit, origin: "refresh" }); }

    /** Brings the window up to date now instead of waiting for the push. */
    sync() { return this._enqueue({ kind: "update" }); }

    /** Stops following and deletes the session. */
    async close() {
        const id = this.sessionId;
        this._setState("closed");
        this._closed = true;
        this.sessionId = null;
        this._closing.abort();
        this._stream?.abort();
        if (id) {
            try {
                // Not aborted with the rest: the session is deleted at once rather than left to expire.
                await this._send("DELETE", `/v1/sessions/${encodeURIComponent(id)}`, undefined, { signal: undefined, keepalive: true });
            } catch { /* gone anyway */ }
        }
    }

    // MARK: requests

    /**
     * Runs calls one after the other, so that each names the window its predecessor left. An app call ends the
     * long poll that waits (the server ends it too when the call moves the session), so it is not held up to
     * `longPollWait` seconds; the poll starts again after it.
     */
    _enqueue(request) {
        const isPoll = request.kind === "longPoll";
        if (!isPoll) {
            this._pollAbort?.abort();
            this._appCalls += 1;
        }
        const run = this._queue.then(() => {
            // A poll queued while an app call ran (the follower polls again at once) would hold up the calls made
            // after it for up to longPollWait seconds: it gives way, and the follower polls again behind them.
            if (isPoll && this._appCalls > 0) throw new DOMException("an app call is waiting", "AbortError");
            return this._call(request);
        });
        if (!isPoll) run.finally(() => { this._appCalls -= 1; }).catch(() => {});
        this._queue = run.catch(() => {});
        return run;
    }

    async _headers(extra) {
        const headers = { Accept: "application/json", ...extra };
        let token = this.options.token;
        if (typeof token === "function") token = await token();
        if (token) headers.Authorization = `Bearer ${token}`;
        return headers;
    }

    /** @returns {Promise<Response>} @throws {TransportError} when no answer came */
    async _send(method, path, body, init = {}) {
        const headers = await this._headers(body === undefined ? {} : { "Content-Type": "application/json" });
        const doFetch = this.options.fetch || globalThis.fetch.bind(globalThis);
        try {
            return await doFetch(this.options.base + path, {
                method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store",
                signal: "signal" in init ? init.signal : this._closing.signal, keepalive: init.keepalive,
            });
        } catch (error) {
            if (error?.name === "AbortError") throw error;
            throw new TransportError(String(error?.message || error));
        }
    }

    static async _problem(response) {
        try {
            const body = await response.json();
            return { name: typeof body?.type === "string" ? body.type.split("/").pop() : null, detail: body?.detail || "" };
        } catch {
            return { name: null, detail: "" };
        }
    }

    async _call(request) {
        let failures = 0;
        while (!this._closed) {
            const id = this.sessionId;
            if (!id) {
                await this._recover();
                continue;
            }
            let response;
            try {
                response = await this._request(request, id);
            } catch (error) {
                if (!(error instanceof TransportError)) throw error;
                // Lost on the way: the same request names the same window, which the server answers again
                // from there even if the lost one moved the session (openapi.yaml).
                failures += 1;
                if (failures > 6) throw error;
                this.statistics.retries += 1;
                this._setState("offline", error.message);
                await sleep(this._backoff(failures), this._closing.signal);
                continue;
            }
            if (id !== this.sessionId) continue; // a new session meanwhile: ask it instead
            if (response.status === 200) {
                const answer = await response.json();
                if (request.kind === "expand") {
                    if (request.expanding) this.expanded.add(request.id);
                    else this.expanded.delete(request.id);
                }
                this._apply(answer, this._origin(request));
                return;
            }
            const problem = await QuireSession._problem(response);
            if (response.status === 409) {
                this.statistics.resets += 1;
                if (request.kind === "reset") throw new QuireError(409, problem.name, problem.detail);
                request = { kind: "reset", origin: this._origin(request) };
                continue;
            }
            if (response.status === 404 && problem.name === "session-not-found") {
                await this._recover();
                if (request.kind === "update" || request.kind === "longPoll" || request.kind === "reset") return;
                continue; // the app's extend or expand, on the new session
            }
            if (response.status === 503 || response.status === 429) {
                failures += 1;
                await this._pause(response, failures);
                continue;
            }
            const error = new QuireError(response.status, problem.name, `HTTP ${response.status}: ${problem.detail}`);
            this.options.onError?.(error);
            throw error;
        }
    }

    _origin(request) {
        switch (request.kind) {
            case "extend": return request.direction;
            case "expand": return request.expanding ? "expand" : "collapse";
            case "reset": return request.origin || "refresh";
            case "longPoll": return "poll";
            default: return "sync";
        }
    }

    _request(request, id) {
        const session = `/v1/sessions/${encodeURIComponent(id)}`;
        switch (request.kind) {
            case "update":
            case "extend":
            case "longPoll": {
                const query = new URLSearchParams({ seq: String(this.seq) });
                if (request.kind === "extend") {
                    query.set("extend", request.direction);
                    const limit = request.limit ?? this.options.limit;
                    if (limit) query.set("limit", String(limit));
                }
                if (request.kind === "longPoll") {
                    query.set("wait", String(this.options.longPollWait));
                    return this._poll(`${session}/changes?${query}`);
                }
                return this._send("GET", `${session}/changes?${query}`);
            }
            case "expand":
                return this._send("POST", `${session}/${request.expanding ? "expand" : "collapse"}`, { seq: this.seq, id: request.id });
            case "reset": {
                const limit = request.limit ?? this.options.limit;
                return this._send("POST", `${session}/reset`, limit ? { limit } : {});
            }
        }
        throw new Error(`unknown request ${request.kind}`);
    }

    /** A long poll that an app call or close() can end. */
    async _poll(path) {
        const controller = new AbortController();
        const abort = () => controller.abort();
        this._pollAbort = controller;
        this._closing.signal.addEventListener("abort", abort, { once: true });
        try {
            return await this._send("GET", path, undefined, { signal: controller.signal });
        } finally {
            this._closing.signal.removeEventListener("abort", abort);
            if (this._pollAbort === controller) this._pollAbort = null;
        }
    }

    async _create(around, origin) {
        const body = { format: "sequential" };
        if (this.options.limit) body.limit = this.options.limit;
        if (this.options.keep) body.keep = this.options.keep;
        if (this.options.filter) body.filter = this.options.filter;
        if (around) body.around = around;
        if (this.expanded.size) body.expanded = [...this.expanded];
        let failures = 0;
        while (!this._closed) {
            let response;
            try {
                response = await this._send("POST", `/v1/lists/${encodeURIComponent(this.options.list)}/sessions`, body);
            } catch (error) {
                if (!(error instanceof TransportError) || origin === "open") throw error;
                failures += 1;
                this._setState("offline", error.message);
                await sleep(this._backoff(failures), this._closing.signal);
                continue;
            }
            if (response.status === 201) {
                const page = await response.json();
                if (this._closed) {
                    // Closed while it was being opened (a filter changed, the page left): nobody else would delete it.
                    this._send("DELETE", `/v1/sessions/${encodeURIComponent(page.session)}`, undefined,
                        { signal: undefined, keepalive: true }).catch(() => {});
                    return;
                }
                this.sessionId = page.session;
                this.statistics.sessionsOpened += 1;
                this._waiting.clear();
                this._windows = [];
                this.seq = 0;
                this._publishReset({ sections: page.sections }, page.seq ?? 1, page.page, origin);
                return;
            }
            if (response.status === 503 || response.status === 429) {
                failures += 1;
                await this._pause(response, failures);
                continue;
            }
            const problem = await QuireSession._problem(response);
            const error = new QuireError(response.status, problem.name, `HTTP ${response.status}: ${problem.detail}`);
            if (origin !== "open") this.options.onError?.(error);
            throw error;
        }
    }

    /** The session is gone (404, `event: gone`): a new one around the first item shown (one at a time). */
    _recover() {
        if (!this._recovering) {
            const anchor = this._visibleItem ?? this.window.sections.flatMap((s) => s.items)[0]?.id ?? this.options.around;
            this.sessionId = null;
            this._stream?.abort();
            // Expanded items that left the list are dropped by the server; keep only those still shown.
            this._recovering = this._create(anchor, "recover").finally(() => { this._recovering = null; });
        }
        return this._recovering;
    }

    // MARK: applying answers in seq order

    /** Applies an answer to the window of its `fromSeq`, in `seq` order. */
    _apply(answer, origin) {
        if (!answer || answer.session !== this.sessionId || typeof answer.seq !== "number") return;
        const from = answer.fromSeq ?? this.seq;
        if (answer.seq <= this.seq) return; // applied already, or superseded
        if (answer.reset) {
            this._publishReset({ sections: answer.reset.sections }, answer.seq, answer.page, origin);
            this._drain();
            return;
        }
        const base = this._windows.find((entry) => entry.seq === from);
        if (!base) {
            if (from > this.seq) {
                this._waiting.set(from, { answer, origin }); // its base is on its way
                return;
            }
            this._misfit();
            return;
        }
        let next;
        try {
            next = applySequential(base.window, answer.changes);
        } catch (error) {
            this._misfit(error);
            return;
        }
        if (from !== this.seq) {
            this._publishReset(next, answer.seq, answer.page, origin); // applied to an earlier window: reload
        } else {
            this._remember(next, answer.seq, answer.page);
            const info = this._info(origin);
            const renderer = this.options.renderer || {};
            renderer.begin?.(info);
            for (const op of answer.changes) {
                const kind = op.op.startsWith("insert") ? "insert" : op.op.startsWith("delete") ? "delete" : op.op.startsWith("move") ? "move" : "update";
                renderer[kind]?.(op, info);
            }
            renderer.end?.(info);
        }
        this._trackExpanded(origin, next);
        this._drain();
    }

    _trackExpanded(origin, window) {
        // Children of an item show it expanded; an item that left the window or lost its children is not.
        const shown = new Set();
        for (const section of window.sections) for (const item of section.items) if (item.parent) shown.add(item.parent);
        for (const id of shown) this.expanded.add(id);
    }

    /** An answer this client cannot place: start again from a fresh first page. */
    _misfit(error) {
        this.statistics.misfits += 1;
        this.statistics.resets += 1;
        if (error) console.warn("quire: resetting after an answer that does not fit:", error.message);
        this._enqueue({ kind: "reset", origin: "refresh" }).catch(() => {});
    }

    _drain() {
        for (const key of [...this._waiting.keys()]) if (key < this.seq) this._waiting.delete(key);
        const next = this._waiting.get(this.seq);
        if (next) {
            this._waiting.delete(this.seq);
            this._apply(next.answer, next.origin);
        }
    }

    _remember(window, seq, page) {
        this.window = window;
        this.seq = seq;
        if (typeof page?.hasPrev === "boolean") this.hasPrev = page.hasPrev;
        if (typeof page?.hasNext === "boolean") this.hasNext = page.hasNext;
        if (typeof page?.total === "number") this.total = page.total;
        this._windows.push({ seq, window });
        if (this._windows.length > 4) this._windows.splice(0, this._windows.length - 4);
    }

    _info(origin) {
        return { origin, seq: this.seq, window: this.window, hasPrev: this.hasPrev, hasNext: this.hasNext };
    }

    _publishReset(window, seq, page, origin) {
        const copy = copyWindow(window);
        this._remember(copy, seq, page);
        this.expanded = new Set([...this.expanded].filter((id) => copy.sections.some((s) => s.items.some((item) => item.id === id || item.parent === id))));
        this._trackExpanded(origin, copy);
        const info = this._info(origin);
        this.options.renderer?.reset?.(copy, info);
        this.options.renderer?.end?.(info);
    }

    // MARK: following writes: the event stream, or long polls

    async _follow() {
        let failures = 0;
        let useEvents = this.options.transport !== "longPolls";
        while (!this._closed) {
            try {
                if (useEvents) {
                    const end = await this._readEvents();
                    if (end.kind === "ended") {
                        failures = end.received ? 0 : failures + 1;
                        if (!this._closed) this._setState(failures ? "offline" : "reconnecting");
                    } else if (end.kind === "unavailable") {
                        if (this.options.transport === "auto") useEvents = false;
                        else failures += 1;
                    } else if (end.kind === "retry") {
                        failures += 1;
                        await this._pause(end.response, failures);
                        continue;
                    }
                } else {
                    this.statistics.longPolls += 1;
                    if (this.state !== "polling") this._setState("polling");
                    try {
                        await this._enqueue({ kind: "longPoll" });
                    } catch (error) {
                        if (error?.name !== "AbortError" || this._closed) throw error;
                        continue; // interrupted by an app call (see _enqueue): poll again after it
                    }
                    failures = 0;
                    continue;
                }
            } catch (error) {
                if (this._closed) return;
                failures += 1;
                if (error instanceof QuireError) this._setState("error", error.message);
                else this._setState("offline", String(error?.message || error));
            }
            if (failures > 0) await sleep(this._backoff(failures), this._closing.signal);
        }
    }

    /** Reads the session's event stream until it ends. */
    async _readEvents() {
        if (!this.sessionId) {
            await this._recover();
            return { kind: "ended", received: true };
        }
        const id = this.sessionId;
        const controller = new AbortController();
        this._stream = controller;
        const abortOnClose = () => controller.abort();
        this._closing.signal.addEventListener("abort", abortOnClose, { once: true });
        this.statistics.streams += 1;
        let received = false;
        let watchdog = null;
        try {
            const headers = await this._headers({ Accept: "text/event-stream" });
            const doFetch = this.options.fetch || globalThis.fetch.bind(globalThis);
            let response;
            try {
                response = await doFetch(`${this.options.base}/v1/sessions/${encodeURIComponent(id)}/events?seq=${this.seq}`, {
                    headers, cache: "no-store", signal: controller.signal,
                });
            } catch (error) {
                if (controller.signal.aborted) return { kind: "ended", received: true };
                throw new TransportError(String(error?.message || error));
            }
            if (response.status !== 200) {
                const problem = await QuireSession._problem(response);
                if (response.status === 404 && problem.name === "session-not-found") {
                    await this._recover();
                    return { kind: "ended", received: true };
                }
                if (response.status === 404 || response.status === 405 || response.status === 501) return { kind: "unavailable" };
                if (response.status === 409) {
                    this.statistics.resets += 1;
                    await this._enqueue({ kind: "reset", origin: "refresh" });
                    return { kind: "ended", received: true };
                }
                if (response.status === 401 || response.status === 403) {
                    throw new QuireError(response.status, problem.name, `HTTP ${response.status}: ${problem.detail}`);
                }
                return { kind: "retry", response };
            }
            this._setState("live");
            const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
            const timeout = this.options.streamTimeout * 1000;
            const arm = () => {
                clearTimeout(watchdog);
                watchdog = setTimeout(() => controller.abort(), timeout);
            };
            arm();
            let buffer = "";
            let event = { event: "message", data: [], id: null };
            for (;;) {
                let chunk;
                try {
                    chunk = await reader.read();
                } catch (error) {
                    if (controller.signal.aborted) return { kind: "ended", received: true };
                    throw new TransportError(String(error?.message || error));
                }
                if (chunk.done) return { kind: "ended", received };
                arm();
                buffer += chunk.value;
                const lines = buffer.split(/\r\n|\r|\n/);
                buffer = lines.pop();
                for (const line of lines) {
                    if (line === "") {
                        if (event.data.length) {
                            const data = event.data.join("\n");
                            const name = event.event;
                            event = { event: "message", data: [], id: null };
                            if (id !== this.sessionId) return { kind: "ended", received: true };
                            if (name === "changes" || name === "reset") {
                                this.statistics.events += 1;
                                received = true;
                                this._apply(JSON.parse(data), "stream");
                            } else if (name === "gone") {
                                await this._recover();
                                return { kind: "ended", received: true };
                            }
                        }
                        event = { event: "message", data: [], id: null };
                        continue;
                    }
                    if (line.startsWith(":")) continue; // a heartbeat
                    const colon = line.indexOf(":");
                    const field = colon < 0 ? line : line.slice(0, colon);
                    let value = colon < 0 ? "" : line.slice(colon + 1);
                    if (value.startsWith(" ")) value = value.slice(1);
                    if (field === "event") event.event = value;
                    else if (field === "data") event.data.push(value);
                    else if (field === "id") event.id = value;
                }
            }
        } finally {
            clearTimeout(watchdog);
            this._closing.signal.removeEventListener("abort", abortOnClose);
            controller.abort();
            if (this._stream === controller) this._stream = null;
        }
    }

    // MARK: waiting

    async _pause(response, failures) {
        const retryAfter = Number(response.headers.get("Retry-After"));
        if (Number.isFinite(retryAfter) && retryAfter >= 0 && response.headers.has("Retry-After")) {
            this.statistics.retryAfterWaits += 1;
            await sleep(retryAfter * (1 + Math.random() * 0.2), this._closing.signal);
        } else {
            await sleep(this._backoff(failures), this._closing.signal);
        }
    }

    /** Full jitter over an exponential bound: 0.2 s, 0.4 s, ... up to `maxBackoff`. */
    _backoff(failures) {
        const bound = Math.min(this.options.maxBackoff, 0.2 * 2 ** (Math.min(failures, 16) - 1));
        return bound / 2 + Math.random() * (bound / 2);
    }

    _setState(state, detail) {
        if (this._closed && state !== "closed") return;
        if (this.state === state) return;
        this.state = state;
        this.options.onState?.(state, detail);
    }
}
