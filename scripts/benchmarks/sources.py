"""`bench.py sources`: tables of a PostgreSQL on loopback (scripts/local/pg-local, wal_level logical) kept as lists by
the release build, each figure of the sources' targets beside its target: single-row transactions from SQL clients at
full speed (applied ÷ committed, the lag at the end, the WAL the slot retains meanwhile), transactions of 100 rows over
100 lists (row changes applied per second), a committed row to a waiting long poll's answer, the first copy of a big
table (time, peak resident memory), and a SIGKILL then a restart until the source follows again.

The load is pgbench's (scripts of one statement each); the committed transactions are counted by PostgreSQL itself
(pg_stat_user_tables: a single-row statement that finds no row commits an empty transaction, which the log does not
carry); the applied ones by Quire's /metrics (quire_source_transactions_total) or, where this build lacks it, by the
lists' versions (one per list per transaction)."""
import json, os, re, signal, subprocess, sys, tempfile, threading, time
import urllib.error, urllib.parse, urllib.request

from .common import ROOT, children, free_port, quire_binary, request, wait_ready
from .lists import Connection


class Database:
    """The benchmark's own PostgreSQL (scripts/local/pg-local in a temporary folder), removed at the end."""

    def __init__(self, folder):
        self.pg_local = os.path.join(ROOT, "scripts", "local", "pg-local")
        self.folder = os.path.join(folder, "pg")
        self.url = subprocess.run([self.pg_local, "start", self.folder], capture_output=True, text=True,
                                  check=True).stdout.split()[-1]
        self.admin = self.url.replace("quire@", "postgres@")
        # The role Quire follows with: REPLICATION, and the owner of the tables (so it may make their publications).
        self.sql("ALTER ROLE quire REPLICATION", url=self.admin)

    def sql(self, statement, url=None):
        run = subprocess.run(["psql", "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1", url or self.url, "-c", statement],
                             capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"sources: psql failed: {run.stderr.strip()}\n  {statement[:200]}")
        return run.stdout.strip()

    def rows_changed(self, table):
        """Rows inserted, updated and deleted in `table` since the server started, as its statistics count them."""
        return int(self.sql(f"SELECT n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables "
                            f"WHERE relname = '{table}'"))

    def retained_wal(self, slot):
        value = self.sql(f"SELECT pg_current_wal_lsn() - restart_lsn FROM pg_replication_slots "
                         f"WHERE slot_name = '{slot}'")
        return int(float(value)) if value else 0

    def pgbench(self, scripts, clients, seconds, variables, rate=None):
        """pgbench on `scripts` ({name: sql}, equal weights) for `seconds`: the transactions it counted."""
        folder = tempfile.mkdtemp(prefix="quire-pgbench-")
        arguments = ["pgbench", "-n", "-c", str(clients), "-j", str(min(clients, 2)), "-T", str(seconds)]
        if rate:
            arguments += ["-R", str(rate)]
        for name, text in scripts.items():
            path = os.path.join(folder, f"{name}.sql")
            with open(path, "w") as f:
                f.write(text)
            arguments += ["-f", f"{path}@1"]
        for key, value in variables.items():
            arguments += ["-D", f"{key}={value}"]
        run = subprocess.run(arguments + [self.url], capture_output=True, text=True, timeout=seconds + 120)
        found = re.search(r"number of transactions actually processed: (\d+)", run.stdout)
        if run.returncode != 0 or not found:
            sys.exit(f"sources: pgbench failed:\n{run.stdout}{run.stderr}")
        return int(found.group(1))

    def remove(self):
        subprocess.run([self.pg_local, "remove", self.folder], capture_output=True)


