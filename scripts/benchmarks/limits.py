"""`bench.py limits`: rate limits (API.md §6c) under a flood, and what they cost a page read.

With writes limited to 100/s per client (burst 200), 20 honest producers (a JSON Web Token's `sub` each) write one
item 20 times a second each, alone, then while one more client floods one-item writes over 64 connections (wrk,
bench/limits-flood.lua). Printed beside the targets: the honest producers' refusals during the flood, their p99
during the flood over their p99 alone (same run), the flood's committed writes over its allowance (100/s × seconds
+ burst) and whether every other answer was `429` with `Retry-After`; and their p99 beside two busy loops that send
nothing (what the cores being busy does to it, apart from the flood). Then page reads with limits on (every
request drawing on its client's bucket, set so high that none is refused) against the C reference serving the
same bytes, rounds alternating as `bench.py http` does, and against the same build with limits off in the same rounds
(requests/s, and each server's CPU per request: what the limiter itself costs a read). Lists are kept in memory
(`storage.path: :memory:`): the figures are the limiter's and the write lane's, not the disk's."""
import base64, hashlib, hmac, http.client, json, os, shutil, statistics, subprocess, sys, tempfile, threading, time

from .common import (BENCH, UNREFUSED_READ_LIMITS, compile_reference, cpu_per_request, free_port, quire_binary,
    quire_environment, request, start, stop_all, wait_ready, wrk)

SECRET = "bench-limits-secret-" + "x" * 32
WRITES_PER_SECOND = 100
WRITES_BURST = 200
HONEST = 20
HONEST_RATE = 20


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hs256(sub, scope="read:* write:*", ttl=3600):
    """An HS256 token for `sub`, signed with SECRET (as `quire token` signs one)."""
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"sub": sub, "scope": scope, "exp": int(time.time()) + ttl}).encode())
    signature = hmac.new(SECRET.encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64url(signature)}"


def start_server(binary, env):
    port = free_port()
    process = start([binary, "serve"], env=quire_environment(port, env), cwd=tempfile.mkdtemp(prefix="quire-bench-"))
    base = f"http://127.0.0.1:{port}"
    wait_ready(base)
    return process, base, port


def create_list(base, name, token):
    document = {"sections": [{"id": "s", "items": [{"id": "first", "type": "row", "data": {}}]}]}
    status, _ = request("PUT", f"{base}/v1/lists/{name}", document, token=token)
    if status not in (200, 201):
        sys.exit(f"PUT {name}: {status}")


def list_version(base, name, token):
    _, body = request("GET", f"{base}/v1/lists/{name}?limit=1", token=token)
    return json.loads(body)["version"]


