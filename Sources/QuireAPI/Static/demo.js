// The Quire demo page: a list screen on top of quire.js. Sections with sticky headers, rows by `type`,
// expandable threads, infinite scroll both ways, FLIP-animated changes, an "N new items" pill, a connection
// indicator, loading / empty / error states, filter chips and a search box (each a filtered session, openapi.yaml,
// replacing the one shown), and a producer panel when a write token is given (#token=...).
// List data is only ever rendered as text (textContent).
import { QuireSession } from "./quire.js?v=@version(quire.js)@";

const $ = (id) => document.getElementById(id);
const scroller = $("scroller");
const rows = $("rows");
const ghosts = $("ghosts");
const content = $("content");
const stateView = $("state");
const pill = $("new-items");
const connection = $("connection");
const reducedMotion = matchMedia("(prefers-reduced-motion: reduce)").matches;

const params = new URLSearchParams(location.search);
const integer = (value, fallback, min, max) => {
    const number = Number.parseInt(value ?? "", 10);
    return Number.isFinite(number) ? Math.min(max, Math.max(min, number)) : fallback;
};
const listName = params.get("list") || "demo";
const limit = integer(params.get("limit"), 30, 1, 500);
const keep = integer(params.get("keep"), 150, 0, 100000);
const transport = ["auto", "events", "longPolls"].includes(params.get("transport")) ? params.get("transport") : "auto";
const tokenKey = `quire-demo-token:${location.host}`;

// MARK: filters: a chip ("All", "Unread", "From Ada") and the search box, combined; ?show= and ?q= keep them

/** What each chip shows: unread messages (`unread: true`) and threads with unread replies (`unread` a count). */
const chipFilters = {
    all: null,
    unread: { any: [{ field: "data.unread", eq: true }, { field: "data.unread", gt: 0 }] },
    ada: { field: "data.from", eq: "Ada" },
};
let show = Object.hasOwn(chipFilters, params.get("show") ?? "") ? params.get("show") : "all";
let query = params.get("q") ?? "";
const searchDelay = 250; // ms after the last keystroke

/** `text` cut to at most `bytes` bytes of UTF-8, on a character boundary (`contains` takes 1 to 64 bytes). */
function clipBytes(text, bytes) {
    const encoder = new TextEncoder();
    let clipped = "";
    for (const character of text) {
        if (encoder.encode(clipped + character).length > bytes) break;
        clipped += character;
    }
    return clipped;
}

/** The filter of the chip and the search box (`undefined`: the whole list). */
function currentFilter() {
    const parts = [];
    if (chipFilters[show]) parts.push(chipFilters[show]);
    const text = clipBytes(query.trim(), 64);
    if (text) parts.push({ any: [{ field: "data.text", contains: text }, { field: "data.title", contains: text }] });
    return parts.length === 0 ? undefined : parts.length === 1 ? parts[0] : { all: parts };
}

/** The write token: from the fragment (never sent to the server in the URL), else this tab's storage. */
function readToken() {
    const fragment = new URLSearchParams(location.hash.slice(1));
    const token = fragment.get("token");
    if (token) {
        sessionStorage.setItem(tokenKey, token);
        history.replaceState(null, "", location.pathname + location.search); // out of the address bar
        return token;
    }
    return sessionStorage.getItem(tokenKey);
}
let writeToken = readToken();

/** @type {QuireSession|null} */
let session = null;
let newItems = 0;
let extending = false;
let selectedId = null;

// MARK: rendering items and sections (text only)

function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
}

const asText = (value) => (typeof value === "string" ? value : value === undefined || value === null ? "" : JSON.stringify(value));
const hue = (name) => [...asText(name)].reduce((sum, character) => sum + character.codePointAt(0), 0) % 8;

