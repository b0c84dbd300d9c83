"""A keep-alive connection for fast sequential requests, and the lists and windows the benchmarks make
with it."""
import json, multiprocessing, re, socket

from .common import request


class Connection:
    """A keep-alive HTTP/1.1 connection for fast sequential requests."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def request(self, method, path, body=b""):
        head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        self.sock.sendall(head.encode() + body)
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self.sock.recv(65536)
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        found = re.search(rb"content-length: (\d+)", head, re.I)
        length = int(found.group(1)) if found else 0  # 204 and 304 carry no body
        while len(self.buffer) < length:
            self.buffer += self.sock.recv(65536)
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return int(head.split()[1]), body


def put_feed(base, count, name="feed"):
    """A list of `count` items in one section, written with ops (versions then carry their change log)."""
    request("PUT", base + f"/v1/lists/{name}", {"sections": [{"id": "all", "items": []}]})
    for chunk in range(0, count, 2000):
        items = [{"id": f"f{i}", "type": "row", "data": {"title": f"Item {i}", "n": i}}
                 for i in range(chunk, min(chunk + 2000, count))]
        request("POST", base + f"/v1/lists/{name}/ops", {"ops": [{"op": "insertItems", "section": "all", "items": items}]})


def open_window(connection, list_name, size, limit=500):
    """A session whose window holds `size` items: created with `limit`, then extended."""
    status, body = connection.request("POST", f"/v1/lists/{list_name}/sessions",
                                      json.dumps({"limit": min(limit, size)}).encode())
    session = json.loads(body)
    held = min(limit, size)
    version = session["version"]
    while held < size:
        step = min(limit, size - held)
        status, body = connection.request(
            "GET", f"/v1/sessions/{session['session']}/changes?since={version}&extend=next&limit={step}")
        version = json.loads(body)["version"]
        held += step
    return session["session"], version


def _open_windows(job):
    port, names, size = job
    connection = Connection(port)
    return [open_window(connection, name, size) for name in names]


def open_windows(port, list_name, size, count, workers=4):
    """`count` sessions each holding `size` items of `list_name` (open_window), opened over `workers` connections by
    as many processes at once: [(session, version)]. One connection in Python opens 100,000 2,000-item windows in
    minutes; the server answers several at once."""
    return open_windows_on(port, [list_name] * count, size, workers)


def open_windows_on(port, names, size, workers=4):
    """A session holding `size` items on each list of `names`, in their order, as open_windows opens them."""
    shares = [names[index::workers] for index in range(workers)]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        parts = pool.map(_open_windows, [(port, share, size) for share in shares])
    # Back in the order of `names`: share i holds names i, i + workers, …
    opened = [None] * len(names)
    for index, part in enumerate(parts):
        opened[index::workers] = part
    return opened
