"""bench: a write on q1 seen by a long poll on q2, and durable writes through nginx (with --bench-only,
beside one SQLite instance)."""
import json, os, threading, time

from .harness import Client, Failure, check, start_extra
from .lists import Writer, create_list, item, new_list, wait_version


def start_sqlite(cluster):
    """One `quire serve` on SQLite (a file of its own, the same write token): the baseline of the throughput
    figures."""
    folder = os.path.join(cluster.dir, "sqlite-baseline")
    environment = dict(cluster.env, QUIRE_STORAGE_KIND="sqlite", QUIRE_STORAGE_PATH=os.path.join(folder, "quire.sqlite"),
                       QUIRE_AUTH_WRITE_TOKEN=cluster.token, QUIRE_LOG_FORMAT="json")
    return start_extra(cluster, "sqlite-baseline", environment, "the SQLite baseline")[1]


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def bench(cluster, writes, seconds, sqlite_baseline=False):
    lines = []
    # 1. A write through q1, seen by a long poll on q2.
    name = new_list("latency")
    a = cluster.client("q1")
    first = create_list(a, name, [{"id": "s", "items": [item("base-0", 0)]}])
    wait_version(cluster, name, first, ("q2",))
    b = cluster.client("q2")
    opened = b.request("POST", f"/v1/lists/{name}/sessions", {"limit": 5})
    check(opened.status == 201, f"session on q2: {opened}")
    session, seq = opened.json["session"], opened.json["seq"]
    seen, acked = [], []
    poller = cluster.client("q2")
    for n in range(writes):
        result = {}

        def poll(since_seq):
            result["answer"] = poller.request("GET", f"/v1/sessions/{session}/changes?seq={since_seq}&wait=10",
                                              timeout=20)
            result["at"] = time.perf_counter()

        thread = threading.Thread(target=poll, args=(seq,), daemon=True)
        thread.start()
        time.sleep(0.005)
        started = time.perf_counter()
        answer = a.request("POST", f"/v1/lists/{name}/ops",
                           {"ops": [{"op": "insertItems", "section": "s", "items": [item(f"l-{n}", n)]}]})
        acked.append(time.perf_counter() - started)
        check(answer.status == 200, f"write on q1: {answer}")
        thread.join(15)
        check("answer" in result and result["answer"].status == 200, f"the long poll on q2: {result}")
        if result["answer"].json["version"] < answer.json["version"]:
            # Answered by an earlier write's notification: poll once more for this one.
            seq = result["answer"].json["seq"]
            again = poller.request("GET", f"/v1/sessions/{session}/changes?seq={seq}&wait=10", timeout=20)
            result["at"] = time.perf_counter()
            result["answer"] = again
        seen.append(result["at"] - started)
        seq = result["answer"].json["seq"]
    p50, p99 = percentile(seen, 0.5) * 1000, percentile(seen, 0.99) * 1000
    lines.append(f"write on q1 seen by a long poll on q2 ({writes} writes): p50 {p50:.1f} ms (target <= 10), "
                 f"p99 {p99:.1f} ms (target <= 50); the write's own answer p50 "
                 f"{percentile(acked, 0.5) * 1000:.1f} ms, p99 {percentile(acked, 0.99) * 1000:.1f} ms")
    # 2. Durable writes through nginx: one list, then 100 lists; with --bench-only, the same load on one SQLite
    # instance (no nginx) next to it.
    targets = [("through nginx", cluster.nginx, lambda lst: wait_version(cluster, lst, 1))]
    if sqlite_baseline:
        targets.append(("on one SQLite instance", start_sqlite(cluster), lambda lst: None))
    for count in (1, 100):
        for label, base_url, settle in targets:
            names = [new_list(f"tput{count}") for _ in range(count)]
            setup = Client(base_url, cluster.token)
            for lst in names:
                create_list(setup, lst, [{"id": "s", "items": [item("base-0", 0)]}])
            for lst in names:
                settle(lst)
            stop = threading.Event()
            writers = [Writer(f"t{n}", Client(base_url, cluster.token), names, ["base-0"], stop=stop, moves=False,
                              seed=300 + n) for n in range(16)]
            started = time.monotonic()
            for writer in writers:
                writer.start()
            time.sleep(seconds)
            stop.set()
            for writer in writers:
                writer.join(30)
            elapsed = time.monotonic() - started
            done = sum(len(v) for w in writers for v in w.versions.values())
            failed = sum(len(w.refused) + len(w.unknown) for w in writers)
            latencies = [x for w in writers for x in w.latencies] or [0]
            lines.append(f"durable writes {label} on {count} list{'s' if count > 1 else ''} (16 writers, "
                         f"{seconds:g} s): {done / elapsed:.0f}/s, p50 {percentile(latencies, 0.5) * 1000:.1f} ms, "
                         f"p99 {percentile(latencies, 0.99) * 1000:.1f} ms" + (f", {failed} failed" if failed else ""))
            if failed:
                reasons = [f"{r[1]} {r[3]}" for w in writers for r in w.refused] + [u[1] for w in writers
                                                                                   for u in w.unknown]
                lines.append(f"  failed writes: {reasons[:5]}")
            check(done > 0 and failed <= done // 20, f"throughput run {label} on {count} lists: {done} acknowledged, "
                  f"{failed} failed")
    return lines, (p50, p99)