function renderRow(item) {
    const row = element("div", "row");
    row.dataset.id = item.id;
    row.dataset.type = item.type;
    if (item.parent) {
        row.dataset.parent = item.parent;
        row.dataset.depth = String(item.depth || 1);
        row.style.setProperty("--depth", String(item.depth || 1));
    }
    if (item.id === selectedId) row.classList.add("selected");
    const data = item.data && typeof item.data === "object" ? item.data : {};
    switch (item.type) {
        case "message": {
            const from = asText(data.from) || "?";
            const avatar = element("div", "avatar", [...from][0]?.toUpperCase() ?? "?");
            avatar.dataset.hue = String(hue(from));
            const body = element("div", "body");
            body.append(element("span", "from", from), element("span", "text", asText(data.text)));
            row.append(avatar, body);
            break;
        }
        case "thread": {
            const body = element("div", "body");
            const title = element("div", "title", asText(data.title));
            if (Number(data.unread) > 0) title.append(element("span", "badge", Number(data.unread)));
            body.append(title);
            if (item.childCount) body.append(element("div", "meta", `${item.childCount} ${item.childCount === 1 ? "reply" : "replies"}`));
            if (item.childCount) {
                const toggle = element("button", "toggle");
                toggle.type = "button";
                toggle.setAttribute("aria-label", "Show replies");
                toggle.setAttribute("aria-expanded", String(session?.expanded.has(item.id) ?? false));
                toggle.dataset.toggle = item.id;
                row.append(toggle);
            }
            row.append(body);
            break;
        }
        default: {
            const body = element("div", "body");
            body.append(element("div", "kind", item.type), element("pre", "json", JSON.stringify(item.data, null, 1)));
            if (item.childCount) {
                const toggle = element("button", "toggle");
                toggle.type = "button";
                toggle.setAttribute("aria-expanded", String(session?.expanded.has(item.id) ?? false));
                toggle.dataset.toggle = item.id;
                row.append(toggle);
            }
            row.append(body);
        }
    }
    return row;
}

function fillSupplementary(node, view) {
    node.replaceChildren();
    node.hidden = !view;
    if (!view) return;
    node.dataset.type = view.type;
    const data = view.data && typeof view.data === "object" ? view.data : {};
    if (view.type === "day-header") node.textContent = asText(data.title);
    else if (view.type === "load-more") node.textContent = "· end of the list ·";
    else node.textContent = asText(data.title ?? view.data ?? view.type);
}

function renderSection(section) {
    const node = element("section", "section");
    node.dataset.section = section.id;
    const header = element("div", "section-header");
    const items = element("div", "items");
    const footer = element("div", "section-footer");
    fillSupplementary(header, section.header);
    fillSupplementary(footer, section.footer);
    for (const item of section.items || []) items.append(renderRow(item));
    node.append(header, items, footer);
    return node;
}

const sectionNode = (index) => rows.children[index];
const itemsNode = (index) => sectionNode(index).querySelector(":scope > .items");

// MARK: one answer: measure, apply op by op, keep the reading position, animate (FLIP)

let pass = null;

function measure() {
    const top = scroller.getBoundingClientRect().top;
    const positions = new Map();
    let anchor = null;
    for (const row of rows.querySelectorAll(".row")) {
        const rect = row.getBoundingClientRect();
        positions.set(row.dataset.id, rect.top);
        if (!anchor && rect.bottom > top + 1) anchor = row.dataset.id;
    }
    return { positions, anchor, contentTop: content.getBoundingClientRect().top, scrollerTop: top };
}

