"""`bench.py tls`: HTTPS figures, each next to its target, in one run on 127.0.0.1 with the release build:

  1. keep-alive page (GET /v1/lists/demo?limit=20, wrk -t2 -c64) over TLS vs plain HTTP, same build, rounds
     alternating: median ratio, target >= 0.8x; beside it, for comparison, the same page through nginx
     terminating TLS in front of the plain instance, and the stack's own ratio: bench/tls-reference.c (plain C on
     libmicrohttpd serving the same bytes from memory, with and without its GnuTLS, configured as Quire is);
  2. new TLS connections per second (openssl s_time, GET /healthz per connection, two clients at once), full
     handshakes (-new) and with session resumption (-reuse), for Quire's own TLS and for nginx terminating
     TLS in front of plain-HTTP Quire (deploy/nginx/quire.conf).

Every run is bounded in time; every server started here is stopped at exit (these servers are this module's own
`children`, stopped by `tls` itself).
"""
import json, os, re, shutil, signal, socket, statistics, subprocess, sys, tempfile, time

from .common import ROOT

children = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_all():
    for process in reversed(children):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()


def start_quire(binary, work, name, *arguments, env=None):
    log = open(os.path.join(work, name + ".log"), "w")
    environment = dict(os.environ, QUIRE_STORAGE_PATH=":memory:", QUIRE_LOG_ACCESS="false", **(env or {}))
    process = subprocess.Popen([binary, "serve", "--port", "0", "--log-format", "json", *arguments],
                               stdout=log, stderr=log, env=environment)
    children.append(process)
    for _ in range(400):
        with open(log.name) as lines:
            for line in lines:
                if '"listening"' in line:
                    return int(json.loads(line)["port"])
        if process.poll() is not None:
            break
        time.sleep(0.025)
    sys.exit(f"bench-tls: {name} did not start: {open(log.name).read()}")


def wait_ok(url, ca):
    for _ in range(200):
        if subprocess.run(["curl", "-sf", "-o", "/dev/null", "--cacert", ca, url]).returncode == 0:
            return
        time.sleep(0.05)
    sys.exit(f"bench-tls: no answer from {url}")


def wrk(url, seconds):
    out = subprocess.run(["wrk", "-t2", "-c64", f"-d{seconds}s", url], capture_output=True, text=True,
                         timeout=seconds + 30).stdout
    match = re.search(r"Requests/sec:\s+([\d.]+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if not match or errors or non2xx:
        sys.exit(f"bench-tls: wrk failed or saw errors on {url}:\n{out}")
    return float(match.group(1))


def start_reference(work, body, threads, certificate=None, key=None):
    """bench/tls-reference.c serving `body` (with TLS when given a certificate and key); returns its port."""
    binary = os.path.join(work, "tls-reference")
    if not os.path.exists(binary):
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libmicrohttpd"], capture_output=True, text=True,
                               check=True).stdout.split()
        subprocess.run(["cc", "-O2", "-o", binary, os.path.join(ROOT, "bench", "tls-reference.c")] + flags, check=True)
    arguments = [binary, "0", body, str(threads)] + ([certificate, key] if certificate else [])
    process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    children.append(process)
    line = process.stdout.readline()
    if not line.startswith("port "):
        sys.exit(f"bench-tls: tls-reference did not start ({' '.join(arguments)})")
    return int(line.split()[1])


def s_time(port, seconds, reuse, clients=2):
    """Connections per second made by `clients` openssl s_time processes at once, each a GET /healthz."""
    command = ["openssl", "s_time", "-connect", f"127.0.0.1:{port}", "-reuse" if reuse else "-new",
               "-time", str(seconds), "-www", "/healthz"]
    processes = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                 for _ in range(clients)]
    total = 0
    for process in processes:
        out, _ = process.communicate(timeout=seconds + 30)
        counts = re.findall(r"(\d+) connections in [\d.]+s;", out)
        if not counts:
            sys.exit(f"bench-tls: openssl s_time failed:\n{out}")
        total += int(counts[-1])  # with -reuse the last block is the resumed one
    return total / seconds


