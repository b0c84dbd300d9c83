#!/usr/bin/env python3
"""Quire's HTTP benchmarks, each measured in one run against ../shared/bench/mhd-reference.c.

  scripts/bench.py http [--rounds N] [--seconds S] [--only TEXT] [--cpu-limit CPUS]
                                                     requests/s, p50, p99 of the read endpoints vs the reference,
                                                     rounds alternating (the demo page also with the default
                                                     configuration's text access log, JSON lines, an HS256 and an
                                                     ES256 token: against the reference sent the same token, and
                                                     the reference sent none)
  scripts/bench.py sessions [--count N]              resident memory growth for N sessions (50-item windows)
  scripts/bench.py long-polls [--count N]            N concurrent long polls on one list, one write: time to answer all
  scripts/bench.py load [--rounds N] [--seconds S] [--cpu-limit CPUS]
                                                     the wrk Lua scenarios of bench/ vs the reference: requests/s, p50,
                                                     p99, errors, server CPU per request
  scripts/bench.py soak [--seconds S] [--warm-up W]  pages + sessions + writes + long polls at once; fails on any error
                                                     or on resident-memory growth after the warm-up
  scripts/bench.py window-cost                        what an answer costs at a 100- and a 20,000-item window (extend,
                                                     changes after a 1-item write), over HTTP
  scripts/bench.py fan-out [--count N] [--window W]  N sessions holding W-item windows long-poll one list; one 1-item
                                                     write: time until every one is answered
  scripts/bench.py wire [--rounds N] [--seconds S]   compression: bytes on the wire of a 50-item page and session with
                                                     gzip vs plain; requests/s of the cached page and of session
                                                     creation with Accept-Encoding: gzip vs without (page: both
                                                     against the reference in the same run)
  scripts/bench.py streams [--count N] [--window W] [--blocks]
                                                     N sessions holding W-item windows each keep an event stream open
                                                     on one list: resident memory per idle stream beyond the session
                                                     (beside the stack's floor: bench/stream-reference.c, plain C on
                                                     libmicrohttpd), each with its breakdown (pool pages, connection,
                                                     response, own objects, allocator: bench/heap-census.c; --blocks
                                                     lists the blocks), why streams were refused, then one 1-item
                                                     write: time until every stream has delivered
  scripts/bench.py allocations [--seconds S]         heap allocations per request (bench/malloc-count.c preloaded) of
                                                     the read endpoints, next to the reference's for the same bytes
  scripts/bench.py writes [--rounds N] [--seconds S] [--connections C] [--no-postgres | --only-postgres]
                                                     64 producers inserting one item at a time into 1,000 lists (wrk,
                                                     bench/writes.lua): acknowledged writes/s on the in-memory store
                                                     and on SQLite, beside page reads/s of the same server, the
                                                     disk's one-at-a-time fdatasync rate, and a lone producer's
                                                     latency against one fdatasync, in N rounds (each ratio: the
                                                     median of its rounds); then on PostgreSQL (its own server,
                                                     scripts/pg-local) beside pgbench -N with as many clients, once
                                                     (--only-postgres: that row alone)
  scripts/bench.py filters                           filtered sessions (API.md 4d): a 1-item write with 1,000 sessions
                                                     on 1,000 equality filters vs none; 10,000 long polls over 100
                                                     filters, one write touching all; a session on a new filter of a
                                                     100,000-item list; a filtered answer vs the same unfiltered
  scripts/bench.py working-set [--lists N] [--items I] [--pages P] [--budget BYTES] [--folder DIR]
                                                     N stored lists of I items (quire-bench seed-lists, SQLite): the
                                                     restart to /readyz, resident memory after P first pages of
                                                     random lists, each page's latency (cold, then again warm),
                                                     and the budget's count against the resident memory it grew by
  scripts/bench.py instructions [--seconds S]        instructions per request of the read endpoints under valgrind's
                                                     callgrind, next to the reference's: a figure that does not move
                                                     with the machine's load (requests/s do, by 0.1x between runs)

Every server listens on 127.0.0.1 only, every load run is bounded in time, and the servers are stopped at exit.
"""
import argparse, asyncio, base64, bisect, json, mmap, os, re, resource, shutil, signal, socket, statistics, struct, subprocess, sys, \
    tempfile, time
import urllib.request

from proc_times import cpu_seconds  # scripts/proc_times.py, beside this file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
REFERENCE = os.environ.get("REFERENCE_SOURCE", os.path.join(ROOT, "..", "shared", "bench", "mhd-reference.c"))
children = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args, **kwargs):
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)
    children.append(process)
    return process


def stop_all():
    for process in children:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()


def request(method, url, body=None, token=None):
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if data is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=60) as response:
        return response.status, response.read()


def wait_ready(base, seconds=60):
    for _ in range(seconds * 10):
        try:
            if request("GET", base + "/readyz")[0] == 200:
                return
        except Exception:
            pass
        time.sleep(0.1)
    sys.exit("quire did not become ready")


def build():
    subprocess.run(["swift", "build", "-c", "release", "--product", "quire", "--static-swift-stdlib"],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return os.path.join(ROOT, ".build", "release", "quire")


def quire_environment(port, extra_env=None):
    """The environment a benchmarked Quire runs with: on `port`, warnings only, the demo list still."""
    env = dict(os.environ, QUIRE_SERVER_PORT=str(port), QUIRE_LOG_LEVEL="warning", QUIRE_DEMO_LIVE="false")
    env.update(extra_env or {})
    return env


def start_quire(extra_env=None):
    port = free_port()
    env = quire_environment(port, extra_env)
    process = start([build(), "serve"], env=env, cwd=tempfile.mkdtemp(prefix="quire-bench-"))
    base = f"http://127.0.0.1:{port}"
    wait_ready(base)
    return process, base


def cpu_per_request(process, seconds, run):
    """`run()` (a wrk measurement whose first figure is requests/s over `seconds`), and the CPU time `process`
    spent per request meanwhile, in microseconds: what the server itself costs, apart from wrk and the kernel's
    work for wrk, which share the machine's cores with it and move requests/s between rounds."""
    before = cpu_seconds([process.pid])
    result = run()
    spent = cpu_seconds([process.pid]) - before
    return result, spent / max(result[0] * seconds, 1) * 1e6


def wrk(url, seconds, connections=64, close=False, token=None, extra=(), script=None):
    """wrk on `url`; with `close`, every request asks for `Connection: close`, so each is on a new
    connection (the accept path); with `token`, every request carries it as a bearer token; `extra` header
    lines are added; `script` is a Lua file for wrk."""
    headers = ["-H", "Connection: close"] if close else []
    if token:
        headers += ["-H", f"Authorization: Bearer {token}"]
    for line in extra:
        headers += ["-H", line]
    if script:
        headers += ["-s", script]
    run = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", *headers, url],
                         capture_output=True, text=True, timeout=seconds + 30)
    if "Requests/sec:" not in run.stdout:
        sys.exit(f"wrk on {url} measured nothing (exit {run.returncode}):\n{run.stdout}{run.stderr}")
    return parse_wrk(run.stdout)


def wrk_command(url, seconds, script, args=(), threads=2, connections=64, timeout=None):
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", os.path.join(BENCH, script)]
    if timeout:
        command.append(f"--timeout={timeout}s")
    return command + [url, "--"] + [str(a) for a in args]


def scenario(url, seconds, script, args=(), threads=2, connections=64, timeout=None):
    """Runs one bench/*.lua scenario: (requests/s, p50 ms, p99 ms, errors, the script's summary line)."""
    out = subprocess.run(wrk_command(url, seconds, script, args, threads, connections, timeout),
                         capture_output=True, text=True, timeout=seconds + 60).stdout
    return parse_scenario(out)


def parse_scenario(out):
    rps, p50, p99, socket_errors, non2xx = parse_wrk(out, split=True)
    m = re.search(r"^[a-z-]+: .*unexpected=(\d+).*$", out, re.M)
    if not m:
        sys.exit("no summary line from the script in wrk's output:\n" + out)
    # the script's `unexpected` counts every status its flow does not expect (non-2xx included)
    return rps, p50, p99, socket_errors + max(int(m.group(1)), non2xx), m.group(0)