const renderer = {
    begin(info) {
        pass = { ...measure(), inserted: new Set(), deleted: [], origin: info.origin };
    },
    reset(window, info) {
        pass = pass || { ...measure(), inserted: new Set(), deleted: [], origin: info.origin };
        pass.reset = true;
        rows.replaceChildren(...window.sections.map(renderSection));
    },
    insert(op) {
        if (op.op === "insertSection") {
            const node = renderSection(op.section);
            rows.insertBefore(node, sectionNode(op.index) ?? null);
            for (const row of node.querySelectorAll(".row")) pass.inserted.add(row.dataset.id);
        } else {
            const [section, index] = op.at;
            const items = itemsNode(section);
            items.insertBefore(renderRow(op.item), items.children[index] ?? null);
            pass.inserted.add(op.item.id);
        }
    },
    delete(op) {
        if (op.op === "deleteSection") {
            const node = sectionNode(op.index);
            for (const row of node.querySelectorAll(".row")) pass.deleted.push(row);
            node.remove();
        } else {
            const row = itemsNode(op.at[0]).children[op.at[1]];
            pass.deleted.push(row);
            row.remove();
        }
    },
    move(op) {
        if (op.op === "moveSection") {
            const node = sectionNode(op.from);
            node.remove();
            rows.insertBefore(node, sectionNode(op.to) ?? null);
        } else {
            const row = itemsNode(op.from[0]).children[op.from[1]];
            row.remove();
            const items = itemsNode(op.to[0]);
            items.insertBefore(row, items.children[op.to[1]] ?? null);
        }
    },
    update(op) {
        if (op.op === "updateSection") {
            const node = sectionNode(op.index);
            fillSupplementary(node.querySelector(":scope > .section-header"), op.header);
            fillSupplementary(node.querySelector(":scope > .section-footer"), op.footer);
        } else {
            const old = itemsNode(op.at[0]).children[op.at[1]];
            const row = renderRow(op.item);
            old.replaceWith(row);
            if (!reducedMotion) row.classList.add("flash");
        }
    },
    end(info) {
        const before = pass;
        pass = null;
        if (!before) return;
        const isWrite = info.origin === "stream" || info.origin === "poll";
        // Keep what the reader looks at in place, unless they are at the very top of the list and this is new data.
        const atTop = scroller.scrollTop < 4 && !info.hasPrev;
        if (before.anchor && !(isWrite && atTop)) {
            const anchor = rows.querySelector(`.row[data-id="${CSS.escape(before.anchor)}"]`);
            if (anchor) scroller.scrollTop += anchor.getBoundingClientRect().top - before.positions.get(before.anchor);
        }
        const viewTop = scroller.getBoundingClientRect().top;
        if (isWrite && !atTop) {
            let above = 0;
            for (const id of before.inserted) {
                const row = rows.querySelector(`.row[data-id="${CSS.escape(id)}"]`);
                if (row && row.getBoundingClientRect().bottom <= viewTop) above += 1;
            }
            if (above) showNewItems(above);
        }
        if (!reducedMotion && !before.reset) animate(before);
        updateChrome();
        requestAnimationFrame(extendIfNeeded);
    },
};

function animate(before) {
    const height = scroller.clientHeight;
    const viewTop = scroller.getBoundingClientRect().top;
    for (const row of rows.querySelectorAll(".row")) {
        const top = row.getBoundingClientRect().top;
        if (top > viewTop + height + 200 || top < viewTop - 200) continue;
        const old = before.positions.get(row.dataset.id);
        if (before.inserted.has(row.dataset.id) || old === undefined) {
            row.animate([{ opacity: 0, transform: "scale(0.98)" }, { opacity: 1, transform: "none" }], { duration: 260, easing: "ease-out" });
        } else if (Math.abs(old - top) > 1) {
            const delta = Math.max(-height, Math.min(height, old - top));
            row.animate([{ transform: `translateY(${delta}px)` }, { transform: "none" }], { duration: 260, easing: "ease-out" });
        }
    }
    for (const row of before.deleted) {
        const old = before.positions.get(row.dataset.id);
        if (old === undefined || old > viewTop + height || old < viewTop - 100) continue;
        const ghost = row.cloneNode(true);
        ghost.removeAttribute("data-id");
        ghost.classList.add("ghost");
        ghost.style.top = `${old - before.contentTop}px`;
        ghosts.append(ghost);
        ghost.animate([{ opacity: 1 }, { opacity: 0, transform: "scale(0.96)" }], { duration: 240, easing: "ease-in" }).finished
            .finally(() => ghost.remove());
    }
}

