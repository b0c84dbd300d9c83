"""`bench.py window-cost`: what an answer costs at a 100- and at a 20,000-item window, over HTTP."""
import json, statistics, sys, time

from .common import start_quire
from .lists import Connection, open_window, put_feed


def window_cost(options):
    """Median time of one request at a 100-item and at a 20,000-item window, on one keep-alive connection."""
    process, base = start_quire()
    port = int(base.rsplit(":", 1)[1])
    put_feed(base, 20_000)
    connection = Connection(port)

    def timed(session, path):
        started = time.perf_counter()
        status, _ = connection.request("GET", path)
        elapsed = (time.perf_counter() - started) * 1000
        if status != 200:
            sys.exit(f"{path}: {status}")
        connection.request("DELETE", f"/v1/sessions/{session}")
        return elapsed

    results = {}
    for size in (100, 19_900):
        # extend=next&limit=50 with nothing written, on a session holding `size` items
        samples = []
        for _ in range(60):
            session, version = open_window(connection, "feed", size)
            samples.append(timed(session, f"/v1/sessions/{session}/changes?since={version}&extend=next&limit=50"))
        results[("extend", size)] = statistics.median(samples)
    for size in (100, 20_000):
        samples = []
        for round_number in range(60):
            session, version = open_window(connection, "feed", size)
            connection.request("POST", "/v1/lists/feed/ops", json.dumps({"ops": [{"op": "updateItems", "items": [
                {"id": "f50", "type": "row", "data": {"edited": round_number}}]}]}).encode())
            samples.append(timed(session, f"/v1/sessions/{session}/changes?since={version}"))
        results[("changes", size)] = statistics.median(samples)
    print("| figure | 100-item window | 20,000-item window | ratio | target |")
    print("| --- | --- | --- | --- | --- |")
    for name, large, label in (("extend", 19_900, "`changes?extend=next&limit=50`, nothing written"),
                               ("changes", 20_000, "`changes?since=` after a 1-item `updateItems`")):
        small, big = results[(name, 100)], results[(name, large)]
        ratio = big / small
        print(f"| {label} | {small:.3f} ms | {big:.3f} ms | {ratio:.2f}x | <= 1.5x {'ok' if ratio <= 1.5 else 'MISSED'} |")