def parse_wrk(out, split=False):

    def ms(label):
        m = re.search(r"^\s*%s%%\s+([\d.]+)(us|ms|s)\s*$" % label, out, re.M)
        if not m:
            return float("nan")
        value, unit = float(m.group(1)), m.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    errors = sum(int(x) for x in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    non2xx = int(non2xx.group(1)) if non2xx else 0
    if split:
        return rps, ms("50"), ms("99"), errors, non2xx
    return rps, ms("50"), ms("99"), errors + non2xx


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def es256_setup(directory):
    """An ES256 key made with openssl, its JWKS file, and a token for `read:demo` signed with it: returns
    (jwks path, token). The signature is openssl's DER (r, s) turned into the 64 bytes JWS wants."""
    key = os.path.join(directory, "es256.pem")
    subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key], check=True)
    text = subprocess.run(["openssl", "ec", "-in", key, "-text", "-noout"], capture_output=True, text=True,
                          check=True).stdout
    pub = bytes.fromhex(re.search(r"pub:\s*([0-9a-f:\s]+?)\s*ASN1", text, re.S).group(1).replace(":", "")
                        .replace(" ", "").replace("\n", ""))
    jwks = os.path.join(directory, "jwks.json")
    with open(jwks, "w") as f:
        json.dump({"keys": [{"kty": "EC", "crv": "P-256", "alg": "ES256", "kid": "bench",
                             "x": b64url(pub[1:33]), "y": b64url(pub[33:65])}]}, f)
    header = b64url(json.dumps({"alg": "ES256", "kid": "bench", "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"sub": "bench", "scope": "read:demo", "exp": int(time.time()) + 3600}).encode())
    der = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key], input=f"{header}.{payload}".encode(),
                         capture_output=True, check=True).stdout
    # SEQUENCE { INTEGER r, INTEGER s }
    offset = 2 if der[1] < 0x80 else 3
    integers = []
    for _ in range(2):
        length = der[offset + 1]
        integers.append(int.from_bytes(der[offset + 2:offset + 2 + length], "big"))
        offset += 2 + length
    signature = b"".join(n.to_bytes(32, "big") for n in integers)
    return jwks, f"{header}.{payload}.{b64url(signature)}"


class CPULimit:
    """A cgroup (v1 `cpu` controller) that gives the processes put in it `cores` CPUs' worth of time per
    100 ms: the same servers on a slower machine, for the ratio's second measurement. Removed at exit."""

    def __init__(self, cores):
        self.path = f"/sys/fs/cgroup/cpu/quire-bench-{os.getpid()}"
        os.makedirs(self.path, exist_ok=True)
        with open(os.path.join(self.path, "cpu.cfs_period_us"), "w") as f:
            f.write("100000")
        with open(os.path.join(self.path, "cpu.cfs_quota_us"), "w") as f:
            f.write(str(int(cores * 100000)))

    def add(self, process):
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(process.pid))

    def remove(self):
        stop_all()
        try:
            os.rmdir(self.path)
        except OSError:
            pass


def cpu_limit(options):
    """The `--cpu-limit` cgroup that the servers go into (removed at exit), or None."""
    if not options.cpu_limit:
        return None
    limit = CPULimit(options.cpu_limit)
    import atexit
    atexit.register(limit.remove)
    print(f"servers limited to {options.cpu_limit} CPU (cgroup cpu.cfs_quota_us): a slower machine")
    return limit


def http(options):
    if not shutil.which("wrk"):
        sys.exit("wrk is missing: make deps-bench")
    limit = cpu_limit(options)
    reference_binary = compile_reference()
    server, base = start_quire()
    # The default configuration (the access log on: a text line per request, to /dev/null), and the same
    # with JSON lines.
    default_server, default = start_quire({"QUIRE_LOG_LEVEL": "info"})
    logged_server, logged = start_quire({"QUIRE_LOG_LEVEL": "info", "QUIRE_LOG_FORMAT": "json"})
    # The same server with JSON Web Tokens on: an HS256 token from `quire token`, an ES256 one made here.
    secret = "bench-secret-" + "x" * 32
    jwks, es256 = es256_setup(tempfile.mkdtemp(prefix="quire-jwt-"))
    tokened_server, tokened = start_quire({"QUIRE_AUTH_JWT_SECRET": secret, "QUIRE_AUTH_JWT_JWKS_FILE": jwks})
    servers = {base: server, default: default_server, logged: logged_server, tokened: tokened_server}
    if limit:
        for process in list(children):
            limit.add(process)
    hs256 = subprocess.run([build(), "token", "--sub", "bench", "--scope", "read:demo", "--ttl", "1h"],
                           env=dict(os.environ, QUIRE_AUTH_JWT_SECRET=secret), capture_output=True, text=True,
                           check=True).stdout.strip()
    status, body = request("POST", base + "/v1/lists/demo/sessions", {"limit": 20})
    session = json.loads(body)
    endpoints = [
        ("GET /healthz", "/healthz", 0.95, False),
        ("GET /v1/lists/demo?limit=20", "/v1/lists/demo?limit=20", 0.9, False),
        ("GET changes (nothing new)", f"/v1/sessions/{session['session']}/changes?since={session['version']}", 0.85,
         False),
        ("GET demo page, default config (text log)", default + "/v1/lists/demo?limit=20", 0.8, False),
        ("GET demo page, JSON access log", logged + "/v1/lists/demo?limit=20", 0.75, False),
        ("GET /v1/lists/demo?limit=20 HS256", (tokened + "/v1/lists/demo?limit=20", hs256), 0.8, False),
        ("GET /v1/lists/demo?limit=20 ES256", (tokened + "/v1/lists/demo?limit=20", es256), None, False),
        ("GET /healthz, new connections", "/healthz", 0.8, True),
    ]
    print(f"{'endpoint':40} {'server':10} {'requests/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    results = []
    for name, path, target, close in endpoints:
        if options.only and options.only not in name:
            continue
        path, token = path if isinstance(path, tuple) else (path, None)
        url = path if path.startswith("http") else base + path
        status, expected = request("GET", url, token=token)
        if status != 200:
            sys.exit(f"{name}: {status} {expected[:300]!r}")
        body_file = os.path.join(tempfile.mkdtemp(), "body")
        with open(body_file, "wb") as f:
            f.write(expected)
        port = free_port()
        reference = start([reference_binary, str(port), body_file])
        if limit:
            limit.add(reference)
        time.sleep(0.3)
        wrk(url, 1, token=token)  # warm-up, both
        wrk(f"http://127.0.0.1:{port}/", 1, token=token)
        quire_server = next(process for prefix, process in servers.items() if url.startswith(prefix + "/"))
        ratios = []
        cpu_ratios = []
        # A token's request carries ~250 bytes of `Authorization` field that libmicrohttpd reads before Quire
        # sees the request (about 2,500 instructions of its parser, callgrind): the stack's cost, which the
        # reference pays too when it is sent the same field. Its target is judged against that reference; the
        # ratio against the reference sent no field is printed beside it.
        bare_ratios = []
        for round in range(options.rounds):
            def measure_reference():
                return cpu_per_request(
                    reference, options.seconds,
                    lambda: wrk(f"http://127.0.0.1:{port}/", options.seconds, close=close, token=token))

            def measure_quire():
                return cpu_per_request(
                    quire_server, options.seconds, lambda: wrk(url, options.seconds, close=close, token=token))

            # Which server goes first alternates from round to round: the one measured right after the other
            # inherits its TIME_WAIT sockets and the kernel's state, which favours neither side then.
            if round % 2 == 0:
                (ref, ref_cpu), (quire, quire_cpu) = measure_reference(), measure_quire()
            else:
                (quire, quire_cpu), (ref, ref_cpu) = measure_quire(), measure_reference()
            ratios.append(quire[0] / ref[0])
            cpu_ratios.append(ref_cpu / quire_cpu)
            rows = [("reference" if token is None else "ref+token", ref), ("quire", quire)]
            if token is not None:
                bare = wrk(f"http://127.0.0.1:{port}/", options.seconds, close=close)
                bare_ratios.append(quire[0] / bare[0])
                rows.append(("reference", bare))
            for label, (rps, p50, p99, errors) in rows:
                print(f"{name:40} {label:10} {rps:11.0f} {p50:8.3f} {p99:8.3f} {errors:7d}")
        reference.terminate()
        reference.wait()
        median = statistics.median(ratios)
        results.append((name + (", reference sent the same token" if token else ""), median, target, ratios,
                        statistics.median(cpu_ratios)))
        if token is not None:
            results.append((name + ", reference sent no token", statistics.median(bare_ratios), None, bare_ratios,
                            None))
    print()
    # The second ratio is the reference's server CPU time per request over Quire's (median of the rounds): the
    # share of the gap that is the server's own work, which wrk's and the kernel's noise moves less.
    print("| endpoint | median ratio to the reference | rounds | target | server CPU per request, reference / quire |")
    print("| --- | --- | --- | --- | --- |")
    for name, median, target, ratios, cpu_ratio in results:
        verdict = "—" if target is None else f">= {target}x: {'met' if median >= target else '**not met**'}"
        cpu = "" if cpu_ratio is None else f"{cpu_ratio:.2f}x"
        print(f"| {name} | {median:.2f}x | {', '.join(f'{r:.2f}' for r in ratios)} | {verdict} | {cpu} |")


def compile_reference(source=REFERENCE):
    """A C server on libmicrohttpd (by default ../shared/bench/mhd-reference.c) built in a fresh folder."""
    binary = os.path.join(tempfile.mkdtemp(prefix="quire-ref-"), os.path.splitext(os.path.basename(source))[0])
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libmicrohttpd"], capture_output=True, text=True,
                           check=True).stdout.split()
    subprocess.run(["cc", "-O2", "-o", binary, source] + flags, check=True)
    return binary