// MARK: chrome: states, counts, the pill, the connection

function updateChrome() {
    const shown = session ? session.window.sections.reduce((sum, section) => sum + section.items.length, 0) : 0;
    const filtered = Boolean(session?.options.filter);
    $("counts").textContent = session ? `${shown} shown · ${session.total} ${filtered ? "match" : "in list"}` : "";
    $("empty-message").textContent = filtered ? "No items match." : "This list is empty.";
    stateView.dataset.state = session && session.window.sections.length === 0 && shown === 0 ? "empty" : "none";
    $("sentinel-top").querySelector(".spinner").hidden = !(extending === "prev");
    $("sentinel-bottom").querySelector(".spinner").hidden = !(extending === "next");
    document.body.dataset.seq = String(session?.seq ?? 0);
}

function showNewItems(count) {
    newItems += count;
    pill.textContent = `↑ ${newItems} new item${newItems === 1 ? "" : "s"}`;
    pill.hidden = false;
}

function hideNewItems() {
    newItems = 0;
    pill.hidden = true;
}

pill.addEventListener("click", () => {
    hideNewItems();
    scroller.scrollTo({ top: 0, behavior: reducedMotion ? "auto" : "smooth" });
});

const stateLabels = {
    connecting: "connecting", live: "live", polling: "live (long polls)", reconnecting: "reconnecting…",
    offline: "offline · retrying", error: "error", closed: "closed",
};
function showConnection(state) {
    connection.dataset.state = state;
    $("connection-label").textContent = stateLabels[state] ?? state;
}

function showError(message) {
    stateView.dataset.state = "error";
    $("error-message").textContent = message;
    showConnection("error");
}

// MARK: infinite scroll both ways, the first visible item

function near(node) {
    const rect = node.getBoundingClientRect();
    const view = scroller.getBoundingClientRect();
    return rect.top < view.bottom + 600 && rect.bottom > view.top - 600;
}

async function extendIfNeeded() {
    if (extending || !session || !session.sessionId) return;
    let direction = null;
    if (session.hasNext && near($("sentinel-bottom"))) direction = "next";
    else if (session.hasPrev && near($("sentinel-top"))) direction = "prev";
    if (!direction) return;
    extending = direction;
    updateChrome();
    try {
        await (direction === "next" ? session.loadNext() : session.loadPrevious());
    } catch (error) {
        console.warn("extend failed:", error.message);
        await new Promise((resolve) => setTimeout(resolve, 1000));
    } finally {
        extending = false;
        updateChrome();
    }
    requestAnimationFrame(extendIfNeeded);
}

const observer = new IntersectionObserver(() => extendIfNeeded(), { root: scroller, rootMargin: "600px 0px" });
observer.observe($("sentinel-top"));
observer.observe($("sentinel-bottom"));

function firstVisibleId() {
    const top = scroller.getBoundingClientRect().top;
    for (const row of rows.querySelectorAll(".row")) if (row.getBoundingClientRect().bottom > top + 1) return row.dataset.id;
    return null;
}

let scrollScheduled = false;
scroller.addEventListener("scroll", () => {
    if (scrollScheduled) return;
    scrollScheduled = true;
    requestAnimationFrame(() => {
        scrollScheduled = false;
        session?.setVisibleItem(firstVisibleId());
        if (scroller.scrollTop < 4) hideNewItems();
    });
}, { passive: true });

// MARK: clicks: expand and collapse, select (producer)

rows.addEventListener("click", (event) => {
    const toggle = event.target.closest("button[data-toggle]");
    if (toggle) {
        const id = toggle.dataset.toggle;
        session?.toggle(id).then(() => {
            const row = rows.querySelector(`.row[data-id="${CSS.escape(id)}"] > button[data-toggle]`);
            row?.setAttribute("aria-expanded", String(session.expanded.has(id)));
        }, (error) => console.warn("expand failed:", error.message));
        return;
    }
    const row = event.target.closest(".row");
    if (!row || !writeToken) return;
    rows.querySelector(".row.selected")?.classList.remove("selected");
    selectedId = selectedId === row.dataset.id ? null : row.dataset.id;
    if (selectedId) row.classList.add("selected");
});