class Quire:
    """The release build serving on a SQLite file of `folder`, following `sources` (configuration entries)."""

    def __init__(self, binary, folder, sources):
        self.binary = binary
        self.folder = folder
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.config = os.path.join(folder, "quire.yaml")
        lines = [f"server:\n  port: {self.port}", f"storage:\n  path: {os.path.join(folder, 'quire.sqlite')}",
                 "demo:\n  seed: false", "log:\n  level: warning\n  access: false", "sources:"]
        for source in sources:
            lines.append(f"  - {json.dumps(source)}")
        with open(self.config, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.process = None

    def start(self, wait=True):
        log = open(os.path.join(self.folder, "quire.log"), "a")
        self.process = subprocess.Popen([self.binary, "serve", "--config", self.config], stdout=log, stderr=log,
                                        cwd=self.folder)
        children.append(self.process)
        if wait:
            wait_ready(self.base)

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)

    def version(self, name):
        """The list's version, or None while its source copies its table (503 source-syncing) or Quire starts."""
        try:
            _, body = request("GET", f"{self.base}/v1/lists/{name}?limit=1")
            return json.loads(body)["version"]
        except (urllib.error.URLError, ConnectionError, OSError):
            return None

    def wait_for(self, name, above, seconds=600):
        """Until the list's version is above `above`: the seconds it took."""
        began = time.monotonic()
        while time.monotonic() - began < seconds:
            version = self.version(name)
            if version is not None and version > above:
                return time.monotonic() - began
            time.sleep(0.002)
        sys.exit(f"sources: {name} did not pass version {above} within {seconds} s (log: {self.folder}/quire.log)")

    def versions(self, prefix, names):
        """The versions of `names` (lists of one source, `prefix`): GET /v1/lists, and each list it leaves out (no
        row left) read alone."""
        connection = Connection(self.port)
        found, after = {}, ""
        while True:
            _, body = connection.request("GET", f"/v1/lists?limit=1000&prefix={prefix}{after}")
            answer = json.loads(body)
            found.update({entry["list"]: entry["version"] for entry in answer["lists"]})
            if not answer["page"]["hasNext"]:
                break
            after = f"&after={urllib.parse.quote(str(answer['page']['next']), safe='')}"
        for name in names:
            if name not in found:
                _, body = connection.request("GET", f"/v1/lists/{name}?limit=1")
                found[name] = json.loads(body)["version"]
        return {name: found[name] for name in names}

    def metric(self, name, source):
        """A source's sample of `name` in /metrics, or None when this build does not export it."""
        try:
            _, text = request("GET", self.base + "/metrics")
        except Exception:
            return None
        found = re.search(rb'^%s\{[^}]*source="%s"[^}]*\} ([0-9.e+]+)' % (name.encode(), source.encode()), text, re.M)
        return float(found.group(1)) if found else None

    def peak_memory_mb(self):
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return float("nan")


def source(name, url, table, list_template, order, data):
    return {"name": name, "url": url, "table": table, "list": list_template, "section": "sect", "order": order,
            "type": "row", "data": data}


def single_rows(options, db, quire):
    """16 clients of single-row INSERT, UPDATE and DELETE transactions over `lists` lists; the slot's retained WAL
    sampled meanwhile. The rows: applied ÷ committed, the lag at the end, the largest WAL retained."""
    names = [f"s-{k}" for k in range(options.lists)]
    before = quire.versions("s-", names)
    applied_before = quire.metric("quire_source_transactions_total", "s")
    changed_before = db.rows_changed("t_single")
    retained, sampling = [], threading.Event()

    def sample():
        while not sampling.wait(0.5):
            retained.append(db.retained_wal("quire_s"))

    sampler = threading.Thread(target=sample)
    sampler.start()
    began = time.monotonic()
    scripts = {
        "insert": "\\set l random(0, :lists - 1)\nINSERT INTO t_single (list, sect, ord, n) "
                  "VALUES ((:l)::text, :l % 4, (random() * 1000000)::int, 0);\n",
        "update": "\\set id random(1, :rows)\nUPDATE t_single SET ord = (random() * 1000000)::int, n = n + 1 "
                  "WHERE id = :id;\n",
        "delete": "\\set id random(1, :rows)\nDELETE FROM t_single WHERE id = :id;\n",
    }
    counted = db.pgbench(scripts, options.clients, options.seconds,
                         {"lists": options.lists, "rows": options.lists * options.rows_per_list})
    ended = time.monotonic()
    loaded = ended - began
    # The slot of a source whose table took no transaction meanwhile (t_batch's): what it keeps of the others' WAL.
    idle_retained = db.retained_wal("quire_b")
    applied_at_end = quire.metric("quire_source_transactions_total", "s")
    lag_bytes = quire.metric("quire_source_lag_bytes", "s")
    sampling.set()
    sampler.join()
    # Everything committed before the marker is applied before it: from the load's end until the marker shows is the
    # lag (the marker's own commit included).
    marker_version = quire.version("s-mark")
    db.sql("INSERT INTO t_single (list, sect, ord, n) VALUES ('mark', 0, 0, 0)")
    quire.wait_for("s-mark", marker_version)
    lag = time.monotonic() - ended
    time.sleep(1)  # the clients' statistics reach the server as their connections end
    committed = db.rows_changed("t_single") - changed_before - 1  # the marker's row is not the load's
    after = quire.versions("s-", names)
    by_versions = sum(after[name] - before[name] for name in names)
    if applied_at_end is not None and applied_before is not None:
        applied = applied_at_end - applied_before
        ratio = applied / committed
        how = f"{applied:,.0f} / {committed:,} at the end (quire_source_transactions_total)"
    else:
        # The rate applied (all of it, by the lists' versions, once the marker is in) over the rate committed.
        ratio = (by_versions / (loaded + lag)) / (committed / loaded)
        how = (f"{by_versions:,} applied in {loaded + lag:.1f} s / {committed:,} committed in {loaded:.1f} s "
               f"(rates: by the lists' versions; /metrics lacks quire_source_transactions_total)")
    lag_text = f"{lag * 1000:,.0f} ms" + (f" ({lag_bytes:,.0f} bytes by quire_source_lag_bytes)"
                                          if lag_bytes is not None else " (/metrics lacks quire_source_lag_bytes)")
    rows = [
        (f"{options.clients} SQL clients, single-row transactions, {options.seconds} s over {options.lists:,} "
         "lists: applied ÷ committed", f"{ratio:.3f}: {how}", ">= 0.95", ratio >= 0.95),
        ("  the same: the lag at the end (a row committed after the load, until its list shows it)", lag_text,
         "<= 1 s", lag <= 1),
        ("  the same: every committed transaction applied once (versions moved ÷ transactions)",
         f"{by_versions:,} / {committed:,} (pgbench counted {counted:,}, some finding no row)", "= 1",
         by_versions == committed),
        ("WAL the slot retains while following at full speed (pg_replication_slots, largest sample)",
         f"{max(retained, default=0) / 2**20:.1f} MB over {len(retained)} samples", "<= 64 MB",
         max(retained, default=0) <= 64 * 2**20),
        ("  the same for the slot of a source whose table was idle meanwhile (t_batch's), at the end",
         f"{idle_retained / 2**20:.1f} MB", "<= 64 MB", idle_retained <= 64 * 2**20),
    ]
    return rows