def producer(port, token, list_name, seconds, results):
    """One honest producer: a one-item write every 1/HONEST_RATE s on its own keep-alive connection, paced by the
    clock (a late write does not shift the next ones); records (status, seconds) of each."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    start_time = time.monotonic()
    n = 0
    while True:
        due = start_time + n / HONEST_RATE
        now = time.monotonic()
        if due - start_time >= seconds:
            break
        if due > now:
            time.sleep(due - now)
        body = json.dumps({"ops": [{"op": "insertItems", "section": "s",
                                    "items": [{"id": f"h{n}-{time.monotonic_ns()}", "type": "row", "data": {}}]}]})
        sent = time.monotonic()
        try:
            connection.request("POST", f"/v1/lists/{list_name}/ops", body, headers)
            response = connection.getresponse()
            response.read()
            results.append((response.status, time.monotonic() - sent))
        except (OSError, http.client.HTTPException):
            results.append((0, time.monotonic() - sent))
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        n += 1
    connection.close()


def honest_run(port, tokens, seconds, during=None):
    """The honest producers for `seconds` (with `during()` run meanwhile, on this thread): their results."""
    results = [[] for _ in tokens]
    threads = [threading.Thread(target=producer, args=(port, token, f"honest{i}", seconds, results[i]))
               for i, token in enumerate(tokens)]
    for thread in threads:
        thread.start()
    extra = during() if during else None
    for thread in threads:
        thread.join()
    return [r for rs in results for r in rs], extra


def p99(results):
    times = sorted(t for status, t in results if status == 200)
    return times[min(len(times) - 1, int(len(times) * 0.99))] * 1000 if times else float("nan")


def flood_figures(binary, seconds):
    env = {"QUIRE_STORAGE_PATH": ":memory:", "QUIRE_AUTH_JWT_SECRET": SECRET, "QUIRE_RATE_LIMITS_ENABLED": "true",
           "QUIRE_RATE_LIMITS_WRITES_PER_SECOND": str(WRITES_PER_SECOND),
           "QUIRE_RATE_LIMITS_WRITES_BURST": str(WRITES_BURST),
           "QUIRE_RATE_LIMITS_READS_PER_SECOND": "100000", "QUIRE_RATE_LIMITS_READS_BURST": "100000"}
    process, base, port = start_server(binary, env)
    setup = hs256("setup")
    tokens = [hs256(f"honest-{i}") for i in range(HONEST)]
    flood_token = hs256("flood")
    for i in range(HONEST):
        create_list(base, f"honest{i}", setup)
    create_list(base, "flood", setup)
    alone, _ = honest_run(port, tokens, seconds)
    before = list_version(base, "flood", setup)

    def flood():
        out = subprocess.run(
            ["wrk", "-t2", "-c64", f"-d{seconds}s", "-s", os.path.join(BENCH, "limits-flood.lua"), base, "--",
             flood_token, "flood"], capture_output=True, text=True, timeout=seconds + 60).stdout
        line = next((l for l in out.splitlines() if l.startswith("limits-flood:")), None)
        if line is None:
            sys.exit("no summary line from bench/limits-flood.lua:\n" + out)
        return dict(part.split("=") for part in line.split(": ", 1)[1].split())

    during, counts = honest_run(port, tokens, seconds, during=flood)
    committed = list_version(base, "flood", setup) - before
    # The same producers beside two busy loops that send nothing: what the cores being busy alone does to their p99.
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(2)]
    try:
        busy, _ = honest_run(port, tokens, seconds)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    allowance = WRITES_PER_SECOND * seconds + WRITES_BURST
    process.terminate()
    process.wait()
    refusals = sum(1 for status, _ in during if status != 200)
    return [
        ("the 20 clients' refusals during the flood", f"{refusals} of {len(during)}", "0", refusals == 0),
        ("the 20 clients' write p99 during the flood ÷ alone",
         f"{p99(during):.2f} ms ÷ {p99(alone):.2f} ms = {p99(during) / p99(alone):.2f}", "≤ 3",
         p99(during) / p99(alone) <= 3),
        ("  the same producers beside two busy loops that send nothing: p99 ÷ alone",
         f"{p99(busy):.2f} ms ÷ {p99(alone):.2f} ms = {p99(busy) / p99(alone):.2f}", "(none)", None),
        ("the flood's committed writes ÷ its allowance",
         f"{committed} ÷ {allowance} = {committed / allowance:.3f}", "≤ 1.05", committed / allowance <= 1.05),
        ("the flood's other answers", f"{counts['limited']} × 429 with Retry-After, {counts['unexpected']} other",
         "every one 429 with Retry-After", int(counts["unexpected"]) == 0),
    ]


def read_figures(binary, rounds, seconds):
    """Page reads with limits on against the reference; and against the same build with limits off in the same
    rounds, by requests/s and by each server's own CPU per request: what the limiter itself costs a read, apart from
    the stack's page ratio (which moves by as much from run to run)."""
    process, base, _ = start_server(binary, {"QUIRE_STORAGE_PATH": ":memory:", **UNREFUSED_READ_LIMITS})
    unlimited, unlimited_base, _ = start_server(binary, {"QUIRE_STORAGE_PATH": ":memory:"})
    url = base + "/v1/lists/demo?limit=20"
    status, body = request("GET", url)
    if status != 200:
        sys.exit(f"GET {url}: {status}")
    body_file = os.path.join(tempfile.mkdtemp(prefix="quire-ref-body-"), "body")
    with open(body_file, "wb") as f:
        f.write(body)
    port = free_port()
    reference = start([compile_reference(), str(port), body_file])
    time.sleep(0.3)
    servers = {"reference": (reference, f"http://127.0.0.1:{port}/"), "quire": (process, url),
               "limits off": (unlimited, unlimited_base + "/v1/lists/demo?limit=20")}
    ratios, off_ratios, off_cpu = [], [], []
    for round in range(rounds):
        measured, cpu = {}, {}
        # Which server goes first turns from round to round (see bench.py http).
        names = list(servers)[round % 3:] + list(servers)[:round % 3]
        for name in names:
            server, target = servers[name]
            (rps, *_), cpu[name] = cpu_per_request(server, seconds, lambda: wrk(target, seconds))
            measured[name] = rps
        ratios.append(measured["quire"] / measured["reference"])
        off_ratios.append(measured["quire"] / measured["limits off"])
        off_cpu.append(cpu["limits off"] / cpu["quire"])
        print(f"  page reads, round {round + 1}: quire {measured['quire']:.0f}/s ({cpu['quire']:.2f} µs CPU), "
              f"limits off {measured['limits off']:.0f}/s ({cpu['limits off']:.2f} µs), "
              f"reference {measured['reference']:.0f}/s ({cpu['reference']:.2f} µs)")
    for server, _ in servers.values():
        server.terminate()
    median = statistics.median(ratios)
    return [("page reads with limits on ÷ the C reference", f"{median:.2f}x ({', '.join(f'{r:.2f}' for r in ratios)})",
             "≥ 0.85x", median >= 0.85),
            ("  the same ÷ the same build with limits off: requests/s (CPU per request, off ÷ on)",
             f"{statistics.median(off_ratios):.2f}x ({statistics.median(off_cpu):.2f}x)", "(none)", None)]


def limits(options):
    if not shutil.which("wrk"):
        sys.exit("wrk is missing: make deps-bench")
    binary = quire_binary(options)
    rows = flood_figures(binary, options.seconds)
    rows += read_figures(binary, options.rounds, options.read_seconds)
    stop_all()
    print()
    print("| figure | measured | target | |")
    print("| --- | --- | --- | --- |")
    for name, measured, target, met in rows:
        verdict = "" if met is None else "met" if met else "**not met**"
        print(f"| {name} | {measured} | {target} | {verdict} |")
