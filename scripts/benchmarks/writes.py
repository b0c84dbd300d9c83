"""`bench.py writes`: writes at the disk's speed, the same producers on the in-memory store, on SQLite
and on PostgreSQL, beside the disk's fdatasync rate, page reads and pgbench."""
import os, re, shutil, signal, statistics, subprocess, sys, tempfile, time

from .common import BENCH, ROOT, parse_wrk, start_quire
from .lists import Connection


def fdatasync_rate(folder, seconds=3):
    """One-at-a-time fdatasync of a 4 KiB append in `folder`: syncs per second and the median sync in ms."""
    path = os.path.join(folder, "fdatasync.probe")
    samples = []
    with open(path, "wb") as f:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            f.write(b"x" * 4096)
            f.flush()
            started = time.perf_counter()
            os.fdatasync(f.fileno())
            samples.append((time.perf_counter() - started) * 1000)
    os.remove(path)
    return len(samples) / seconds, statistics.median(samples)


def writes(options):
    """Writes at the disk's speed: the same producers on the in-memory store and on SQLite, beside what the disk
    and the server's reads do in the same run."""
    if not shutil.which("wrk"):
        sys.exit("writes: wrk is missing (make deps-bench)")
    script = os.path.join(BENCH, "writes.lua")
    folder = tempfile.mkdtemp(prefix="quire-writes-")

    def producers(environment):
        """Acknowledged writes/s of the producers, page reads/s of the same server, and a lone producer's p50 and
        p99 latency in ms, on a server started with `environment`."""
        process, base = start_quire(dict(environment, QUIRE_LOG_ACCESS="false"))
        port = int(base.rsplit(":", 1)[1])
        connection = Connection(port)
        for k in range(1000):
            connection.request("PUT", f"/v1/lists/w{k}", b'{"sections":[{"id":"s","items":[]}]}')

        def producing(threads, connections, seconds, prefix):
            # Requests built before wrk's clock starts: 40,000 a second is more than any store here acknowledges.
            prepared = 40_000 * seconds // threads
            out = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", "-s",
                                  script, base, "--", "1000", "w", prefix, str(prepared)], capture_output=True,
                                 text=True, check=True).stdout
            rate, p50, p99, errors, non2xx = parse_wrk(out, split=True)
            if errors or non2xx:
                print(out)
                sys.exit(f"writes: {non2xx} answers other than 200, {errors} socket errors")
            return rate, p50, p99

        # A lone producer, one write at a time: wrk's own latency record (a client in Python spent more time on
        # a request than the server did).
        _, lone_p50, lone_p99 = producing(1, 1, 3, "lone")
        rate = producing(2, options.connections, options.seconds, "t")[0]
        pages = parse_wrk(subprocess.run(["wrk", "-t2", f"-c{options.connections}", f"-d{options.seconds}s",
                                          base + "/v1/lists/demo?limit=20"], capture_output=True, text=True,
                                         check=True).stdout)[0]
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        return rate, pages, lone_p50, lone_p99

    # Rounds alternate the stores, each with the disk's fdatasync rate of that moment: on a shared machine any one
    # of these figures moves by a tenth or more between runs, and a ratio of two taken minutes apart by more. Which
    # store goes first alternates too, so that a drift of the machine within rounds favours neither.
    rounds = []
    for number in range(0 if options.only_postgres else options.rounds):
        syncs, sync_ms = fdatasync_rate(folder)
        stores = {"memory": ":memory:", "sqlite": os.path.join(folder, f"quire-{number}.sqlite")}
        order = ["memory", "sqlite"] if number % 2 == 0 else ["sqlite", "memory"]
        made = {name: producers({"QUIRE_STORAGE_PATH": stores[name]}) for name in order}
        rounds.append((made["memory"], made["sqlite"], syncs, sync_ms))
    postgres = None
    if not options.no_postgres:
        # PostgreSQL of its own (scripts/local/pg-local), pgbench's simple-update load with as many clients, then Quire's
        # producers on a database of that server.
        pg_local = os.path.join(ROOT, "scripts", "local", "pg-local")
        pg_dir = os.path.join(folder, "pg")
        url = subprocess.run([pg_local, "start", pg_dir], capture_output=True, text=True,
                             check=True).stdout.split()[-1]
        try:
            admin = url.replace("quire@", "postgres@").rsplit("/", 1)[0]
            subprocess.run(["psql", admin + "/postgres", "-q", "-c", "CREATE DATABASE pgbench"], check=True,
                           capture_output=True)
            subprocess.run(["pgbench", "-i", "-q", admin + "/pgbench"], check=True, capture_output=True)
            out = subprocess.run(["pgbench", "-N", "-c", str(options.connections), "-j", "2", "-T",
                                  str(max(1, round(options.seconds))), admin + "/pgbench"],
                                 capture_output=True, text=True, check=True).stdout
            tps = float(re.search(r"tps = ([\d.]+)", out).group(1))
            rate = producers({"QUIRE_STORAGE_KIND": "postgres", "QUIRE_STORAGE_URL": url})
            postgres = (rate, tps)
        finally:
            subprocess.run([pg_local, "remove", pg_dir], capture_output=True)

    def median_row(name, ratio, figure, digits, target, met):
        """A row of the rounds: the median of `ratio` over them, with each round's, and `figure` of the round that
        gave the median."""
        ratios = [ratio(*r) for r in rounds]
        middle = sorted(range(len(rounds)), key=lambda k: ratios[k])[len(rounds) // 2]
        median = ratios[middle]  # the middle round's (the higher of two with an even count)
        each = ", ".join(f"{x:.{digits}f}" for x in ratios)
        return name, f"{median:.{digits}f} (rounds {each}; median round {figure(*rounds[middle])})", target, met(median)

    rows = []
    if rounds:
        rows += [
            median_row("in-memory store: writes/s ÷ page reads/s (same server)",
                       lambda m, q, s, ms: m[0] / m[1], lambda m, q, s, ms: f"{m[0]:,.0f} / {m[1]:,.0f}", 3, ">= 0.2",
                       lambda x: x >= 0.2),
            median_row("SQLite: writes/s ÷ the in-memory store's writes/s",
                       lambda m, q, s, ms: q[0] / m[0], lambda m, q, s, ms: f"{q[0]:,.0f} / {m[0]:,.0f}", 2, ">= 0.8",
                       lambda x: x >= 0.8),
            median_row("SQLite: writes/s ÷ the disk's one-at-a-time fdatasync/s",
                       lambda m, q, s, ms: q[0] / s, lambda m, q, s, ms: f"{q[0]:,.0f} / {s:,.0f}", 2, ">= 2",
                       lambda x: x >= 2),
            median_row("one producer alone on SQLite: p50 latency ÷ one fdatasync",
                       lambda m, q, s, ms: q[2] / ms,
                       lambda m, q, s, ms: f"{q[2]:.3f} / {ms:.3f} ms, p99 {q[3]:.2f} ms", 2, "<= 1.5",
                       lambda x: x <= 1.5),
        ]
    if postgres:
        (rate, _, p50, p99), tps = postgres
        rows.append((f"PostgreSQL: writes/s ÷ pgbench -N -c {options.connections} on the same server",
                     f"{rate:,.0f} / {tps:,.0f} = {rate / tps:.2f} (lone p50 {p50:.2f} ms, p99 {p99:.2f} ms)", ">= 0.5",
                     rate / tps >= 0.5))
    print(f"writes: {options.connections} producers, one-item inserts at random into 1,000 lists, "
          f"{options.seconds} s each (wrk, bench/writes.lua), {len(rounds)} rounds")
    width = max((len(row[0]) for row in rows), default=0)
    for name, figure, target, met in rows:
        print(f"  {name:<{width}}  {figure:<44} {target:<7} {'met' if met else 'MISSED'}")