def batches(options, db, quire):
    """Transactions of 100 row updates over 100 lists from a few clients: row changes applied per second."""
    names = [f"b-{k}" for k in range(100)]
    before = quire.versions("b-", names)
    rows_before = quire.metric("quire_source_rows_total", "b")
    began = time.monotonic()
    update = ("\\set k random(0, :rows - 100)\nUPDATE t_batch SET ord = (random() * 1000000)::int, n = n + 1 "
              "WHERE id > :k AND id <= :k + 100;\n")
    counted = db.pgbench({"update": update}, options.batch_clients, options.batch_seconds,
                         {"rows": 100 * options.batch_rows_per_list})
    marker_version = quire.version("b-mark")
    db.sql("INSERT INTO t_batch (list, sect, ord, n) VALUES ('mark', 0, 0, 0)")
    quire.wait_for("b-mark", marker_version)
    spent = time.monotonic() - began
    after = quire.versions("b-", names)
    changes = sum(after[name] - before[name] for name in names)
    rate = changes / spent
    return [(f"transactions of 100 rows over 100 lists ({options.batch_clients} clients, {options.batch_seconds} s): "
             "row changes applied per second",
             f"{rate:,.0f} ({changes:,} rows of {counted:,} transactions in {spent:.1f} s, until all applied)",
             ">= 20,000", rate >= 20_000)]


