"""Session clients through nginx: a screen that opens a session, long-polls its changes and applies
them to its window, and opens a new one on 404 session-not-found (a resync)."""
import re, threading, time
import http.client

from .harness import Client, Failure, TAG_LENGTH, check


def apply_sequential(window, changes):
    """Applies `sequential` changes (openapi.yaml's `format`) to a window: a list of {id, header, footer, items}."""
    for op in changes:
        kind = op["op"]
        if kind == "deleteSection":
            check(window[op["index"]]["id"] == op["id"], f"deleteSection names {op['id']}, the window has "
                  f"{window[op['index']]['id']}")
            del window[op["index"]]
        elif kind == "insertSection":
            section = op["section"]
            window.insert(op["index"], {"id": section["id"], "header": section.get("header"),
                                        "footer": section.get("footer"), "items": list(section.get("items", []))})
        elif kind == "moveSection":
            window.insert(op["to"], window.pop(op["from"]))
        elif kind == "updateSection":
            window[op["index"]]["header"] = op.get("header")
            window[op["index"]]["footer"] = op.get("footer")
        elif kind == "deleteItem":
            section, index = op["at"]
            found = window[section]["items"][index]["id"]
            check(found == op["id"], f"deleteItem names {op['id']} at {op['at']}, the window has {found}")
            del window[section]["items"][index]
        elif kind == "insertItem":
            section, index = op["at"]
            window[section]["items"].insert(index, op["item"])
        elif kind == "moveItem":
            source, index = op["from"]
            moving = window[source]["items"].pop(index)
            target, to = op["to"]
            window[target]["items"].insert(to, moving)
        elif kind == "updateItem":
            section, index = op["at"]
            check(window[section]["items"][index]["id"] == op["item"]["id"],
                  f"updateItem of {op['item']['id']} at {op['at']} finds {window[section]['items'][index]['id']}")
            window[section]["items"][index] = op["item"]
        else:
            raise Failure(f"unknown sequential op {kind}")


def window_of(page):
    return [{"id": s["id"], "header": s.get("header"), "footer": s.get("footer"), "items": list(s["items"])}
            for s in page["sections"]]


def instance_of(session_id):
    tag, _, rest = session_id.partition("_")
    return tag if rest and len(rest) == TAG_LENGTH and re.fullmatch(r"q\d+", tag) else None


class SessionClient(threading.Thread):
    """A screen through nginx: opens a session (first page), long-polls `changes` and applies them; on 404
    session-not-found opens a new one (a resync). Ends once it shows `target` (set by the test)."""

    def __init__(self, index, cluster, name, limit=25):
        super().__init__(daemon=True)
        self.index, self.cluster, self.name, self.limit = index, cluster, name, limit
        self.client = Client(cluster.nginx, cluster.token, resend=True)
        self.errors, self.resyncs, self.instances = [], [], []
        self.target, self.done, self.version, self.window = None, False, None, None
        self.changes, self.resets = 0, 0
        self.give_up = threading.Event()

    def open(self):
        for attempt in range(50):
            try:
                answer = self.client.request("POST", f"/v1/lists/{self.name}/sessions",
                                             {"limit": self.limit, "format": "sequential"}, timeout=10)
            except (OSError, http.client.HTTPException) as error:
                self.errors.append((time.monotonic(), self.instance(), f"opening a session: {error!r}"))
                time.sleep(0.1)
                continue
            if answer.status != 201:
                self.errors.append((time.monotonic(), self.instance(), f"opening a session: {answer}"))
                time.sleep(0.1)
                continue
            page = answer.json
            self.session, self.seq, self.version = page["session"], page["seq"], page["version"]
            self.window = window_of(page)
            self.instances.append(instance_of(self.session))
            return
        raise Failure(f"client {self.index}: could not open a session on {self.name}")

    def instance(self):
        return self.instances[-1] if self.instances else None

    def run(self):
        try:
            while not self.give_up.is_set():
                if self.target is not None and self.version == self.target:
                    self.done = True
                    return
                path = f"/v1/sessions/{self.session}/changes?seq={self.seq}&wait=2"
                try:
                    answer = self.client.request("GET", path, timeout=15)
                except (OSError, http.client.HTTPException) as error:
                    self.errors.append((time.monotonic(), self.instance(), f"changes: {error!r}"))
                    time.sleep(0.1)
                    continue
                if answer.status == 404 and answer.problem() == "session-not-found":
                    self.resyncs.append((time.monotonic(), self.instance()))
                    self.open()
                    continue
                if answer.status != 200:
                    self.errors.append((time.monotonic(), self.instance(), f"changes: {answer}"))
                    time.sleep(0.1)
                    continue
                body = answer.json
                if body["seq"] != self.seq:
                    if "reset" in body:
                        self.window = window_of(body["reset"])
                        self.resets += 1
                    else:
                        apply_sequential(self.window, body.get("changes", []))
                        self.changes += 1
                self.seq, self.version = body["seq"], body["version"]
        except Failure as failure:
            self.errors.append((time.monotonic(), self.instance(), f"applying changes: {failure}"))
        except Exception as error:  # noqa: BLE001 - reported, not swallowed
            self.errors.append((time.monotonic(), self.instance(), f"client crashed: {error!r}"))

    def rows(self):
        return [(s["id"], i["id"], i["type"], i.get("data")) for s in self.window for i in s["items"]]
