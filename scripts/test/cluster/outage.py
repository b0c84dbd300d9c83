"""outage: with PostgreSQL stopped, writes answer 503 with Retry-After and reads go on; nothing
acknowledged is lost, and every instance catches up when it returns."""
import threading, time
import http.client

from .harness import INSTANCES, check
from .lists import (Writer, check_acknowledged, check_versions, create_list, item, new_list, same_everywhere,
    served_version, wait_version)


OUTAGE_SECONDS = 9


def test_outage(cluster):
    name = new_list("outage")
    base = [f"base-{i}" for i in range(10)]
    first = create_list(cluster.client("q1"), name, [{"id": "s", "items": [item(i, None) for i in base]}])
    wait_version(cluster, name, first)
    stop = threading.Event()
    writers = [Writer(f"o{n}-{target if target in INSTANCES else 'nginx'}",
                      cluster.client(target), [name], base, stop=stop, pause=0.02, moves=False, seed=200 + n)
               for n, target in enumerate(["q1", "q2", cluster.nginx])]
    reads = []

    def reader(instance):
        client = cluster.client(instance)
        while not stop.is_set():
            try:
                answer = client.request("GET", f"/v1/lists/{name}?limit=10", timeout=10)
                reads.append((time.monotonic(), instance, answer.status))
            except (OSError, http.client.HTTPException) as error:
                reads.append((time.monotonic(), instance, repr(error)))
            time.sleep(0.02)

    readers = [threading.Thread(target=reader, args=(i,), daemon=True) for i in INSTANCES]
    for thread in writers + readers:
        thread.start()
    time.sleep(1.5)
    stopped = time.monotonic()
    cluster.pg("stop")
    # Longer than a store write's patience (PostgreSQL's statement timeout, 5 s, plus 2): a write in flight
    # when the database stops waits that long before it is refused, and the writes of its list on that instance
    # wait behind it. Over a shorter outage such a writer's one request spans it and succeeds once PostgreSQL is
    # back, which is right, and this test would see no refusal from it.
    time.sleep(OUTAGE_SECONDS)
    restarted = time.monotonic()
    cluster.pg("start")
    # Until each writer has a write acknowledged after the restart (bounded), then a little more.
    recovery = {}
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(recovery) < len(writers):
        for writer in writers:
            later = [t for t in writer.acked_at if t > restarted]
            if later and writer.tag not in recovery:
                recovery[writer.tag] = later[0] - restarted
        time.sleep(0.05)
    time.sleep(1)
    stop.set()
    for thread in writers + readers:
        thread.join(30)
    check(len(recovery) == len(writers), f"writes still fail 30 s after PostgreSQL came back: "
          f"{[w.tag for w in writers if w.tag not in recovery]} never succeeded "
          f"(last refusals {[w.refused[-1:] for w in writers]})")
    deferred = []  # checked last, so that they do not hide the other checks' results
    bad_reads = [r for r in reads if r[2] != 200]
    check(not bad_reads, f"reads that did not answer 200: {bad_reads[:5]}")
    during = [r for r in reads if stopped + 0.5 < r[0] < restarted]
    check(len({r[1] for r in during}) == 3, f"reads during the outage: {len(during)} ({sorted({r[1] for r in during})})")
    for writer in writers:
        refusals = [r for r in writer.refused if stopped <= r[0] <= restarted + 30]
        check(refusals, f"{writer.tag}: no write refused while PostgreSQL was down (acknowledged during it: "
              f"{sum(1 for t in writer.acked_at if stopped + 1 < t < restarted)})")
        wrong = [r for r in writer.refused if r[1] != 503 or not r[2]]
        if wrong:
            deferred.append(f"{writer.tag}: writes refused otherwise than 503 with Retry-After: {wrong[:3]}" +
                            (" (412/422: an instance checked the write against a version older than PostgreSQL's: "
                             "see handoff)" if any(r[1] in (412, 422) for r in wrong) else ""))
        check(not writer.unknown, f"{writer.tag}: writes without an answer: {writer.unknown[:3]}")
    final = max(served_version(cluster.client(i), name) or 0 for i in INSTANCES)
    caught_up = wait_version(cluster, name, final)
    version, rows, _ = same_everywhere(cluster, name)
    check_acknowledged(name, rows, writers, base)
    check_versions(name, writers, first)
    check(not deferred, "; ".join(deferred) + "; everything else passed")
    refused = sum(len(w.refused) for w in writers)
    retry_after = sorted({r[2] for w in writers for r in w.refused})
    return (f"PostgreSQL down {OUTAGE_SECONDS} s: {refused} writes answered 503 (Retry-After {', '.join(retry_after)}), "
            f"{len(during)} reads during it all 200; writes succeeded again "
            f"{max(recovery.values()):.1f} s after it came back; every instance at version {version} "
            f"(caught up {caught_up:.1f} s after the last write), {sum(len(w.versions[name]) for w in writers)} "
            f"acknowledged writes all there")
