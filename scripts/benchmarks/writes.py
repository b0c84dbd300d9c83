"""`bench.py writes`: writes at the disk's speed, the same producers on the in-memory store, on SQLite
and on PostgreSQL, beside the disk's fdatasync rate, page reads and pgbench."""
import os, re, shutil, signal, statistics, subprocess, sys, tempfile, threading, time

from .common import BENCH, ROOT, parse_wrk, quire_binary, start_quire
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


class Watch:
    """What the machine and the server did during one load run, so that a stall says whose it was: the longest a
    thread of this process asleep for 10 ms overslept (the machine, or at least the load generator's side of it,
    not running), the steal time the hypervisor reported meanwhile (/proc/stat), and the slowest /readyz of the
    server, read every 100 ms on a connection of its own (the server not answering while the machine ran)."""

    def __init__(self, port):
        self.port, self.done = port, threading.Event()
        self.overslept = self.slowest_probe = 0.0
        self.probe_error = None
        self.steal_at_start = self.steal()
        self.started = time.monotonic()
        self.threads = [threading.Thread(target=self.sleeping, daemon=True),
                        threading.Thread(target=self.probing, daemon=True)]
        for thread in self.threads:
            thread.start()

    @staticmethod
    def steal():
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK") if len(fields) > 8 else 0.0

    def sleeping(self):
        while not self.done.is_set():
            before = time.monotonic()
            time.sleep(0.01)
            self.overslept = max(self.overslept, time.monotonic() - before - 0.01)

    def probing(self):
        try:
            connection = Connection(self.port)
            connection.sock.settimeout(60)
            while not self.done.is_set():
                before = time.monotonic()
                connection.request("GET", "/readyz")
                self.slowest_probe = max(self.slowest_probe, time.monotonic() - before)
                self.done.wait(0.1)
        except OSError as error:
            self.probe_error = error

    def stop(self):
        """Ends the watch; its summary, one line."""
        self.done.set()
        for thread in self.threads:
            thread.join(timeout=70)
        took = time.monotonic() - self.started
        probe = f"error {self.probe_error}" if self.probe_error else f"{self.slowest_probe * 1000:,.0f} ms"
        return (f"the run took {took:.1f} s; the slowest /readyz beside it {probe}; the longest a sleeping thread "
                f"overslept {self.overslept * 1000:,.0f} ms; steal {self.steal() - self.steal_at_start:.2f} s")


