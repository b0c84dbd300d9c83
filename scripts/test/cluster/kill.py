"""kill: an instance SIGKILLed under load costs its session clients one resync and no acknowledged write;
its lists are served by the next instance on the ring, and it catches up once restarted."""
import threading, time

from .harness import Client, Failure, check
from .lists import (Writer, check_acknowledged, check_versions, create_list, item, same_everywhere, served_version,
    wait_version)
from .load import Reader, open_clients, pick_lists, settle_homes


def test_kill(cluster, victim="q2"):
    ring = cluster.ring()
    ring_without = cluster.ring([m for m in cluster.members if m != victim])
    names = pick_lists(cluster, "kill", 2)
    base = [f"base-{i}" for i in range(30)]
    base_ids = base + [f"tail-{i}" for i in range(5)]
    nginx = Client(cluster.nginx, cluster.token, resend=True)
    first = {}
    for name in names:
        first[name] = create_list(nginx, name, [{"id": "s", "items": [item(i, None) for i in base]},
                                                {"id": "t", "items": [item(f"tail-{i}", None) for i in range(5)]}])
    settle_homes(cluster, names, ring)
    clients = open_clients(cluster, names, 2, ring)
    of_victim = [c for c in clients if c.instance() == victim]
    others = [c for c in clients if c.instance() != victim]
    check(len(of_victim) >= 2 and len(others) >= 4, f"sessions: {len(of_victim)} on {victim}, {len(others)} elsewhere")

    stop = threading.Event()
    writers = [Writer(f"kw{n}", Client(cluster.nginx, cluster.token, resend=True), names, base, stop=stop,
                      pause=0.01, moves=False, seed=100 + n) for n in range(3)]
    readers = [Reader(cluster, names, stop, 150 + n) for n in range(2)]
    for thread in writers + clients + readers:
        thread.start()
    time.sleep(3)
    killed_at = time.monotonic()

    def at_kill(moment):
        """Whether `moment` is within the second after the kill, when nginx answers 502 for what was in flight."""
        return killed_at <= moment <= killed_at + 1

    cluster.kill(victim)
    time.sleep(3)
    # Meanwhile the victim's lists are served by the next instance on the ring (the victim's clients reopened
    # their sessions there); checked below.
    restarting = time.monotonic()
    victim_client = cluster.client(victim)
    cluster.up()  # waits for every /readyz
    ready_after = time.monotonic() - restarting
    time.sleep(2)
    stop.set()
    for thread in writers + readers:
        thread.join(30)
    acked = sum(len(v) for w in writers for v in w.versions.values())
    after_kill = sum(1 for w in writers for t in w.acked_at if t > killed_at)
    check(acked > 0 and after_kill > 0, f"writes through nginx: {acked} acknowledged, {after_kill} after the kill")
    # The final versions: every instance, the restarted one included, serves the same.
    finals, rows_of = {}, {}
    for name in names:
        final = max(served_version(cluster.client(i), name) or 0 for i in cluster.members)
        wait_version(cluster, name, final, cluster.members)
        version, rows, _ = same_everywhere(cluster, name, cluster.members)
        check(version == final, f"{name}: a write after the writers stopped ({final} -> {version})")
        check_acknowledged(name, rows, writers, base_ids)
        check_versions(name, writers, first[name])
        finals[name], rows_of[name] = version, rows
    unknown = [u for w in writers for u in w.unknown]
    refused = [r for w in writers for r in w.refused]
    # A write in flight on the victim when it died has no answer, or nginx's 502 (nginx never sends it
    # elsewhere); a write that was never sent is passed on by nginx. A 503 with Retry-After is a clean refusal
    # (nothing committed, the producer retries). Nothing else may fail.
    in_flight = [(t, f"{s} {x}") for t, s, _, x in refused if s == 502] + unknown
    late = [u for u in in_flight if not at_kill(u[0])]
    check(not late, f"writes through nginx failed away from the kill: {[u[1] for u in late[:3]]}")
    failed_reads = [f for r in readers for f in r.failures]
    check(not failed_reads, f"{len(failed_reads)} of {sum(r.count for r in readers)} reads through nginx failed "
          f"(nginx passes a read on to the next instance): {failed_reads[:3]}")
    # Checked last, so that its failure does not hide the clients' and the restarted instance's.
    wrong = [r for r in refused if r[1] not in (502, 503) or (r[1] == 503 and not r[2])]
    for client in clients:
        client.target = finals[client.name]
    deadline = time.monotonic() + 30
    for client in clients:
        client.join(max(0.1, deadline - time.monotonic()))
    for client in clients:
        client.give_up.set()
    stuck = [c.index for c in clients if not c.done]
    # A client of the victim opens a new session through nginx as the victim dies: a POST sent on a kept-alive
    # connection to it gets nginx's 502 (nginx never passes a POST on once sent; see quire-proxy.conf), and the
    # client opens again. Tolerated as the writers' 502s are: within a second of the kill.
    reopened = 0
    for client in clients:
        cut = [e for e in client.errors if e[2].startswith("opening a session: 502") and at_kill(e[0])]
        reopened += len(cut)
        client.errors = [e for e in client.errors if e not in cut]
    for client in clients:
        if client.errors:
            raise Failure(f"client {client.index} (first on {client.instances[0]}) saw errors: "
                          f"{[e[2] for e in client.errors[:3]]}")
    check(not stuck, f"clients {stuck} did not reach their list's final version within 30 s")
    for client in of_victim:
        check(len(client.resyncs) == 1, f"client {client.index} of {victim} resynced {len(client.resyncs)} times")
        check(client.instances[1] == ring_without.home(client.name), f"client {client.index} of {victim} reopened "
              f"its session on {client.instances[1]}, not on the next instance on the ring, "
              f"{ring_without.home(client.name)}")
    for client in others:
        check(not client.resyncs, f"client {client.index} of {client.instances[0]} resynced {len(client.resyncs)} "
              f"times (only {victim} was killed)")
    for client in clients:
        shown, full = client.rows(), rows_of[client.name]
        check(shown, f"client {client.index}: an empty window")
        check(shown == full[:len(shown)], f"client {client.index} ({client.instance()}): its window is not the "
              f"list's first {len(shown)} items at version {finals[client.name]}: first difference at "
              f"{next((k for k, (x, y) in enumerate(zip(shown, full)) if x != y), len(full))}")
        check(served_version(victim_client, client.name) == finals[client.name],
              f"{victim} restarted does not serve {client.name} at version {finals[client.name]}")
    check(not wrong, f"writes through nginx refused otherwise than 503 with Retry-After: {wrong[:3]}" +
          (" (412/422: an instance checked the write against a version older than PostgreSQL's: see handoff); "
           "everything else passed" if any(r[1] in (412, 422) for r in wrong) else ""))
    return (f"{acked} writes acknowledged through nginx on {len(names)} lists ({after_kill} after the kill, "
            f"{len(unknown)} unanswered in flight), {sum(r.count for r in readers)} reads all 200; "
            f"{len(of_victim)} clients of {victim} resynced once each, on the next instance on the ring, and ended "
            f"exact, {len(others)} of the others saw no error ({reopened} sessions opened again after nginx's 502 "
            f"at the kill); {victim} restarted ready after {ready_after:.1f} s and serves the final versions; "
            f"{sum(1 for r in refused if r[1] == 503)} writes answered 503")