def tls(options):
    for tool in ("wrk", "openssl", "nginx", "curl"):
        if not shutil.which(tool):
            sys.exit(f"bench-tls: {tool} is missing: make deps-bench")
    binary = options.binary
    if binary is None:
        subprocess.run(["swift", "build", "-c", "release", "--product", "quire"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        binary = os.path.join(ROOT, ".build", "release", "quire")

    work = tempfile.mkdtemp(prefix="quire-bench-tls.")
    try:
        subprocess.run([os.path.join(ROOT, "scripts", "local", "dev-cert"), "--out", os.path.join(work, "certs")], check=True,
                       stdout=subprocess.DEVNULL)
        ca, cert, key = (os.path.join(work, "certs", name) for name in ("ca.pem", "server.pem", "server.key"))
        tls_port = start_quire(binary, work, "quire-tls", "--tls-certificate", cert, "--tls-key", key)
        plain_port = start_quire(binary, work, "quire-plain", env={"QUIRE_SERVER_TLS_OFFLOADED": "true"})
        nginx_port, redirect_port = free_port(), free_port()
        config = subprocess.run([os.path.join(ROOT, "scripts", "local", "nginx-local"), os.path.join(work, "nginx"), cert, key,
                                 str(plain_port), str(nginx_port), str(redirect_port)],
                                check=True, capture_output=True, text=True, cwd=ROOT,
                                env=dict(os.environ, NGINX_WORKERS="2", NGINX_ACCESS_LOG="off")).stdout.strip()
        children.append(subprocess.Popen(["nginx", "-c", config, "-p", os.path.join(work, "nginx"), "-g",
                                          "daemon off;"]))
        page = "/v1/lists/demo?limit=20"
        for port in (tls_port, nginx_port):
            wait_ok(f"https://localhost:{port}/readyz", ca)
        wait_ok(f"http://127.0.0.1:{plain_port}/readyz", ca)

        # The stack's own cost of TLS: the C reference serving the page's bytes, with and without TLS.
        body = os.path.join(work, "page.json")
        subprocess.run(["curl", "-sf", "-o", body, f"http://127.0.0.1:{plain_port}{page}"], check=True)
        threads = os.cpu_count() or 1  # as Quire's server.threads default
        reference_plain = start_reference(work, body, threads)
        reference_tls = start_reference(work, body, threads, cert, key)
        wait_ok(f"https://localhost:{reference_tls}/", ca)

        print(f"bench-tls: {options.rounds} rounds of {options.seconds} s, wrk -t2 -c64 {page}; "
              f"s_time x2 for {options.handshake_seconds} s; {os.cpu_count()} cores shared with the clients")
        wrk(f"https://127.0.0.1:{tls_port}{page}", 1)  # warm-up
        wrk(f"https://127.0.0.1:{reference_tls}/", 1)
        ratios, nginx_ratios, reference_ratios, against_reference = [], [], [], []
        for round in range(options.rounds):
            plain = wrk(f"http://127.0.0.1:{plain_port}{page}", options.seconds)
            tls = wrk(f"https://127.0.0.1:{tls_port}{page}", options.seconds)
            # The same page with nginx terminating TLS in front of the plain instance: what TLS costs on these
            # cores when the server is not Quire's (for comparison; the target is Quire's own TLS).
            proxied = wrk(f"https://127.0.0.1:{nginx_port}{page}", options.seconds)
            bare = wrk(f"http://127.0.0.1:{reference_plain}/", options.seconds)
            bare_tls = wrk(f"https://127.0.0.1:{reference_tls}/", options.seconds)
            ratios.append(tls / plain)
            nginx_ratios.append(proxied / plain)
            reference_ratios.append(bare_tls / bare)
            against_reference.append(tls / bare_tls)
            print(f"  round {round + 1}: plain {plain:9.0f} req/s   TLS {tls:9.0f} req/s   {tls / plain:.2f}x"
                  f"   (nginx TLS -> quire {proxied:9.0f} req/s   {proxied / plain:.2f}x;"
                  f" C reference plain {bare:9.0f}, TLS {bare_tls:9.0f} req/s   {bare_tls / bare:.2f}x)")
        median = statistics.median(ratios)
        verdict = "ok" if median >= 0.8 else "BELOW TARGET"
        print(f"keep-alive page over TLS: median {median:.2f}x the plain-HTTP rate (target >= 0.8x) {verdict}; "
              f"nginx terminating TLS in front: {statistics.median(nginx_ratios):.2f}x")
        print(f"  the stack itself (bench/tls-reference.c, C on libmicrohttpd and GnuTLS, same bytes): TLS "
              f"{statistics.median(reference_ratios):.2f}x its plain-HTTP rate; Quire's TLS answers "
              f"{statistics.median(against_reference):.2f}x the C reference's TLS rate")

        rows = []
        for name, port in (("quire (GnuTLS)", tls_port), ("nginx -> quire", nginx_port)):
            full = s_time(port, options.handshake_seconds, reuse=False)
            resumed = s_time(port, options.handshake_seconds, reuse=True)
            rows.append((name, full, resumed))
        print("new TLS connections per second (each a GET /healthz; target: report, next to nginx):")
        print(f"  {'':16} {'full handshake':>16} {'resumed':>10}")
        for name, full, resumed in rows:
            print(f"  {name:16} {full:16.0f} {resumed:10.0f}")
        print(f"  quire / nginx    {rows[0][1] / rows[1][1]:15.2f}x {rows[0][2] / rows[1][2]:9.2f}x")
    finally:
        stop_all()
        shutil.rmtree(work, ignore_errors=True)