def writes(options):
    """Writes at the disk's speed: the same producers on the in-memory store and on SQLite, beside what the disk
    and the server's reads do in the same run."""
    if not shutil.which("wrk"):
        sys.exit("writes: wrk is missing (make deps-bench)")
    script = os.path.join(BENCH, "writes.lua")
    folder = tempfile.mkdtemp(prefix="quire-writes-")
    binary = quire_binary(options)

    def producing(base, threads, connections, seconds, prefix, prepared=True, slow_ms=None):
        """wrk's producers on `base` for `seconds`: acknowledged writes/s, p50 and p99 in ms, and with `slow_ms` the
        requests slower than that and the slowest (ms). Requests are built before wrk's clock starts (40,000 a
        second is more than any store here acknowledges) unless `prepared` is false: then each is built as it is
        sent, as a user's own script does."""
        count = 40_000 * seconds // threads if prepared else 0
        environment = dict(os.environ, **({"WRK_SLOW_MS": str(slow_ms)} if slow_ms else {}))
        timeout = ["--timeout", f"{max(10, 3 * slow_ms // 1000)}s"] if slow_ms else []
        watch = Watch(int(base.rsplit(":", 1)[1]))
        out = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", *timeout, "-s",
                              script, base, "--", "1000", "w", prefix, str(count)], capture_output=True, text=True,
                             check=True, env=environment).stdout
        watched = watch.stop()
        rate, p50, p99, errors, non2xx = parse_wrk(out, split=True)
        if errors or non2xx:
            print(out)
            sys.exit(f"writes: {non2xx} answers other than 200, {errors} socket errors ({seconds} s of wrk on "
                     f"{connections} connections, prefix {prefix}): {watched}")
        if not slow_ms:
            return rate, p50, p99
        slow = re.search(r"^slow: (\d+) requests over \d+ ms, slowest ([\d.]+) ms", out, re.M)
        return rate, p50, p99, int(slow.group(1)), float(slow.group(2)), watched

    def started(environment):
        """A server started with `environment`, with the 1,000 lists the producers write, and its base URL."""
        process, base = start_quire(dict(environment, QUIRE_LOG_ACCESS="false"), binary)
        connection = Connection(int(base.rsplit(":", 1)[1]))
        for k in range(1000):
            connection.request("PUT", f"/v1/lists/w{k}", b'{"sections":[{"id":"s","items":[]}]}')
        return process, base

    def stopped(process):
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)

    def producers(environment, as_sent=False, on_file=False):
        """On a server started with `environment`: a lone producer's p50 and p99 (ms), with `on_file` the disk's sync
        beside it (ms), the producers' acknowledged writes/s, the same with requests built as sent when `as_sent`,
        and page reads/s of the same server."""
        process, base = started(environment)
        # A lone producer, one write at a time: wrk's own latency record (a client in Python spent more time on a
        # request than the server did). Its sync is the disk's of that moment, probed just before and just after it
        # in the store's folder: the disk's sync time drifts by half within a minute, more than this ratio's margin.
        sync_before = fdatasync_rate(folder, 1)[1] if on_file else None
        _, lone_p50, lone_p99 = producing(base, 1, 1, 3, "lone")
        lone_sync_ms = (sync_before + fdatasync_rate(folder, 1)[1]) / 2 if on_file else None
        rate = producing(base, 2, options.connections, options.seconds, "t")[0]
        rate_as_sent = producing(base, 2, options.connections, options.seconds, "u", prepared=False)[0] \
            if as_sent else None
        pages = parse_wrk(subprocess.run(["wrk", "-t2", f"-c{options.connections}", f"-d{options.seconds}s",
                                          base + "/v1/lists/demo?limit=20"], capture_output=True, text=True,
                                         check=True).stdout)[0]
        stopped(process)
        return {"rate": rate, "pages": pages, "p50": lone_p50, "p99": lone_p99, "sync_ms": lone_sync_ms,
                "as_sent": rate_as_sent}

    # Rounds alternate the stores, each with the disk's fdatasync rate of that moment: on a shared machine any one
    # of these figures moves by a tenth or more between runs, and a ratio of two taken minutes apart by more. Which
    # store goes first alternates too, so that a drift of the machine within rounds favours neither.
    rounds = []
    for number in range(0 if options.only_postgres else options.rounds):
        syncs = fdatasync_rate(folder)[0]
        stores = {"memory": ":memory:", "sqlite": os.path.join(folder, f"quire-{number}.sqlite")}
        order = ["memory", "sqlite"] if number % 2 == 0 else ["sqlite", "memory"]
        made = {name: producers({"QUIRE_STORAGE_PATH": stores[name]}, as_sent=name == "memory",
                                on_file=name == "sqlite") for name in order}
        rounds.append((made["memory"], made["sqlite"], syncs))
    # The producers on SQLite for a minute, every request's latency kept: a stall of the disk or of the store (a
    # checkpoint, the journal applied) shows here as requests over a second, which a run of seconds can miss.
    long = None
    if not options.only_postgres and options.long_seconds:
        process, base = started({"QUIRE_STORAGE_PATH": os.path.join(folder, "quire-long.sqlite")})
        long = producing(base, 2, options.connections, options.long_seconds, "l", prepared=False, slow_ms=1000)
        stopped(process)
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
            postgres = (producers({"QUIRE_STORAGE_KIND": "postgres", "QUIRE_STORAGE_URL": url}), tps)
        finally:
            subprocess.run([pg_local, "remove", pg_dir], capture_output=True)

    def median_row(name, ratio, figure, digits, target, met, every=False):
        """A row of the rounds: the median of `ratio` over them, with each round's, and `figure` of the round that
        gave the median; with `every`, `met` must hold in every round rather than for the median."""
        ratios = [ratio(*r) for r in rounds]
        middle = sorted(range(len(rounds)), key=lambda k: ratios[k])[len(rounds) // 2]
        median = ratios[middle]  # the middle round's (the higher of two with an even count)
        each = ", ".join(f"{x:.{digits}f}" for x in ratios)
        held = all(met(x) for x in ratios) if every else met(median)
        return name, f"{median:.{digits}f} (rounds {each}; median round {figure(*rounds[middle])})", target, held

    rows = []
    if rounds:
        rows += [
            median_row("in-memory store: writes/s ÷ page reads/s (same server)",
                       lambda m, q, s: m["rate"] / m["pages"],
                       lambda m, q, s: f"{m['rate']:,.0f} / {m['pages']:,.0f}", 3, ">= 0.33", lambda x: x >= 0.33),
            median_row("the same, requests built as they are sent",
                       lambda m, q, s: m["as_sent"] / m["pages"],
                       lambda m, q, s: f"{m['as_sent']:,.0f} / {m['pages']:,.0f}", 3, ">= 0.25",
                       lambda x: x >= 0.25),
            median_row("SQLite: writes/s ÷ the in-memory store's writes/s",
                       lambda m, q, s: q["rate"] / m["rate"],
                       lambda m, q, s: f"{q['rate']:,.0f} / {m['rate']:,.0f}", 2, ">= 0.8 each",
                       lambda x: x >= 0.8, every=True),
            median_row("SQLite: writes/s ÷ the disk's one-at-a-time fdatasync/s",
                       lambda m, q, s: q["rate"] / s, lambda m, q, s: f"{q['rate']:,.0f} / {s:,.0f}", 2,
                       ">= 2", lambda x: x >= 2),
            median_row("one producer alone on SQLite: p50 latency ÷ one fdatasync (probed beside it)",
                       lambda m, q, s: q["p50"] / q["sync_ms"],
                       lambda m, q, s: f"{q['p50']:.3f} / {q['sync_ms']:.3f} ms, p99 {q['p99']:.2f} ms", 2,
                       "<= 1.5 each", lambda x: x <= 1.5, every=True),
        ]
    if long:
        rate, p50, p99, over, slowest, watched = long
        rows.append((f"{options.connections} producers on SQLite for {options.long_seconds} s: requests over 1 s",
                     f"{over} (slowest {slowest:,.1f} ms; p99 {p99:.1f} ms, {rate:,.0f} writes/s)", "0", over == 0))
        print(f"writes: the {options.long_seconds}-s run beside its watch: {watched}")
    if postgres:
        made, tps = postgres
        rate = made["rate"]
        rows.append((f"PostgreSQL: writes/s ÷ pgbench -N -c {options.connections} on the same server",
                     f"{rate:,.0f} / {tps:,.0f} = {rate / tps:.2f} (lone p50 {made['p50']:.2f} ms, "
                     f"p99 {made['p99']:.2f} ms)", ">= 0.5", rate / tps >= 0.5))
    print(f"writes: {options.connections} producers, one-item inserts at random into 1,000 lists, "
          f"{options.seconds} s each (wrk, bench/writes.lua), {len(rounds)} rounds")
    width = max((len(row[0]) for row in rows), default=0)
    for name, figure, target, met in rows:
        print(f"  {name:<{width}}  {figure:<44} {target:<11} {'met' if met else 'MISSED'}")