$("refresh").addEventListener("click", () => {
    hideNewItems();
    session?.refresh().then(() => scroller.scrollTo({ top: 0 }), (error) => console.warn("refresh failed:", error.message));
});

// MARK: the producer panel (with a write token)

const now = () => new Date().toLocaleTimeString();
const randomId = (prefix) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
const pick = (array) => array[Math.floor(Math.random() * array.length)];

function windowItems() {
    if (!session) return [];
    return session.window.sections.flatMap((section) => section.items.map((item) => ({ item, section: section.id })));
}

function target() {
    const all = windowItems();
    return all.find((entry) => entry.item.id === selectedId) ?? pick(all.filter((entry) => !entry.item.parent));
}

function randomOp(kind) {
    const all = windowItems();
    const chosen = target();
    const sections = session.window.sections.map((section) => section.id);
    switch (kind) {
        case "insert": {
            const item = { id: randomId("web"), type: "message", data: { from: "You", text: `Hello from the demo page at ${now()}`, unread: true } };
            if (chosen?.item.parent) return { op: "insertItems", parent: chosen.item.parent, items: [item], before: chosen.item.id };
            if (chosen) return { op: "insertItems", section: chosen.section, items: [item], before: chosen.item.id };
            return sections.length ? { op: "insertItems", section: sections[0], items: [item] } : null;
        }
        case "edit": {
            if (!chosen) return null;
            const { item } = chosen;
            const data = item.data && typeof item.data === "object" ? { ...item.data } : {};
            if (item.type === "thread") data.title = `Edited thread at ${now()}`;
            else data.text = `Edited at ${now()}`;
            return { op: "updateItems", items: [{ id: item.id, type: item.type, data }] };
        }
        case "move": {
            if (!chosen) return null;
            const section = pick(sections);
            const anchors = all.filter((entry) => entry.section === section && !entry.item.parent && entry.item.id !== chosen.item.id);
            const anchor = pick(anchors);
            return anchor ? { op: "moveItem", id: chosen.item.id, section, after: anchor.item.id } : { op: "moveItem", id: chosen.item.id, section };
        }
        case "remove":
            return chosen ? { op: "removeItems", ids: [chosen.item.id] } : null;
        case "section": {
            const items = [1, 2].map((n) => ({ id: randomId("web"), type: "message", data: { from: "You", text: `Message ${n} of a new section` } }));
            const op = { op: "insertSections", sections: [{ id: randomId("section"), header: { type: "day-header", data: { title: `New section ${now()}` } }, items }] };
            if (sections.length) op.before = pick(sections);
            return op;
        }
    }
    return null;
}

