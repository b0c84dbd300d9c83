"""`bench.py sessions`: the resident memory that N sessions with 50-item windows grow the server by."""
import json, re, sys, time

from .common import request, rss_mb, start_quire
from .lists import Connection


def sessions(options):
    process, base = start_quire({"QUIRE_SESSIONS_CAPACITY": str(options.count + 1000)})
    port = int(base.rsplit(":", 1)[1])
    document = {"sections": [{"id": f"s{s}", "header": {"type": "h", "data": {"title": f"S{s}"}},
                              "items": [{"id": f"i{s}-{i}", "type": "row", "data": {"title": f"Item {s}-{i}", "n": i}}
                                        for i in range(1000)]} for s in range(10)]}
    request("PUT", base + "/v1/lists/big", document)
    connection = Connection(port)
    for _ in range(200):  # warm-up: allocator arenas, caches
        connection.request("POST", "/v1/lists/big/sessions", b'{"limit":50}')
    before = rss_mb(process.pid)
    start_time = time.time()
    body = b'{"limit":50}'
    for index in range(options.count):
        if index % 2 == 1:  # half of them around an item, so windows are spread over the list
            body = json.dumps({"limit": 50, "around": f"i{index % 10}-{(index * 7) % 1000}"}).encode()
        else:
            body = b'{"limit":50}'
        status, _ = connection.request("POST", "/v1/lists/big/sessions", body)
        if status != 201:
            sys.exit(f"session creation failed: {status}")
    elapsed = time.time() - start_time
    time.sleep(1)
    after = rss_mb(process.pid)
    _, metrics = request("GET", base + "/metrics")
    active = re.search(rb"quire_sessions_active (\d+)", metrics).group(1).decode()
    print(f"sessions: {options.count} created in {elapsed:.1f} s ({options.count / elapsed:.0f}/s), {active} active")
    print(f"sessions-memory: {after - before:.1f} MB resident growth (before {before:.1f} MB, after {after:.1f} MB; target <= 100 MB)")