def start_reference(binary, body):
    body_file = os.path.join(tempfile.mkdtemp(prefix="quire-ref-body-"), "body")
    with open(body_file, "wb") as f:
        f.write(body)
    port = free_port()
    process = start([binary, str(port), body_file])
    wait_listening(port)
    return process, f"http://127.0.0.1:{port}"


def wait_listening(port, seconds=5):
    """Until something accepts connections on `port` (at most `seconds`)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)


def load(options):
    """Each bench/*.lua scenario against quire and, in the same run, against the reference serving comparable bytes."""
    if not shutil.which("wrk"):
        sys.exit("wrk is missing: make deps-bench")
    limit = cpu_limit(options)
    reference_binary = compile_reference()
    server, base = start_quire()
    if limit:
        limit.add(server)
    # the bytes the reference answers with: what quire answers for the scenario's typical request
    _, first_page = request("GET", base + "/v1/lists/demo?limit=20")
    _, created = request("POST", base + "/v1/lists/demo/sessions", {"limit": 20})
    created = json.loads(created)
    _, extended = request("GET", base + f"/v1/sessions/{created['session']}/changes?since={created['version']}"
                                         "&extend=next&limit=20")
    request("DELETE", base + f"/v1/sessions/{created['session']}")
    seconds, c = options.seconds, options.connections
    wait = 10
    scenarios = [
        # name, script, wrk args, reference body (None: no comparable reference), wrk --timeout
        ("walk-pages (20-item pages)", "walk-pages.lua", ["demo", 20], first_page, None),
        ("sessions (create, 4 extends, 4 polls, delete)", "sessions.lua", ["demo", 20, 4, 4], extended, None),
        (f"write-and-poll ({options.write_rate} writes/s, wait={wait})", "write-and-poll.lua",
         ["demo", options.write_rate, wait, 20], None, wait + 30),
    ]
    print(f"{'scenario':48} {'server':10} {'requests/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    summary = []
    for name, script, args, body, timeout in scenarios:
        reference = ref_base = None
        if body is not None:
            reference, ref_base = start_reference(reference_binary, body)
            if limit:
                limit.add(reference)
        scenario(base, 1, script, args, connections=c, timeout=timeout)  # warm-up
        rows = {"reference": [], "quire": []}
        cpu = {"reference": [], "quire": []}  # server CPU time per request, microseconds
        notes = []
        for _ in range(options.rounds):
            runs = [("reference", ref_base, reference), ("quire", base, server)] if ref_base \
                else [("quire", base, server)]
            for label, url, process in runs:
                row, per_request = cpu_per_request(
                    process, seconds, lambda: scenario(url, seconds, script, args, connections=c, timeout=timeout))
                rows[label].append(row)
                cpu[label].append(per_request)
                print(f"{name:48} {label:10} {row[0]:11.0f} {row[1]:8.3f} {row[2]:8.3f} {row[3]:7d}"
                      f"  server CPU {per_request:6.2f} us/request")
                if label == "quire":
                    notes.append(row[4])
        if reference:
            reference.terminate()
            reference.wait()
        summary.append((name, rows, notes, cpu))
    print()
    print("| scenario | server | requests/s (median) | p50 ms | p99 ms | errors (all rounds) | ratio to the reference "
          "| server CPU per request (median) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    failed = False
    for name, rows, notes, cpu in summary:
        ratios = [q[0] / r[0] for q, r in zip(rows["quire"], rows["reference"])]
        for label in ("reference", "quire"):
            runs = rows[label]
            if not runs:
                print(f"| {name} | {label} | — (it cannot hold a long poll) | | | | | |")
                continue
            errors = sum(r[3] for r in runs)
            failed |= label == "quire" and errors > 0
            ratio = f"{statistics.median(ratios):.2f}x (rounds {', '.join(f'{x:.2f}' for x in ratios)})" \
                if label == "quire" and ratios else ""
            lags = [re.search(r"wake-lag-ms p50=([\d.]+) p99=([\d.]+)", n) for n in notes]
            if label == "quire" and all(lags):
                ratio = (f"wake-up lag (write sent to poll answered): p50 "
                         f"{statistics.median(float(m.group(1)) for m in lags):.1f} ms, p99 "
                         f"{statistics.median(float(m.group(2)) for m in lags):.1f} ms")
            # Beside the median, the ratio of the reference's to Quire's (per round, then the median): how much more
            # of the server's own CPU a request costs, apart from wrk's share of the same cores.
            spent = f"{statistics.median(cpu[label]):.2f} us"
            if label == "quire" and cpu["reference"]:
                relative = statistics.median(r / q for r, q in zip(cpu["reference"], cpu["quire"]))
                spent += f" (reference / quire: {relative:.2f}x)"
            print(f"| {name} | {label} | {statistics.median(r[0] for r in runs):.0f} | "
                  f"{statistics.median(r[1] for r in runs):.2f} | {statistics.median(r[2] for r in runs):.2f} | "
                  f"{errors} | {ratio} | {spent} |")
    print()
    for name, rows, notes, _ in summary:
        print(f"{name}, last quire round: {notes[-1]}")
    if failed:
        sys.exit("load: quire answered with errors (see the table)")


def metric(base, name):
    try:
        _, text = request("GET", base + "/metrics")
        m = re.search(rb"^%s (\d+)" % name.encode(), text, re.M)
        return int(m.group(1)) if m else -1
    except Exception:
        return -1


def soak(options):
    """Pages, session flows, writes and long polls at once; RSS sampled every few seconds after a warm-up."""
    if not shutil.which("wrk"):
        sys.exit("wrk is missing: make deps-bench")
    process, base = start_quire()
    total = options.warm_up + options.seconds
    wait = 10
    runs = [
        ("walk-pages", wrk_command(base, total, "walk-pages.lua", ["demo", 20], threads=1, connections=16)),
        ("sessions", wrk_command(base, total, "sessions.lua", ["demo", 20, 4, 4], threads=1, connections=16)),
        ("write-and-poll", wrk_command(base, total, "write-and-poll.lua", ["demo", options.write_rate, wait, 20],
                                       threads=2, connections=32, timeout=wait + 30)),
    ]
    print(f"soak: {options.warm_up} s warm-up + {options.seconds} s measured, 16 walkers, 16 session clients, "
          f"1 producer ({options.write_rate} writes/s) and 31 long-polling clients (wait={wait}) at once")
    started = time.monotonic()
    outputs = {}
    procs = [(name, subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
             for name, command in runs]
    for _, proc in procs:
        children.append(proc)
    samples = []
    while time.monotonic() - started < total - 0.5:
        time.sleep(min(options.interval, max(0.1, total - 0.5 - (time.monotonic() - started))))
        t = time.monotonic() - started
        samples.append((t, rss_mb(process.pid), metric(base, "quire_sessions_active"),
                        metric(base, "quire_long_polls_waiting")))
        print(f"  t={t:5.1f} s  RSS {samples[-1][1]:7.1f} MB  sessions {samples[-1][2]:6d}  waiting {samples[-1][3]:4d}"
              f"{'  (warm-up)' if t < options.warm_up else ''}", flush=True)
    for name, proc in procs:
        try:
            outputs[name] = proc.communicate(timeout=total + 60)[0]
        except subprocess.TimeoutExpired:
            proc.kill()
            sys.exit(f"soak: wrk ({name}) did not stop in time")
    if process.poll() is not None:
        sys.exit(f"soak: quire exited during the run (status {process.returncode})")
    print()
    print(f"{'scenario':16} {'requests/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    errors = 0
    lines = []
    for name, _ in runs:
        rps, p50, p99, e, line = parse_scenario(outputs[name])
        errors += e
        lines.append(line)
        print(f"{name:16} {rps:11.0f} {p50:8.3f} {p99:8.3f} {e:7d}")
    for line in lines:
        print(f"  {line}")
    measured = [s for s in samples if s[0] >= options.warm_up]
    if len(measured) < 2:
        sys.exit("soak: too few samples after the warm-up")
    first, last = measured[0][1], measured[-1][1]
    peak = max(s[1] for s in measured)
    growth = last - first
    print(f"soak: RSS after warm-up {first:.1f} MB, at the end {last:.1f} MB (growth {growth:+.1f} MB, "
          f"peak {peak:.1f} MB; limit +{options.max_growth:.0f} MB); errors {errors}")
    print("soak: RSS samples (MB): " + " ".join(f"{s[1]:.1f}" for s in samples))
    problems = []
    if errors:
        problems.append(f"{errors} errors")
    if growth > options.max_growth:
        problems.append(f"resident memory grew by {growth:.1f} MB after the warm-up")
    if problems:
        sys.exit("soak FAILED: " + "; ".join(problems))
    print("soak: passed (zero errors, no resident-memory growth beyond noise after the warm-up)")


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


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


async def long_polls_async(port, base, count):
    created = []
    connection = Connection(port)
    for _ in range(count):
        status, body = connection.request("POST", "/v1/lists/demo/sessions", b'{"limit":20}')
        created.append(json.loads(body))
    answered = []

    async def poll(session):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        path = f"/v1/sessions/{session['session']}/changes?since={session['version']}&wait=30"
        writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"content-length: (\d+)", head, re.I).group(1))
        body = await reader.readexactly(length)
        answered.append((time.monotonic(), int(head.split()[1]), json.loads(body)["version"]))
        writer.close()

    tasks = [asyncio.create_task(poll(session)) for session in created]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        _, metrics = await asyncio.to_thread(request, "GET", base + "/metrics")
        waiting = int(re.search(rb"quire_long_polls_waiting (\d+)", metrics).group(1))
        if waiting >= count:
            break
        await asyncio.sleep(0.05)
    print(f"long-polls: {waiting} waiting")
    write_time = time.monotonic()
    await asyncio.to_thread(request, "POST", base + "/v1/lists/demo/ops",
                            {"ops": [{"op": "updateItems", "items": [{"id": "m-1", "type": "message", "data": {"edited": True}}]}]})
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=60)
    latest = max(t for t, _, _ in answered) - write_time
    statuses = {status for _, status, _ in answered}
    versions = {version for _, _, version in answered}
    print(f"long-polls: {len(answered)} answered (statuses {sorted(statuses)}, versions {sorted(versions)}); "
          f"the last {latest * 1000:.0f} ms after the write (target <= 1000 ms)")


def long_polls(options):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, options.count + 1024), hard))
    process, base = start_quire()
    port = int(base.rsplit(":", 1)[1])
    asyncio.run(long_polls_async(port, base, options.count))


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


def fan_out_run(port, base, count, window):
    """Opens `count` sessions holding `window` items; bench/fan-out-client.c parks a long poll for each on its
    own connection, sends one 1-item write and reads every answer with one epoll loop."""
    binary = os.path.join(tempfile.mkdtemp(prefix="quire-fan-out-"), "fan-out-client")
    subprocess.run(["cc", "-O2", "-o", binary, os.path.join(BENCH, "fan-out-client.c")], check=True)
    connection = Connection(port)
    paths = os.path.join(os.path.dirname(binary), "paths")
    with open(paths, "w") as f:
        for _ in range(count):
            session, version = open_window(connection, "feed", window)
            f.write(f"/v1/sessions/{session}/changes?since={version}&wait=60\n")
    body = json.dumps({"ops": [{"op": "updateItems", "items": [{"id": "f10", "type": "row", "data": {"edited": True}}]}]})
    client = subprocess.Popen([binary, str(port), paths, "/v1/lists/feed/ops", body],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    children.append(client)
    client.stdout.readline()  # ready
    waiting = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        waiting = metric(base, "quire_long_polls_waiting")
        if waiting >= count:
            break
        time.sleep(0.1)
    client.stdin.write("go\n")
    client.stdin.flush()
    result = client.stdout.readline().strip()
    client.wait(timeout=180)
    last = re.search(r"last (\d+) ms", result)
    ok = client.returncode == 0 and last and int(last.group(1)) <= 1000
    print(f"fan-out: {count} sessions holding {window}-item windows, {waiting} long polls waiting; one 1-item write")
    print(f"fan-out: {result} (target: the last <= 1000 ms) {'ok' if ok else 'MISSED'}")


def fan_out(options):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, options.count + 4096), hard))
    process, base = start_quire({"QUIRE_LONG_POLL_MAX_WAITERS": str(options.count + 100),
                                 "QUIRE_SERVER_CONNECTION_LIMIT": str(options.count + 1000)})
    port = int(base.rsplit(":", 1)[1])
    put_feed(base, max(options.window * 2, 20_000))
    fan_out_run(port, base, options.count, options.window)


def wire_bytes(base, path, method="GET", body=None, gzip=False):
    """The body bytes on the wire of one request, and its Content-Encoding."""
    headers = {"Accept-Encoding": "gzip"} if gzip else {"Accept-Encoding": "identity"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=60) as response:
        return len(response.read()), response.headers.get("Content-Encoding")


def wire(options):
    if not shutil.which("wrk"):
        sys.exit("wrk is missing: make deps-bench")
    reference_binary = compile_reference()
    quire, base = start_quire()
    page = "/v1/lists/demo?limit=50"
    print("| figure | plain | gzip | ratio | target |")
    print("| --- | --- | --- | --- | --- |")
    for name, path, method, body in (("50-item page", page, "GET", None),
                                      ("50-item session creation", "/v1/lists/demo/sessions", "POST", {"limit": 50})):
        plain, _ = wire_bytes(base, path, method, body)
        zipped, encoding = wire_bytes(base, path, method, body, gzip=True)
        ratio = zipped / plain
        verdict = "meets" if ratio <= 0.2 and encoding == "gzip" else "MISSES"
        print(f"| bytes on the wire, {name} | {plain} | {zipped} ({encoding}) | {ratio:.1%} | <= 20% ({verdict}) |")
    status, expected = request("GET", base + page)
    reference, reference_base = start_reference(reference_binary, expected)
    session_script = os.path.join(tempfile.mkdtemp(prefix="quire-wire-"), "create.lua")
    with open(session_script, "w") as f:
        f.write('wrk.method = "POST"\nwrk.body = \'{"limit":50}\'\nwrk.headers["Content-Type"] = "application/json"\n')
    gzip = ("Accept-Encoding: gzip",)
    wrk(base + page, 1, extra=gzip)  # warm-up: the page and its gzip variant are cached
    page_ratios, create_ratios = [], []
    print()
    print(f"{'run':44} {'requests/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    sessions = base + "/v1/lists/demo/sessions"
    for round in range(options.rounds):
        # Plain and gzip take turns at going first, so that neither always runs on a warmer (or more loaded)
        # machine; the ratios are of runs of the same round.
        order = (False, True) if round % 2 == 0 else (True, False)
        ref = wrk(reference_base + "/", options.seconds)
        page_runs = {zip_it: wrk(base + page, options.seconds, extra=gzip if zip_it else ()) for zip_it in order}
        create_runs = {zip_it: wrk(sessions, options.seconds, script=session_script, extra=gzip if zip_it else ())
                       for zip_it in order}
        if quire.poll() is not None:
            sys.exit(f"quire exited with {quire.returncode} during round {round + 1}")
        plain, zipped = page_runs[False], page_runs[True]
        create_plain, create_zipped = create_runs[False], create_runs[True]
        print(f"round {round + 1}")
        for label, (rps, p50, p99, errors) in (("  reference (C, plain page)", ref),
                                               (f"  cached page, plain ({plain[0] / ref[0]:.2f}x reference)", plain),
                                               (f"  cached page, gzip ({zipped[0] / ref[0]:.2f}x reference)", zipped),
                                               ("  session creation, plain", create_plain),
                                               ("  session creation, gzip", create_zipped)):
            print(f"{label:44} {rps:11.0f} {p50:8.3f} {p99:8.3f} {errors:7d}")
        page_ratios.append((zipped[0] / ref[0]) / (plain[0] / ref[0]))
        create_ratios.append(create_zipped[0] / create_plain[0])
    reference.terminate()
    reference.wait()
    page_median, create_median = statistics.median(page_ratios), statistics.median(create_ratios)
    print()
    print(f"cached page with gzip: median {page_median:.2f}x the plain page (each against the reference in the same "
          f"round) ({'meets' if page_median >= 0.95 else 'BELOW'} the 0.95x target)")
    print(f"session creation (limit=50) with gzip: median {create_median:.2f}x without "
          f"({'meets' if create_median >= 0.8 else 'BELOW'} the 0.8x target)")


class HeapCensus:
    """bench/heap-census.c preloaded into one server: the heap blocks it allocates while recording is on and still
    holds when it stops, each with the size asked for, the size its allocator gave and who asked for it, read
    back from a file both map. `breakdown` sorts them into an idle stream's parts and matches libmicrohttpd's
    connection pools with the pages the kernel holds for them (/proc/PID/pagemap)."""

    HEADER_WORDS, ENTRY_WORDS = 8, 4

    def __init__(self, entries=1 << 20):
        directory = tempfile.mkdtemp(prefix="quire-census-")
        self.library = os.path.join(directory, "heap-census.so")
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", self.library, os.path.join(BENCH, "heap-census.c"),
                        "-ldl"], check=True)
        self.path = os.path.join(directory, "census")
        self.entries = entries
        self.map = None

    def environment(self):
        """What the server's environment needs to carry the census."""
        return {"LD_PRELOAD": self.library, "HEAP_CENSUS_FILE": self.path, "HEAP_CENSUS_ENTRIES": str(self.entries)}

    def recording(self, on):
        if self.map is None:
            with open(self.path, "r+b") as f:
                self.map = mmap.mmap(f.fileno(), 0)
        struct.pack_into("<Q", self.map, 0, 1 if on else 0)

    def blocks(self):
        """(address, size asked, usable size, caller) of every block held; the count that did not fit."""
        unpack = struct.unpack_from
        capacity, _, lost = unpack("<3Q", self.map, 8)
        start = self.HEADER_WORDS * 8
        entries = [unpack("<4Q", self.map, start + index * 32) for index in range(capacity)]
        return [entry for entry in entries if entry[0] > 1], lost

    def breakdown(self, pid, count, pool_bytes, resident_growth):
        """An idle stream's bytes, per stream: the pool's resident part (its pages the kernel holds), the
        connection, the response and the server's own blocks (their sizes), the allocator's rounding of those
        sizes, and the rest of the resident growth (pages only partly used, the allocator's own, stacks)."""
        blocks, lost = self.blocks()
        modules = [(start, end, path) for start, end, path in memory_map(pid)]
        starts = [start for start, _, _ in modules]
        symbols = {}

        def where(address):
            index = bisect.bisect_right(starts, address) - 1
            if index < 0 or address >= modules[index][1]:
                return "", None
            path = modules[index][2]
            if "libmicrohttpd" not in path:
                return path, None
            if path not in symbols:
                base = min(start for start, _, p in modules if p == path)
                symbols[path] = (base, exported_functions(path))
            base, functions = symbols[path]
            offset = address - base
            for value, size, name in functions:
                if value <= offset < value + size:
                    return path, name
            return path, None

        parts = {"pool": 0, "connection": 0, "response": 0, "own": 0, "other": 0}
        sizes = {part: {} for part in parts}  # part: {(size asked, size given): blocks}
        rounding = 0
        pools = []
        server = os.path.realpath(f"/proc/{pid}/exe")
        for address, size, usable, who in blocks:
            path, function = where(who)
            if "libmicrohttpd" in path:
                if size == pool_bytes:
                    pools.append((address, size))
                    continue
                part = "response" if function and "response" in function else "connection"
            elif path == server:
                part = "own"
            else:
                part = "other"
            parts[part] += size
            rounding += usable - size
            sizes[part][(size, usable)] = sizes[part].get((size, usable), 0) + 1
        page = os.sysconf("SC_PAGE_SIZE")
        resident_pages, pool_pages = set(), set()
        with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
            for address, size in pools:
                first, last = address // page, (address + size - 1) // page
                pagemap.seek(first * 8)
                flags = struct.unpack(f"<{last - first + 1}Q", pagemap.read((last - first + 1) * 8))
                for index, word in enumerate(flags):
                    pool_pages.add(first + index)
                    if word >> 63:
                        resident_pages.add(first + index)
        # A resident page counts for the bytes of it that pools hold (a page two pools share counts once).
        resident = 0
        ranges = sorted(pools)
        for page_number in resident_pages:
            low, high = page_number * page, (page_number + 1) * page
            index = bisect.bisect_right(ranges, (high, 0))
            for address, size in ranges[max(0, index - 3):index]:
                resident += max(0, min(high, address + size) - max(low, address))
        parts["pool"] = resident
        named = sum(parts.values()) + rounding
        per = max(len(pools), 1)
        result = {name: value / count for name, value in parts.items()}
        result.update(rounding=rounding / count, rest=(resident_growth - named) / count, pools=len(pools),
                      pool_pages=len(resident_pages) / per, pool_bytes=pool_bytes, lost=lost,
                      blocks=len(blocks) / count, sizes=sizes)
        return result


def memory_map(pid):
    """(start, end, path) of every mapping of `pid`, by address."""
    regions = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            start, end = (int(value, 16) for value in fields[0].split("-"))
            regions.append((start, end, fields[5] if len(fields) > 5 else ""))
    return sorted(regions)


def exported_functions(path):
    """(offset, size, name) of the functions a shared library exports (nm -D)."""
    out = subprocess.run(["nm", "-D", "--defined-only", "-S", path], capture_output=True, text=True).stdout
    functions = []
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[2] in ("T", "t"):
            functions.append((int(fields[0], 16), int(fields[1], 16), fields[3]))
    return functions


def describe_blocks(parts, count, least=0.5):
    """The blocks of each part held by at least `least` of the `count` streams each: how many a stream, of which
    size (asked/given by the allocator)."""
    lines = []
    for part, sizes in parts["sizes"].items():
        common = sorted(((blocks / count, size, usable) for (size, usable), blocks in sizes.items()
                         if blocks / count >= least), key=lambda entry: (-entry[1] * entry[0]))
        if common:
            lines.append(f"  {part}: " + ", ".join(f"{share:.2f} x {size}/{usable} B" for share, size, usable in common))
    return "\n".join(lines)


def describe_breakdown(parts):
    """One line: an idle stream's bytes by part (KB, per stream)."""
    kb = lambda value: f"{value / 1024:.2f}"
    line = (f"pool {kb(parts['pool'])} ({parts['pool_pages']:.2f} resident pages of its "
            f"{parts['pool_bytes'] // 1024} KiB), connection {kb(parts['connection'])}, response "
            f"{kb(parts['response'])}, own objects {kb(parts['own'])}, other libraries {kb(parts['other'])}, "
            f"allocator rounding {kb(parts['rounding'])}, rest {kb(parts['rest'])} "
            f"({parts['blocks']:.1f} blocks a stream)")
    if parts["lost"]:
        line += f"; {parts['lost']} blocks not counted (census table full)"
    return line


def stream_floor(client_binary, count, pool_bytes, census, preload=None):
    """bench/stream-reference.c, plain C on libmicrohttpd with Quire's per-connection memory pool, holding `count`
    idle streams opened by the same client: the resident memory per idle stream that the stack itself takes,
    below which no server on it can go. Returns (bytes per stream, the client's delivery line, the breakdown of
    an idle stream's bytes: see HeapCensus)."""
    binary = compile_reference(os.path.join(BENCH, "stream-reference.c"))
    directory = os.path.dirname(binary)
    environment = dict(os.environ, **census.environment())
    if preload:
        environment["LD_PRELOAD"] += " " + preload  # after the census, which passes calls on to it
    server = subprocess.Popen([binary, "0", str(pool_bytes)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True, env=environment)
    children.append(server)
    port = int(server.stdout.readline().split()[1])
    paths = os.path.join(directory, "paths")
    with open(paths, "w") as f:
        for index in range(count):
            f.write(f"/stream/{index}\n")
    time.sleep(1)
    before = rss_mb(server.pid)
    census.recording(True)
    client = subprocess.Popen([client_binary, str(port), paths, "/write", "{}"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    children.append(client)
    client.stdout.readline()  # `ready N`: every stream has its head
    time.sleep(2)
    census.recording(False)
    after = rss_mb(server.pid)
    growth = (after - before) * 1024 * 1024
    breakdown = census.breakdown(server.pid, count, pool_bytes, growth)
    client.stdin.write("go\n")
    client.stdin.flush()
    delivered = client.stdout.readline().strip()
    client.wait(timeout=180)
    server.terminate()
    server.wait(timeout=30)
    return growth / count, delivered, breakdown


def streams(options):
    """bench/stream-client.c opens an event stream for each of `count` sessions holding `window` items, on its
    own connection; the server's resident memory is read before and after (every stream idle), then one 1-item
    write is timed until every stream has delivered its event. The same client against bench/stream-reference.c
    first gives the stack's own floor per idle stream, printed beside Quire's figure. Both servers run with
    bench/heap-census.c preloaded (it passes every allocation on to the server's own allocator), which gives the
    breakdown of an idle stream's bytes printed under each figure."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, options.count + 4096), hard))
    binary = os.path.join(tempfile.mkdtemp(prefix="quire-streams-"), "stream-client")
    subprocess.run(["cc", "-O2", "-o", binary, os.path.join(BENCH, "stream-client.c")], check=True)
    pool_bytes = 16 << 10  # server.connectionMemoryBytes' default, which Quire runs with below
    floor, floor_delivery, floor_parts = stream_floor(binary, options.count, pool_bytes, HeapCensus())
    census = HeapCensus()
    process, base = start_quire({"QUIRE_EVENTS_MAX_STREAMS": str(options.count + 100),
                                 "QUIRE_SERVER_CONNECTION_LIMIT": str(options.count + 1000),
                                 "QUIRE_SESSIONS_CAPACITY": str(options.count + 1000), **census.environment()})
    port = int(base.rsplit(":", 1)[1])
    put_feed(base, max(options.window * 2, 20_000))
    connection = Connection(port)
    paths = os.path.join(os.path.dirname(binary), "paths")
    with open(paths, "w") as f:
        for _ in range(options.count):
            session, _ = open_window(connection, "feed", options.window)
            f.write(f"/v1/sessions/{session}/events\n")
    time.sleep(2)
    before = rss_mb(process.pid)
    census.recording(True)
    body = json.dumps({"ops": [{"op": "updateItems", "items": [{"id": "f10", "type": "row", "data": {"edited": True}}]}]})
    client = subprocess.Popen([binary, str(port), paths, "/v1/lists/feed/ops", body],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    children.append(client)
    ready = client.stdout.readline().strip()
    open_streams = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        open_streams = metric(base, "quire_event_streams_open")
        if open_streams >= options.count:
            break
        time.sleep(0.1)
    time.sleep(2)
    census.recording(False)
    after = rss_mb(process.pid)
    per_stream_kb = (after - before) * 1024 / max(open_streams, 1)
    parts = census.breakdown(process.pid, max(open_streams, 1), pool_bytes, (after - before) * 1024 * 1024)
    # What can refuse a stream, as the server counts it: sessions evicted (their streams get 404), connections
    # refused when accepted, requests cut by the whole-request deadline.
    evicted = metric(base, "quire_sessions_evicted_total")
    refused = metric(base, "quire_http_connections_refused_total")
    cut = metric(base, "quire_http_requests_cut_total")
    client.stdin.write("go\n")
    client.stdin.flush()
    result = client.stdout.readline().strip()
    client.wait(timeout=180)
    last = re.search(r"last (\d+) ms", result)
    delivered_ok = client.returncode == 0 and last and int(last.group(1)) <= 1000
    print(f"streams: {options.count} sessions holding {options.window}-item windows; client: {ready}; "
          f"{open_streams} streams open on the server; {evicted} sessions evicted, {refused} connections refused, "
          f"{cut} requests cut")
    floor_kb = floor / 1024
    ratio = per_stream_kb / floor_kb
    print(f"streams-memory: {per_stream_kb:.2f} KB resident per idle stream beyond its session "
          f"({before:.1f} MB before the streams, {after:.1f} MB with them): {ratio:.2f}x the floor, "
          f"{per_stream_kb - floor_kb:+.2f} KB (target <= 1.25x) {'ok' if ratio <= 1.25 else 'MISSED'}")
    print(f"streams-memory, Quire's idle stream: {describe_breakdown(parts)}")
    if options.blocks:
        print(describe_blocks(parts, max(open_streams, 1)))
    print(f"streams-memory floor: {floor_kb:.2f} KB resident per idle stream for plain C on libmicrohttpd with the same "
          f"{pool_bytes // 1024} KiB connection pool (bench/stream-reference.c, same client; {floor_delivery})")
    print(f"streams-memory, the floor's idle stream: {describe_breakdown(floor_parts)}")
    if options.blocks:
        print(describe_blocks(floor_parts, options.count))
    print(f"streams-delivery: {result} (target: every stream, the last <= 1000 ms) "
          f"{'ok' if delivered_ok else 'MISSED'}")


def malloc_counter():
    """bench/malloc-count.c built as a preloadable library, and a fresh counter file for one process."""
    directory = tempfile.mkdtemp(prefix="quire-malloc-")
    library = os.path.join(directory, "malloc-count.so")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", library, os.path.join(BENCH, "malloc-count.c")],
                   check=True)
    return library, directory


class Counts:
    """The three counters a preloaded malloc-count.so keeps in `path`: allocations, frees, bytes."""

    def __init__(self, path):
        import mmap
        with open(path, "r+b") as f:
            self.map = mmap.mmap(f.fileno(), 4096)

    def read(self):
        import struct
        return struct.unpack_from("<3Q", self.map, 0)


def counted_run(counts, url, seconds, token=None):
    """wrk on `url` (after a warm-up): allocations and bytes allocated per completed request."""
    wrk(url, 1, token=token)
    before = counts.read()
    out = subprocess.run(["wrk", "-t2", "-c32", f"-d{seconds}s", *(["-H", f"Authorization: Bearer {token}"]
                                                                    if token else []), url],
                         capture_output=True, text=True, timeout=seconds + 30).stdout
    after = counts.read()
    done = int(re.search(r"(\d+) requests in", out).group(1))
    return (after[0] - before[0]) / done, (after[2] - before[2]) / done, done


def allocations(options):
    """Heap allocations per request, counted by a preloaded malloc interposer, in quire and in the reference
    answering the same bytes (libmicrohttpd's own share: the floor)."""
    if not shutil.which("wrk"):
        sys.exit("wrk is missing: make deps-bench")
    library, directory = malloc_counter()
    reference_binary = compile_reference()
    configurations = [("--log-level warning", {}), ("default (text access log)", {"QUIRE_LOG_LEVEL": "info"})]
    servers = []
    for index, (label, env) in enumerate(configurations):
        path = os.path.join(directory, f"quire-{index}")
        open(path, "wb").close()
        _, base = start_quire(dict(env, LD_PRELOAD=library, MALLOC_COUNT_FILE=path))
        servers.append((label, base, Counts(path)))
    # JSON Web Tokens on: the page with an HS256 token (verified once, then from the token cache).
    secret = "bench-secret-" + "x" * 32
    path = os.path.join(directory, "quire-jwt")
    open(path, "wb").close()
    _, tokened = start_quire(dict(QUIRE_AUTH_JWT_SECRET=secret, LD_PRELOAD=library, MALLOC_COUNT_FILE=path))
    tokened_counts = Counts(path)
    hs256 = subprocess.run([build(), "token", "--sub", "bench", "--scope", "read:demo", "--ttl", "1h"],
                           env=dict(os.environ, QUIRE_AUTH_JWT_SECRET=secret), capture_output=True, text=True,
                           check=True).stdout.strip()
    base = servers[0][1]
    _, created = request("POST", base + "/v1/lists/demo/sessions", {"limit": 20})
    created = json.loads(created)
    endpoints = [
        ("GET /healthz", "/healthz"),
        ("GET /v1/lists/demo?limit=20", "/v1/lists/demo?limit=20"),
        ("GET changes (nothing new)", f"/v1/sessions/{created['session']}/changes?since={created['version']}"),
    ]
    print(f"{'endpoint':36} {'server':28} {'allocations/request':>20} {'bytes/request':>14} {'requests':>9}")
    for name, path in endpoints:
        _, body = request("GET", base + path)
        ref_path = os.path.join(directory, f"reference-{len(body)}")
        open(ref_path, "wb").close()
        body_file = os.path.join(directory, "body")
        with open(body_file, "wb") as f:
            f.write(body)
        port = free_port()
        reference = start([reference_binary, str(port), body_file],
                          env=dict(os.environ, LD_PRELOAD=library, MALLOC_COUNT_FILE=ref_path))
        time.sleep(0.3)
        rows = [("reference (same bytes)", f"http://127.0.0.1:{port}/", Counts(ref_path))]
        for label, server_base, counts in servers:
            if "changes" in name and server_base != base:
                continue  # the session lives on the first server
            rows.append((f"quire {label}", server_base + path, counts))
        tokens = {}
        if "/v1/lists/demo" in name:
            rows.append(("quire HS256 token", tokened + path, tokened_counts))
            tokens[tokened + path] = hs256
        for label, url, counts in rows:
            per_request, bytes_per_request, done = counted_run(counts, url, options.seconds, token=tokens.get(url))
            print(f"{name:36} {label:28} {per_request:20.2f} {bytes_per_request:14.0f} {done:9d}")
        reference.terminate()
        reference.wait()


def instructions(options):
    """Instructions per request, counted by callgrind in the threads that answer requests (libmicrohttpd's
    workers), wrk sending the benchmark's requests for `seconds` after a warm-up. libmicrohttpd's memset of the
    connection pool is left out: valgrind counts each byte of its `rep stosb`, and the reference clears 32 KiB
    where Quire clears 16 KiB. The debug information is stripped from a copy of the binary: valgrind 3.19 cannot
    read Swift 6.3's."""
    for tool in ("valgrind", "callgrind_control", "callgrind_annotate", "wrk"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is missing: make deps-bench")
    scratch = tempfile.mkdtemp(prefix="quire-instructions-")
    quire = os.path.join(scratch, "quire")
    subprocess.run(["strip", "--strip-debug", "-o", quire, build()], check=True)
    reference = compile_reference()

    def count(command, environment, path, is_quire):
        """Instructions per request of the server whose command line is `command(port)`, run with
        `environment(port)`, on `path` (or on the path `path(base)` gives once the server is up). Quire is
        waited for until ready (its lists loaded), and its threads that answer no request are left out (timed
        loops, not per request)."""
        port = free_port()
        out = os.path.join(tempfile.mkdtemp(dir=scratch), "callgrind.out")
        process = start(["valgrind", "--tool=callgrind", "--instr-atstart=no", "--separate-threads=yes",
                         f"--callgrind-out-file={out}", *command(port)], env=environment(port),
                        cwd=tempfile.mkdtemp(dir=scratch))
        base = f"http://127.0.0.1:{port}"
        if is_quire:
            wait_ready(base, seconds=240)  # under valgrind, loading takes a while
        else:
            wait_listening(port, seconds=60)
        url = base + (path if isinstance(path, str) else path(base))
        subprocess.run(["wrk", "-t1", "-c4", "-d1s", url], capture_output=True, timeout=60)  # warm-up
        subprocess.run(["callgrind_control", "-i", "on", str(process.pid)], capture_output=True, check=True)
        run = subprocess.run(["wrk", "-t1", "-c4", f"-d{options.seconds}s", url], capture_output=True, text=True,
                             timeout=options.seconds + 60)
        subprocess.run(["callgrind_control", "-i", "off", str(process.pid)], capture_output=True, check=True)
        subprocess.run(["callgrind_control", "-d", str(process.pid)], capture_output=True, check=True)
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
        answered = int(re.search(r"(\d+) requests in", run.stdout).group(1))
        total = 0
        for name in os.listdir(os.path.dirname(out)):
            if not re.search(r"\.\d+-\d+$", name):
                continue  # not the dump taken while instrumented (the one at exit counts nothing)
            dump = os.path.join(os.path.dirname(out), name)
            text = open(dump, errors="replace").read()
            totals = re.search(r"^totals: (\d+)", text, re.M)
            if not totals or int(totals.group(1)) == 0:
                continue
            if is_quire and "accessHandlerTrampoline" not in text:
                continue
            annotated = subprocess.run(["callgrind_annotate", dump], capture_output=True, text=True).stdout
            memset = sum(int(line.split()[0].replace(",", "")) for line in annotated.splitlines()
                         if "__memset" in line and line.strip()[:1].isdigit())
            total += int(totals.group(1)) - memset
        return total // max(answered, 1), answered

    def session_changes(base):
        _, body = request("POST", base + "/v1/lists/demo/sessions", {"limit": 20})
        created = json.loads(body)
        return f"/v1/sessions/{created['session']}/changes?since={created['version']}"

    ref, _ = count(lambda port: [reference, str(port)], lambda port: None, "/", is_quire=False)
    print(f"{'endpoint':32} {'instructions/request':>21} {'the reference':>14} {'requests counted':>17}")
    for name, path in (("GET /healthz", "/healthz"), ("GET /v1/lists/demo?limit=20", "/v1/lists/demo?limit=20"),
                       ("GET changes (nothing new)", session_changes)):
        mine, answered = count(lambda port: [quire, "serve"], quire_environment, path, is_quire=True)
        print(f"{name:32} {mine:21,} {ref:14,} {answered:17,}")


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
        # PostgreSQL of its own (scripts/pg-local), pgbench's simple-update load with as many clients, then Quire's
        # producers on a database of that server.
        pg_local = os.path.join(ROOT, "scripts", "pg-local")
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


def put_items(base, name, count, data):
    """A list of `count` items in one section, `data(i)` each, written with ops in chunks."""
    request("PUT", base + f"/v1/lists/{name}", {"sections": [{"id": "all", "items": []}]})
    for chunk in range(0, count, 2000):
        items = [{"id": f"f{i}", "type": "row", "data": data(i)} for i in range(chunk, min(chunk + 2000, count))]
        request("POST", base + f"/v1/lists/{name}/ops", {"ops": [{"op": "insertItems", "section": "all", "items": items}]})


def filters(options):
    """Filtered sessions: what views cost a write, a fan-out over filters, a first build, and an answer."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 20_000), hard))
    process, base = start_quire({"QUIRE_LONG_POLL_MAX_WAITERS": "12000", "QUIRE_SERVER_CONNECTION_LIMIT": "14000",
                                 "QUIRE_SESSIONS_CAPACITY": "30000"})
    port = int(base.rsplit(":", 1)[1])
    connection = Connection(port)
    owned = lambda i: {"owner": f"u{i % 1000}", "group": f"g{i % 100}", "n": i}
    put_items(base, "owned", 20_000, owned)

    def write_median(rounds):
        samples = []
        for r in range(rounds):
            i = (r * 7919) % 20_000
            body = json.dumps({"ops": [{"op": "updateItems", "items": [
                {"id": f"f{i}", "type": "row", "data": dict(owned(i), edited=r)}]}]}).encode()
            started = time.perf_counter()
            status, _ = connection.request("POST", "/v1/lists/owned/ops", body)
            samples.append((time.perf_counter() - started) * 1000)
            if status != 200:
                sys.exit(f"write: {status}")
        return statistics.median(samples)

    write_median(100)  # warm-up
    alone = write_median(400)
    for k in range(1000):
        status, _ = connection.request("POST", "/v1/lists/owned/sessions", json.dumps(
            {"limit": 20, "filter": {"field": "data.owner", "eq": f"u{k}"}}).encode())
        if status != 201:
            sys.exit(f"session: {status}")
    with_views = write_median(400)
    rows = [("a 1-item write, 1,000 sessions on 1,000 equality filters ÷ no session",
             f"{with_views:.3f} / {alone:.3f} ms = {with_views / alone:.2f}x", "<= 3x", with_views / alone <= 3)]

    # 10,000 long polls over 100 filters; one write that changes an item of every filter.
    binary = os.path.join(tempfile.mkdtemp(prefix="quire-filters-"), "fan-out-client")
    subprocess.run(["cc", "-O2", "-o", binary, os.path.join(BENCH, "fan-out-client.c")], check=True)
    paths = os.path.join(os.path.dirname(binary), "paths")
    with open(paths, "w") as f:
        for j in range(10_000):
            status, body = connection.request("POST", "/v1/lists/owned/sessions", json.dumps(
                {"limit": 20, "filter": {"field": "data.group", "eq": f"g{j % 100}"}}).encode())
            session = json.loads(body)
            f.write(f"/v1/sessions/{session['session']}/changes?since={session['version']}&wait=60\n")
    write = json.dumps({"ops": [{"op": "updateItems", "items": [
        {"id": f"f{i}", "type": "row", "data": dict(owned(i), touched=True)} for i in range(100)]}]})
    client = subprocess.Popen([binary, str(port), paths, "/v1/lists/owned/ops", write],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    children.append(client)
    client.stdout.readline()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and metric(base, "quire_long_polls_waiting") < 10_000:
        time.sleep(0.1)
    client.stdin.write("go\n")
    client.stdin.flush()
    result = client.stdout.readline().strip()
    client.wait(timeout=180)
    last = re.search(r"last (\d+) ms", result)
    rows.append(("10,000 sessions over 100 filters, one write touching all: last woken", result, "<= 1 s",
                 bool(last) and int(last.group(1)) <= 1000))

    # A session on a new filter of a 100,000-item list: the view's first build.
    put_items(base, "large", 100_000, lambda i: {"owner": f"u{i % 1000}", "n": i})
    samples = []
    for r in range(21):
        body = json.dumps({"limit": 20, "filter": {"field": "data.n", "gte": 1000 * r + 1}}).encode()
        started = time.perf_counter()
        status, _ = connection.request("POST", "/v1/lists/large/sessions", body)
        samples.append((time.perf_counter() - started) * 1000)
        if status != 201:
            sys.exit(f"session on large: {status}")
    rows.append(("a session on a new filter of a 100,000-item list, median (max) of 21",
                 f"{statistics.median(samples):.1f} ms ({max(samples):.1f} ms)", "<= 50 ms",
                 statistics.median(samples) <= 50))

    # A filtered session's answer after a write, against the same session unfiltered.
    def open_session(filter_):
        body = {"limit": 50}
        if filter_:
            body["filter"] = filter_
        status, answer = connection.request("POST", "/v1/lists/owned/sessions", json.dumps(body).encode())
        answer = json.loads(answer)
        return answer["session"], answer["version"]

    half = {"field": "data.group", "in": [f"g{j}" for j in range(50)]}
    timings = {"filtered": [], "whole": []}
    for r in range(200):
        sessions_ = {"filtered": open_session(half), "whole": open_session(None)}
        body = json.dumps({"ops": [{"op": "updateItems", "items": [
            {"id": "f0", "type": "row", "data": dict(owned(0), answer=r)}]}]}).encode()
        connection.request("POST", "/v1/lists/owned/ops", body)
        for name, (session, version) in sessions_.items():
            started = time.perf_counter()
            status, _ = connection.request("GET", f"/v1/sessions/{session}/changes?since={version}")
            timings[name].append((time.perf_counter() - started) * 1000)
            connection.request("DELETE", f"/v1/sessions/{session}")
    filtered, whole = statistics.median(timings["filtered"]), statistics.median(timings["whole"])
    rows.append(("a filtered session's answer after a 1-item write ÷ the same unfiltered, medians",
                 f"{filtered:.3f} / {whole:.3f} ms = {filtered / whole:.2f}x", "<= 1.5x", filtered / whole <= 1.5))
    print(f"views held {metric(base, 'quire_views')}, built {metric(base, 'quire_view_builds_total')}, "
          f"matched {metric(base, 'quire_view_matches_total')}")
    width = max(len(row[0]) for row in rows)
    for name, figure, target, met in rows:
        print(f"  {name:<{width}}  {figure:<40} {target:<8} {'met' if met else 'MISSED'}")


def build_bench():
    subprocess.run(["swift", "build", "-c", "release", "--product", "quire-bench"],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return os.path.join(ROOT, ".build", "release", "quire-bench")


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def working_set(options):
    """Lists beyond memory: only the lists in use are held, so a restart reads none and memory follows the pages
    asked for, not the data set."""
    import random
    folder = options.folder or tempfile.mkdtemp(prefix="quire-working-set-")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"lists-{options.lists}x{options.items}.sqlite")
    if not os.path.exists(path):
        seeding = time.monotonic()
        subprocess.run([build_bench(), "seed-lists", path + ".part", str(options.lists), str(options.items)],
                       check=True)
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + ".part" + suffix):
                os.rename(path + ".part" + suffix, path + suffix)
        print(f"seeded {options.lists:,} lists x {options.items} items in {time.monotonic() - seeding:.0f} s")
    print(f"data set: {options.lists:,} lists x {options.items} items, {os.path.getsize(path) / 1e6:,.0f} MB file "
          f"(in the OS page cache: a warm restart); lists.memoryBytes {options.budget:,}")
    binary = build()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    # A small page cache: what the pages grow resident memory by is then the lists' (the cache, bounded by
    # pages.cacheEntries on its own, would hold 1,000 prepared pages beside them).
    env = quire_environment(port, {"QUIRE_STORAGE_PATH": path, "QUIRE_DEMO_SEED": "false",
                                   "QUIRE_LISTS_MEMORY_BYTES": str(options.budget),
                                   "QUIRE_PAGES_CACHE_ENTRIES": "16"})
    started = time.monotonic()
    process = start([binary, "serve"], env=env, cwd=folder)
    while True:
        try:
            if request("GET", base + "/readyz")[0] == 200:
                break
        except Exception:
            pass
        if time.monotonic() - started > 120 or process.poll() is not None:
            sys.exit("quire did not become ready")
        time.sleep(0.005)
    ready = time.monotonic() - started
    rss_ready = rss_mb(process.pid)
    connection = Connection(port)
    names = random.Random(46).sample(range(options.lists), options.pages)
    timings = {}
    for phase in ("cold", "warm"):
        latencies = []
        for index in names:
            begun = time.perf_counter()
            status, _ = connection.request("GET", f"/v1/lists/u-{index}")
            latencies.append((time.perf_counter() - begun) * 1000)
            if status != 200:
                sys.exit(f"GET /v1/lists/u-{index}: {status}")
        timings[phase] = latencies
        if phase == "cold":
            rss_after = rss_mb(process.pid)
    counted = metric(base, "quire_lists_resident_bytes") / 1e6
    resident = metric(base, "quire_lists_resident")
    loads = metric(base, "quire_list_loads_total")
    evictions = metric(base, "quire_list_evictions_total")
    grown = rss_after - rss_ready
    budget_mb = options.budget / 1e6 if options.budget else float("inf")
    rows = [
        ("restart to /readyz 200", f"{ready:.2f} s", "<= 1 s", ready <= 1),
        (f"resident memory after the restart and {options.pages:,} first pages",
         f"{rss_after:,.0f} MB (at ready {rss_ready:,.0f} MB)", "<= 300 MB" if options.lists <= 100_000
         else f"<= budget + 200 MB", rss_after <= (300 if options.lists <= 100_000 else budget_mb + 200)),
        (f"first page of a cold list, p99 (p50) of {options.pages:,}",
         f"{percentile(timings['cold'], 0.99):.2f} ms ({percentile(timings['cold'], 0.5):.2f} ms)", "<= 10 ms",
         percentile(timings["cold"], 0.99) <= 10),
        ("the same pages again, lists held: p99 (p50)",
         f"{percentile(timings['warm'], 0.99):.2f} ms ({percentile(timings['warm'], 0.5):.2f} ms)", "", None),
        ("lists counted by the budget ÷ the resident memory they grew by",
         f"{counted:.1f} MB / {grown:.1f} MB = {counted / grown if grown > 0 else float('nan'):.2f}",
         "0.75-1.25", grown > 0 and 0.75 <= counted / grown <= 1.25),
        ("lists held, loaded, left memory", f"{resident:,}, {loads:,}, {evictions:,}", "", None),
    ]
    width = max(len(row[0]) for row in rows)
    for name, figure, target, met in rows:
        verdict = "" if met is None else ("met" if met else "MISSED")
        print(f"  {name:<{width}}  {figure:<34} {target:<18} {verdict}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    h = commands.add_parser("http")
    h.add_argument("--rounds", type=int, default=5)
    h.add_argument("--seconds", type=int, default=4)
    h.add_argument("--only", help="run the endpoints whose name contains this text (e.g. demo)")
    h.add_argument("--cpu-limit", type=float, help="give the servers this many CPUs' time (a slower machine)")
    s = commands.add_parser("sessions")
    s.add_argument("--count", type=int, default=100_000)
    l = commands.add_parser("long-polls")
    l.add_argument("--count", type=int, default=5_000)
    ld = commands.add_parser("load")
    ld.add_argument("--rounds", type=int, default=3)
    ld.add_argument("--seconds", type=int, default=5)
    ld.add_argument("--connections", type=int, default=64)
    ld.add_argument("--write-rate", type=int, default=20, help="writes per second in write-and-poll")
    ld.add_argument("--cpu-limit", type=float, help="give the servers this many CPUs' time (a slower machine)")
    sk = commands.add_parser("soak")
    sk.add_argument("--seconds", type=int, default=60, help="measured seconds, after the warm-up")
    sk.add_argument("--warm-up", type=int, default=15)
    sk.add_argument("--interval", type=float, default=5.0, help="seconds between RSS samples")
    sk.add_argument("--write-rate", type=int, default=20)
    sk.add_argument("--max-growth", type=float, default=10.0, help="MB of RSS growth allowed after the warm-up")
    commands.add_parser("window-cost")
    w = commands.add_parser("wire")
    w.add_argument("--rounds", type=int, default=3)
    w.add_argument("--seconds", type=int, default=4)
    f = commands.add_parser("fan-out")
    f.add_argument("--count", type=int, default=10_000)
    f.add_argument("--window", type=int, default=2_000)
    st = commands.add_parser("streams")
    st.add_argument("--count", type=int, default=10_000)
    st.add_argument("--window", type=int, default=2_000)
    st.add_argument("--blocks", action="store_true",
                    help="list the heap blocks an idle stream holds, by part and size (asked/given)")
    a = commands.add_parser("allocations")
    a.add_argument("--seconds", type=int, default=3)
    ins = commands.add_parser("instructions")
    ins.add_argument("--seconds", type=int, default=6)
    commands.add_parser("filters")
    wr = commands.add_parser("writes")
    wr.add_argument("--rounds", type=int, default=3)
    wr.add_argument("--seconds", type=int, default=8)
    wr.add_argument("--connections", type=int, default=64)
    only = wr.add_mutually_exclusive_group()
    only.add_argument("--no-postgres", action="store_true", help="leave out the PostgreSQL row (and pgbench)")
    only.add_argument("--only-postgres", action="store_true",
                      help="the PostgreSQL row alone (no in-memory or SQLite run)")
    ws = commands.add_parser("working-set")
    ws.add_argument("--lists", type=int, default=100_000)
    ws.add_argument("--items", type=int, default=100)
    ws.add_argument("--pages", type=int, default=1_000)
    ws.add_argument("--budget", type=int, default=512 << 20, help="lists.memoryBytes")
    ws.add_argument("--folder", help="where the data set's file is kept (and reused by later runs)")
    options = parser.parse_args()
    try:
        {"http": http, "sessions": sessions, "long-polls": long_polls, "load": load,
         "soak": soak, "window-cost": window_cost, "fan-out": fan_out, "wire": wire, "streams": streams,
         "allocations": allocations, "instructions": instructions,
         "working-set": working_set, "filters": filters, "writes": writes}[options.command](options)
    finally:
        stop_all()


if __name__ == "__main__":
    main()