async function write(ops) {
    const status = $("producer-status");
    ops = ops.filter(Boolean);
    if (!ops.length) return;
    status.textContent = "writing…";
    try {
        const response = await fetch(`/v1/lists/${encodeURIComponent(listName)}/ops`, {
            method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${writeToken}` },
            body: JSON.stringify({ ops }),
        });
        const body = await response.json().catch(() => ({}));
        status.textContent = response.ok ? `version ${body.version}: ${ops.map((op) => op.op).join(", ")}` : `${response.status}: ${body.detail ?? body.title ?? ""}`;
        if (ops.some((op) => op.op === "removeItems" && op.ids.includes(selectedId))) selectedId = null;
    } catch (error) {
        status.textContent = `not written: ${error.message}`;
    }
}

$("producer").addEventListener("click", (event) => {
    const action = event.target.closest("button[data-action]")?.dataset.action;
    if (!action || !session) return;
    if (action === "burst") {
        // Each op on its own request: one of them failing (an id another op removed) does not undo the others.
        for (let n = 0; n < 10; n += 1) {
            selectedId = null;
            write([randomOp(pick(["insert", "insert", "edit", "move", "move", "remove"]))]);
        }
        return;
    }
    write([randomOp(action)]);
});

$("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const value = $("token-input").value.trim();
    writeToken = value || null;
    if (writeToken) sessionStorage.setItem(tokenKey, writeToken);
    else sessionStorage.removeItem(tokenKey);
    $("token-input").value = "";
    $("producer").hidden = !writeToken;
});

// MARK: the chips and the search box: each change opens a filtered session in place of the one shown

function showChips() {
    for (const chip of document.querySelectorAll(".chip[data-show]")) {
        chip.setAttribute("aria-pressed", String(chip.dataset.show === show));
    }
}

/** Keeps the filter in the address (?show=, ?q=) so that a reload shows the same. */
function rememberFilter() {
    const search = new URLSearchParams(location.search);
    if (show === "all") search.delete("show");
    else search.set("show", show);
    if (query.trim()) search.set("q", query.trim());
    else search.delete("q");
    const text = search.toString();
    history.replaceState(null, "", location.pathname + (text ? `?${text}` : ""));
}

let shownFilter = JSON.stringify(currentFilter() ?? null);
/** Opens a session with the current filter, unless the one shown has it already. */
function applyFilter() {
    const filter = JSON.stringify(currentFilter() ?? null);
    rememberFilter();
    if (filter === shownFilter) return;
    shownFilter = filter;
    scroller.scrollTop = 0;
    start();
}

document.querySelector(".chips").addEventListener("click", (event) => {
    const chip = event.target.closest(".chip[data-show]");
    if (!chip || chip.dataset.show === show) return;
    show = chip.dataset.show;
    showChips();
    applyFilter();
});

const search = $("search");
let searchTimer = null;
search.value = query;
search.addEventListener("input", () => {
    query = search.value;
    clearTimeout(searchTimer);
    searchTimer = setTimeout(applyFilter, searchDelay); // one session for a word typed, not one per key
});
$("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(searchTimer);
    query = search.value;
    applyFilter();
});

// MARK: start

/** The renderer for `owner()`'s session only: a session replaced while it opened renders nothing. */
function rendererFor(owner) {
    return Object.fromEntries(Object.entries(renderer).map(([name, callback]) => [name, (...args) => {
        if (session === owner()) callback(...args);
    }]));
}

async function start() {
    stateView.dataset.state = "loading";
    rows.replaceChildren();
    hideNewItems();
    pass = null;
    // Closed without waiting for its DELETE: a filter typed quickly opens the next session at once. A session
    // still opening is closed too, and quire.js deletes it when its first page arrives.
    session?.close();
    const filter = currentFilter();
    /** @type {QuireSession} */
    const next = new QuireSession({
        list: listName, limit, keep: keep || undefined, transport, filter, renderer: rendererFor(() => next),
        onState: (state) => { if (session === next) showConnection(state); },
        onError: (error) => console.warn("quire:", error.message),
    });
    session = next;
    globalThis.quireDemo = { session, list: listName, limit, keep, filter };
    showConnection(next.state);
    updateChrome();
    stateView.dataset.state = "loading";
    try {
        await next.open();
        if (session !== next) return;
        updateChrome();
    } catch (error) {
        if (session !== next) return; // replaced while it opened
        showError(error.status === 404 ? `There is no list named “${listName}”.`
            : error.problem === "invalid-filter" ? `The filter was refused (${error.message}).`
                : `The list could not be loaded (${error.message}).`);
    }
}

showChips();

$("list-name").textContent = listName;
document.title = `Quire · ${listName}`;
$("producer").hidden = !writeToken;
$("retry").addEventListener("click", start);
addEventListener("pagehide", () => session?.close()); // the session is deleted now rather than left to expire
addEventListener("pageshow", (event) => { if (event.persisted) start(); }); // back from the page cache: a new one
start();