def latency(options, db, quire):
    """Rows inserted at a steady rate into lists whose sessions wait in long polls: from the row's clock time in its
    transaction (just before its commit) to the long poll's answer."""
    import asyncio
    samples, stop = [], threading.Event()

    async def follow(name):
        reader, writer = await asyncio.open_connection("127.0.0.1", quire.port)

        async def call(method, path, body=b""):
            writer.write(f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(re.search(rb"content-length: (\d+)", head, re.I).group(1))
            return await reader.readexactly(length)

        session = json.loads(await call("POST", f"/v1/lists/{name}/sessions", b'{"limit":5}'))
        seq, newest = session["seq"], 0.0
        while not stop.is_set():
            answer = await call("GET", f"/v1/sessions/{session['session']}/changes?seq={seq}&wait=2")
            received = time.time()
            body = json.loads(answer)
            seq = body.get("seq", seq)
            stamps = [float(x) for x in re.findall(rb'"at":\s*([0-9.e+]+)', answer)]
            if stamps and max(stamps) > newest:
                newest = max(stamps)
                samples.append((received - newest) * 1000)
        writer.close()

    async def run():
        tasks = [asyncio.create_task(follow(f"lat-{k}")) for k in range(20)]
        await asyncio.sleep(1)
        insert = ("\\set l random(0, 19)\nINSERT INTO t_latency (list, sect, at) "
                  "VALUES ((:l)::text, 'all', extract(epoch FROM clock_timestamp()));\n")
        await asyncio.to_thread(db.pgbench, {"insert": insert}, 1, options.latency_seconds, {}, options.latency_rate)
        await asyncio.sleep(0.5)
        stop.set()
        await asyncio.gather(*tasks)

    asyncio.run(run())
    if not samples:
        sys.exit("sources: no long poll answered a committed row")
    ordered = sorted(samples)
    p50, p99 = ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return [("one row committed → a waiting long poll on its list answers: p50 / p99",
             f"{p50:.1f} / {p99:.1f} ms ({len(samples)} rows, {options.latency_rate}/s over 20 lists)",
             "<= 10 / <= 50 ms", p50 <= 10 and p99 <= 50)]


def copy_and_restart(options, db, binary, folder):
    """A table of `copy_rows` rows over `copy_lists` lists copied by a new source (time to its lists' serving, peak
    resident memory); then a SIGKILL and a restart: until a row committed meanwhile shows, and no copy again."""
    db.sql(f"""CREATE TABLE t_copy (id bigint PRIMARY KEY, list text NOT NULL, sect int NOT NULL, ord int NOT NULL,
                                    title text NOT NULL);
               INSERT INTO t_copy SELECT g, (g % {options.copy_lists})::text, g % 4, (g::bigint * 7919) % 100000,
                                         'Title of row ' || g
               FROM generate_series(1, {options.copy_rows}) AS g""")
    quire = Quire(binary, folder, [source("c", db.url, "public.t_copy", "c-{list}", ["ord"], ["title", "ord"])])
    began = time.monotonic()
    quire.start(wait=False)
    quire.wait_for("c-0", 0, seconds=900)
    copied = time.monotonic() - began
    peak = quire.peak_memory_mb()
    budget = 512 + 256  # lists.memoryBytes (the default, 512 MiB) + 256 MB
    untouched = quire.version("c-1")
    quire.kill()
    began = time.monotonic()
    quire.start(wait=False)
    db.sql(f"INSERT INTO t_copy VALUES ({options.copy_rows + 1}, 'mark', 0, 0, 'after the kill')")
    quire.wait_for("c-mark", 0, seconds=120)
    following = time.monotonic() - began
    again = quire.version("c-1")
    quire.stop()
    return [
        (f"initial copy of {options.copy_rows:,} rows into {options.copy_lists:,} lists",
         f"{copied:.1f} s, peak resident {peak:,.0f} MB", f"<= 60 s, <= {budget} MB",
         copied <= 60 and peak <= budget),
        ("SIGKILL, restart: the source following again (a row committed after the kill shows)",
         f"{following * 1000:,.0f} ms, " + ("no copy" if again == untouched else f"copied again ({untouched} → {again})"),
         "<= 2 s, no copy", following <= 2 and again == untouched),
    ]


def sources(options):
    binary = quire_binary(options)
    if not os.path.exists(binary):
        sys.exit(f"sources: no {binary} (make build-release)")
    folder = tempfile.mkdtemp(prefix="quire-sources-")
    db = Database(folder)
    try:
        rows_single = options.lists * options.rows_per_list
        db.sql(f"""CREATE TABLE t_single (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, list text NOT NULL,
                                          sect int NOT NULL, ord int NOT NULL, n int NOT NULL);
                   INSERT INTO t_single SELECT g, (g % {options.lists})::text, g % 4, (g::bigint * 7919) % 1000000, 0
                   FROM generate_series(1, {rows_single}) AS g;
                   SELECT setval(pg_get_serial_sequence('t_single', 'id'), {rows_single});
                   CREATE TABLE t_batch (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, list text NOT NULL,
                                         sect int NOT NULL, ord int NOT NULL, n int NOT NULL);
                   INSERT INTO t_batch SELECT g, (g % 100)::text, g % 4, (g::bigint * 7919) % 1000000, 0
                   FROM generate_series(1, {100 * options.batch_rows_per_list}) AS g;
                   SELECT setval(pg_get_serial_sequence('t_batch', 'id'), {100 * options.batch_rows_per_list});
                   CREATE TABLE t_latency (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, list text NOT NULL,
                                           sect text NOT NULL, at double precision NOT NULL);""")
        os.makedirs(os.path.join(folder, "following"))
        following = Quire(binary, os.path.join(folder, "following"), [
            source("s", db.url, "public.t_single", "s-{list}", ["ord"], ["ord", "n"]),
            source("b", db.url, "public.t_batch", "b-{list}", ["ord"], ["ord", "n"]),
            source("l", db.url, "public.t_latency", "lat-{list}", ["at desc"], ["at"]),
        ])
        following.start()
        following.wait_for("s-0", 0)
        following.wait_for("b-0", 0)
        rows = single_rows(options, db, following)
        rows += batches(options, db, following)
        rows += latency(options, db, following)
        following.stop()
        os.makedirs(os.path.join(folder, "copy"))
        rows += copy_and_restart(options, db, binary, os.path.join(folder, "copy"))
    finally:
        db.remove()
    print(f"sources: PostgreSQL 15 on loopback, the release build on SQLite ({binary})")
    width = max(len(row[0]) for row in rows)
    for name, figure, target, met in rows:
        print(f"  {name:<{width}}  {figure}  [{target}: {'met' if met else 'MISSED'}]")
