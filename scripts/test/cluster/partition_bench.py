"""The partition's figures (--bench-only, `scripts/bench.py cluster`): the busiest instance's share
and memory against one instance holding every list, then an instance added and the busiest SIGKILLed under
load."""
import json, os, subprocess, threading, time, uuid
import http.client

from .harness import Client, Failure, ROOT, check, start_extra
from .lists import Writer, check_acknowledged, create_list, full_list, item
from .load import Reader


def parallel(cluster, work, items, threads=16, base=None):
    """`work(client, item)` for every item on `threads` threads, each with a kept-alive client of `base` (nginx by
    default); the failures (at most 5 named)."""
    errors = []
    base = base or cluster.nginx

    def run(share):
        client = cluster.client(base)
        for one in share:
            try:
                work(client, one)
            except (Failure, OSError, http.client.HTTPException) as error:
                errors.append(f"{one}: {error}")

    workers = [threading.Thread(target=run, args=(items[n::threads],), daemon=True) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return errors


def resident_memory(pid):
    """An instance's resident memory in bytes (VmRSS)."""
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def start_solo(cluster):
    """One more quire on the cluster's PostgreSQL, outside nginx (tag solo): the instance that holds every list,
    to measure against."""
    folder = os.path.join(cluster.dir, "solo")
    url = subprocess.run([os.path.join(ROOT, "scripts", "local", "pg-local"), "status", os.path.join(cluster.dir, "pg")],
                         capture_output=True, text=True).stdout.strip()
    environment = dict(cluster.env, QUIRE_STORAGE_KIND="postgres", QUIRE_STORAGE_URL=url, QUIRE_CLUSTER_INSTANCE="solo",
                       QUIRE_AUTH_WRITE_TOKEN=cluster.token, QUIRE_LOG_FORMAT="json", QUIRE_DEMO_SEED="false",
                       QUIRE_STORAGE_PATH=os.path.join(folder, "quire.sqlite"))
    return start_extra(cluster, "solo", environment, "the solo instance")


def partition_bench(cluster, count, items):
    """The partition's figures (`scripts/bench.py cluster`), on the release build: `count` lists of `items` items
    written (PUT, 16 at once) and each read once through nginx, 3 instances; the busiest instance's share of the
    lists and its resident memory against one instance holding them all; then a 4th instance added and the busiest
    one SIGKILLed, each under steady writes and reads through nginx."""
    lines = []
    ring = cluster.ring()
    prefix = f"pb{uuid.uuid4().hex[:6]}"
    names = [f"{prefix}-{n:05d}" for n in range(count)]
    sections = lambda name: [{"id": "s", "items": [item(f"i{k}", {"text": f"item {k} of {name}", "n": k})
                                                   for k in range(items)]}]
    before = {m: cluster.metrics(m) for m in cluster.members}

    def write(client, name):
        create_list(client, name, sections(name))

    def read(client, name):
        answer = client.request("GET", f"/v1/lists/{name}?limit=20", timeout=30)
        check(answer.status == 200, f"GET {name}: {answer}")

    started = time.monotonic()
    errors = parallel(cluster, write, names)
    written = time.monotonic() - started
    check(not errors, f"{len(errors)} of {count} PUTs through nginx failed: {errors[:3]}")
    started = time.monotonic()
    errors = parallel(cluster, read, names)
    check(not errors, f"{len(errors)} of {count} reads through nginx failed: {errors[:3]}")
    reading = time.monotonic() - started
    after = {m: cluster.metrics(m) for m in cluster.members}
    held = {m: int(after[m]["quire_lists_resident"] - before[m]["quire_lists_resident"]) for m in cluster.members}
    busiest = max(held, key=held.get)
    share = held[busiest] / count
    lines.append(f"partition: {count:,} lists of {items} items written (PUT, 16 at once, {count / written:.0f}/s) and "
                 f"each read once ({count / reading:.0f}/s) through nginx, 3 instances: the busiest ({busiest}) holds "
                 f"{share:.1%} of them (target <= 45%, ideal 33.3%); "
                 + ", ".join(f"{m} {held[m]:,}" for m in cluster.members)
                 + f" (the ring: {', '.join(f'{m} {sum(1 for n in names if ring.home(n) == m):,}' for m in cluster.members)})")
    check(sum(held.values()) == count, f"lists held in all {sum(held.values())}, written {count}: {held}")
    busiest_memory = resident_memory(cluster.pid(busiest))
    process, solo = start_solo(cluster)
    started = time.monotonic()
    errors = parallel(cluster, read, names, threads=8, base=solo)
    solo_reading = time.monotonic() - started
    check(not errors, f"{len(errors)} reads on the solo instance failed: {errors[:3]}")
    solo_memory = resident_memory(process.pid)
    solo_held = int(cluster.metrics_of(solo)["quire_lists_resident"])
    process.terminate()
    process.wait(30)
    lines.append(f"partition: resident memory of the busiest instance / one instance holding all {count:,} (the same "
                 f"lists, each read once there, {count / solo_reading:.0f}/s): {busiest_memory / 1e6:.0f} MB / "
                 f"{solo_memory / 1e6:.0f} MB = {busiest_memory / solo_memory:.2f} (target <= 0.5); the lone instance "
                 f"holds {solo_held:,} lists")

    # A 4th instance under steady writes (ops on 300 of the lists) and reads (all of them), through nginx.
    sample = names[:: max(1, count // 300)]
    base_ids = [f"i{k}" for k in range(items)]

    def load():
        stop = threading.Event()
        writers = [Writer(f"pw{n}-{uuid.uuid4().hex[:4]}", Client(cluster.nginx, cluster.token, resend=True), sample,
                          base_ids[:10], stop=stop, pause=0.01, moves=False, seed=500 + n) for n in range(4)]
        readers = [Reader(cluster, names, stop, 550 + n) for n in range(2)]
        for thread in writers + readers:
            thread.start()
        return stop, writers, readers

    def settle(stop, writers, readers):
        stop.set()
        for thread in writers + readers:
            thread.join(30)
        lost = 0
        for name in sample:
            _, rows, _ = full_list(cluster.client(cluster.nginx), name)
            try:
                check_acknowledged(name, rows, writers, base_ids)
            except Failure as failure:
                lost += 1
                lines.append(f"  lost: {failure}")
        acked = sum(len(v) for w in writers for v in w.versions.values())
        unknown = sum(len(w.unknown) + sum(1 for r in w.refused if r[1] == 502) for w in writers)
        refused = sum(sum(1 for r in w.refused if r[1] != 502) for w in writers)
        failed = [f for r in readers for f in r.failures]
        return acked, lost, unknown, refused, failed, sum(r.count for r in readers)

    stop, writers, readers = load()
    time.sleep(2)
    grown_from = {m: cluster.metrics(m) for m in cluster.members}
    added = cluster.add()
    grown = cluster.ring()
    errors = parallel(cluster, read, names)
    time.sleep(1)
    acked, lost, unknown, refused, failed, reads = settle(stop, writers, readers)
    grown_to = {m: cluster.metrics(m) for m in cluster.members}
    loads = {m: int(grown_to[m]["quire_list_loads_total"] - grown_from.get(m, {}).get("quire_list_loads_total", 0))
             for m in cluster.members}
    moved = loads[added]
    modelled = sum(1 for n in names if grown.home(n) != ring.home(n))
    lines.append(f"partition: a 4th instance ({added}) added under writes and reads through nginx, then every list "
                 f"read once: lists that changed home {moved:,} ({moved / count:.1%}, target <= 30%; the ring: "
                 f"{modelled / count:.1%}; loads on the other instances {sum(loads.values()) - moved}); acknowledged "
                 f"writes lost {lost} of {acked} (target 0); failed reads {len(failed) + len(errors)} of "
                 f"{reads + count} (target 0)" + (f"; {unknown} writes without an answer" if unknown else "")
                 + (f"; {refused} refused" if refused else ""))
    for failure in (failed[:3] + errors[:3]):
        lines.append(f"  failed read: {failure}")

    # The busiest of the four SIGKILLed under the same load: every list read through nginx after.
    resident = {m: cluster.metrics(m)["quire_lists_resident"] for m in cluster.members}
    victim = max(resident, key=resident.get)
    stop, writers, readers = load()
    time.sleep(2)
    cluster.kill(victim)
    time.sleep(0.5)
    started = time.monotonic()
    errors = parallel(cluster, read, names)
    reading = time.monotonic() - started
    acked, lost, unknown, refused, failed, reads = settle(stop, writers, readers)
    lines.append(f"partition: the busiest instance ({victim}, {int(resident[victim]):,} lists) SIGKILLed under writes "
                 f"and reads: every list read through nginx after ({count / reading:.0f}/s), failed reads "
                 f"{len(failed) + len(errors)} of {reads + count} (target 0); acknowledged writes lost {lost} of "
                 f"{acked} (target 0); {unknown} writes in flight at the kill without an answer (nginx's 502)"
                 + (f"; {refused} refused" if refused else ""))
    for failure in (failed[:3] + errors[:3]):
        lines.append(f"  failed read: {failure}")
    return lines
