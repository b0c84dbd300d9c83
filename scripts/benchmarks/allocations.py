"""`bench.py allocations`: heap allocations per request (bench/malloc-count.c preloaded) of the
read endpoints, next to the reference's for the same bytes."""
import json, os, re, shutil, subprocess, sys, tempfile, time

from .common import BENCH, build, compile_reference, free_port, request, start, start_quire, wrk


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
