"""What every benchmark family shares: the servers it starts (Quire in release, the C reference of
bench/mhd-reference.c), wrk and the parsing of its output, the server's CPU per request, the `--cpu-limit`
cgroup, /metrics and resident memory. Every process started here is in `children`, stopped at exit."""
import json, math, os, re, resource, signal, socket, subprocess, sys, tempfile, time
import urllib.request

from lib.proc_times import cpu_seconds


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench")
REFERENCE = os.environ.get("REFERENCE_SOURCE", os.path.join(BENCH, "mhd-reference.c"))
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


def quire_binary(options):
    """The quire a benchmark runs: `--binary` (relative paths from the repository), else the release build, made
    first."""
    return os.path.join(ROOT, options.binary) if options.binary else build()


# Rate limits on with reads allowed so fast that none is refused: every read draws on its client's bucket.
UNREFUSED_READ_LIMITS = {"QUIRE_RATE_LIMITS_ENABLED": "true", "QUIRE_RATE_LIMITS_READS_PER_SECOND": "100000000",
                         "QUIRE_RATE_LIMITS_READS_BURST": "100000000"}


def quire_environment(port, extra_env=None):
    """The environment a benchmarked Quire runs with: on `port`, warnings only, the demo list still."""
    env = dict(os.environ, QUIRE_SERVER_PORT=str(port), QUIRE_LOG_LEVEL="warning", QUIRE_DEMO_LIVE="false")
    env.update(extra_env or {})
    return env


def start_quire(extra_env=None, binary=None):
    """Quire serving on a free port (`binary`, else the release build, made first), once ready, and its URL."""
    port = free_port()
    env = quire_environment(port, extra_env)
    process = start([binary or build(), "serve"], env=env, cwd=tempfile.mkdtemp(prefix="quire-bench-"))
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


def compile_reference(source=REFERENCE):
    """A C server on libmicrohttpd (by default bench/mhd-reference.c) built in a fresh folder."""
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


def metric(base, name):
    try:
        _, text = request("GET", base + "/metrics")
        m = re.search(rb"^%s (\d+)" % name.encode(), text, re.M)
        return int(m.group(1)) if m else -1
    except Exception:
        return -1


def connection_room(count):
    """Room for `count` connections held at once by one client against one server, both children of this process:
    the open-file limits (soft and hard, which they inherit) raised to what each needs, as root up to fs.nr_open
    (else the hard limit as given; too low, the run stops saying what to set), and the loopback source addresses
    the client connects from (127.0.0.2, 127.0.0.3, …: one address has about 28,000 ephemeral ports toward one
    server port, ip_local_port_range; 20,000 each leaves room for the rest of the run). Returns the count of
    source addresses, at least 2 (the mechanism is the same at every count)."""
    wanted = count + 1024  # the server's own descriptors (store, listening socket, epoll) are a few dozen
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < wanted:
        with open("/proc/sys/fs/nr_open") as f:
            ceiling = int(f.read())
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, ceiling), min(wanted, ceiling)))
        except (ValueError, OSError):
            pass
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard < wanted:
            sys.exit(f"{count} connections need an open-file limit of {wanted}, and this process may have {hard}: "
                     f"raising the hard limit takes CAP_SYS_RESOURCE (root outside a container), else it is set "
                     f"from outside: `ulimit -Hn {wanted}` in a privileged shell, systemd's LimitNOFILE={wanted}, "
                     f"docker run --ulimit nofile={wanted}:{wanted} (fs.nr_open must be >= {wanted})")
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low, high = (int(x) for x in f.read().split())
    per_address = min(20_000, (high - low + 1) * 3 // 4)
    return max(2, math.ceil(count / per_address))


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")
