"""The cluster the tests run on, and how they speak to it: a kept-alive HTTP client, the cluster
started by scripts/local/cluster in CLUSTER_DIR (its members, ports, metrics, PostgreSQL, logs), nginx's ring
as the tests model it, and the failure a check raises."""
import bisect, json, os, re, subprocess, time, zlib
import http.client


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
INSTANCES = ("q1", "q2", "q3")  # the cluster as it starts; cluster.members after add and remove
TAG_LENGTH = 22  # random characters after "<tag>_"
# Lists leave an instance's memory after this long without a read, a write or a session (lists.idleSeconds): short
# here, so that the membership test sees an instance let go of the lists that moved away from it.
IDLE_SECONDS = 10


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def log(message):
    print(f"cluster-test: {message}", flush=True)


class Answer:
    def __init__(self, status, headers, raw):
        self.status, self.headers, self.raw = status, headers, raw
        try:
            self.json = json.loads(raw) if raw else None
        except ValueError:
            self.json = None

    def problem(self):
        kind = (self.json or {}).get("type", "") if isinstance(self.json, dict) else ""
        return kind.rsplit("/", 1)[-1]

    def __repr__(self):
        return f"{self.status} {self.raw[:300]!r}"


class Client:
    """One kept-alive HTTP/1.1 connection. Transport failures raise OSError or http.client.HTTPException
    (the caller decides: a write that fails so has an unknown outcome)."""

    def __init__(self, base, token=None, resend=False):
        host, port = base.split("//", 1)[1].split(":")
        self.host, self.port, self.token, self.conn, self.resend = host, int(port), token, None, resend
        self.used = False       # whether the connection open has carried an answer already
        self.reconnects = 0     # requests sent again on a new connection (see request)

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def request(self, method, path, body=None, timeout=30, headers=None):
        """One request. On a kept-alive connection that the other end had closed (nginx closes its idle client
        connections when its configuration is reloaded: a member added or removed), the request is sent once more
        on a new connection, whatever its method: the peer closed without reading it (no byte of an answer came),
        as HTTP clients do (RFC 9112 9.3.1). Only with `resend` (a client of nginx: an instance that dies with a
        request answers 502 through nginx, never a closed connection). Any other transport failure raises."""
        reused = self.resend and self.conn is not None and self.used
        try:
            return self.send(method, path, body, timeout, headers)
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as error:
            if not reused or (isinstance(error, ConnectionResetError) and not self.unanswered):
                raise
            self.reconnects += 1
            return self.send(method, path, body, timeout, headers)

    def send(self, method, path, body, timeout, headers):
        self.unanswered = True
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
            self.used = False
        all_headers = dict(headers or {})
        if body is not None:
            all_headers["Content-Type"] = "application/json"
            body = json.dumps(body)
        if self.token and method != "GET":
            all_headers["Authorization"] = "Bearer " + self.token
        try:
            self.conn.timeout = timeout
            if self.conn.sock is not None:
                self.conn.sock.settimeout(timeout)
            self.conn.request(method, path, body=body, headers=all_headers)
            response = self.conn.getresponse()
            self.unanswered = False
            raw = response.read()
        except BaseException:
            self.close()
            raise
        self.used = True
        if (response.getheader("Connection") or "").lower() == "close":
            self.close()
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, raw)

    def get(self, path, timeout=30):
        """A read, retried once on a fresh connection (a kept-alive one may have been closed while idle)."""
        try:
            return self.request("GET", path, timeout=timeout)
        except (OSError, http.client.HTTPException):
            return self.request("GET", path, timeout=timeout)


class Cluster:
    def __init__(self, directory, binary, extra_env=None):
        self.dir, self.binary = directory, binary
        self.extra_processes = []
        self.env = dict(os.environ, CLUSTER_DIR=directory, QUIRE_BINARY=binary, **(extra_env or {}))
        self.env.pop("CLUSTER_INSTANCES", None)  # a new cluster has q1 q2 q3; then add and remove change it

    def run(self, *arguments, timeout=180):
        result = subprocess.run([os.path.join(ROOT, "scripts", "local", "cluster"), *arguments], env=self.env,
                                capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            raise Failure(f"scripts/local/cluster {' '.join(arguments)} failed:\n{result.stdout}{result.stderr}")
        return result.stdout

    def up(self):
        self.run("up")
        self.token = open(os.path.join(self.dir, "write-token")).read().strip()
        self.refresh()

    def refresh(self):
        """The members (CLUSTER_DIR/members, as scripts/local/cluster keeps them) and their ports."""
        self.members = open(os.path.join(self.dir, "members")).read().split()
        self.ports = {name: int(open(os.path.join(self.dir, name, "port")).read())
                      for name in os.listdir(self.dir) if re.fullmatch(r"q\d+", name)
                      and os.path.exists(os.path.join(self.dir, name, "port"))}
        self.nginx = f"http://127.0.0.1:{int(open(os.path.join(self.dir, 'nginx', 'port')).read())}"

    def add(self):
        """scripts/local/cluster add: the new member's name."""
        before = list(self.members)
        self.run("add")
        self.refresh()
        added = [m for m in self.members if m not in before]
        check(len(added) == 1, f"scripts/local/cluster add: members {before} -> {self.members}")
        return added[0]

    def remove(self, name):
        self.run("remove", name)
        self.refresh()
        check(name not in self.members, f"scripts/local/cluster remove {name}: still a member")

    def ring(self, members=None):
        """nginx's ring of the list upstream for `members` (default: the cluster's)."""
        return Ring({m: f"127.0.0.1:{self.ports[m]}" for m in (members or self.members)})

    def metrics(self, name):
        """The unlabelled series of an instance's /metrics, as numbers."""
        answer = Client(self.url(name)).get("/metrics", timeout=10)
        check(answer.status == 200, f"{name} /metrics: {answer}")
        values = {}
        for line in answer.raw.decode().splitlines():
            parts = line.split()
            if len(parts) == 2 and not line.startswith("#") and "{" not in parts[0]:
                values[parts[0]] = float(parts[1])
        return values

    def metrics_of(self, base):
        answer = Client(base).get("/metrics", timeout=10)
        check(answer.status == 200, f"{base} /metrics: {answer}")
        return {p[0]: float(p[1]) for p in (line.split() for line in answer.raw.decode().splitlines())
                if len(p) == 2 and not p[0].startswith("#") and "{" not in p[0]}

    def pid(self, name):
        return int(open(os.path.join(self.dir, name, "pid")).read())

    def down(self):
        for process in self.extra_processes:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(15)
                except subprocess.TimeoutExpired:
                    process.kill()
        subprocess.run([os.path.join(ROOT, "scripts", "local", "cluster"), "down"], env=self.env, capture_output=True,
                       timeout=120)

    def url(self, name):
        return f"http://127.0.0.1:{self.ports[name]}"

    def client(self, name_or_url):
        if name_or_url.startswith("http"):
            return Client(name_or_url, self.token, resend=name_or_url == self.nginx)
        return Client(self.url(name_or_url), self.token)

    def kill(self, name):
        self.run("kill", name, "KILL")

    def pg(self, action):
        result = subprocess.run([os.path.join(ROOT, "scripts", "local", "pg-local"), action, os.path.join(self.dir, "pg")],
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise Failure(f"scripts/local/pg-local {action} failed: {result.stderr}")

    def diagnose(self, name):
        """When a running instance does not answer /healthz within 3 s: its threads' stacks (gdb, when installed)
        in <instance>/stacks.txt, for whoever fixes the hang."""
        try:
            pid = int(open(os.path.join(self.dir, name, "pid")).read())
            os.kill(pid, 0)
        except (OSError, ValueError):
            return None
        try:
            if Client(self.url(name)).request("GET", "/healthz", timeout=3).status == 200:
                return None
        except (OSError, http.client.HTTPException):
            pass
        stacks = os.path.join(self.dir, name, "stacks.txt")
        try:
            with open(stacks, "w") as out:
                subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt"], stdout=out,
                               stderr=subprocess.STDOUT, timeout=120)
            return f"{name} (pid {pid}) does not answer /healthz: its threads' stacks are in {stacks}"
        except (OSError, subprocess.TimeoutExpired):
            return f"{name} (pid {pid}) does not answer /healthz (no gdb for its stacks)"

    def log_tail(self, name, lines=15):
        """The last lines of an instance's log that are not access lines of successful requests."""
        try:
            with open(os.path.join(self.dir, name, "quire.log")) as log_file:
                kept = [line for line in log_file if '"log":"access"' not in line or '"status":"2' not in line]
                return "".join(kept[-lines:])
        except OSError:
            return ""


class Ring:
    """nginx's `hash $quire_list consistent` (ngx_http_upstream_hash_module, ketama): 160 points per server line,
    the i-th at crc32(host NUL port previous-point), the previous point as 4 little-endian bytes; a list goes to
    the first point at or after crc32(its name), round the ring. When that server is down, nginx takes the next
    point's (another server's): the ring without it."""

    def __init__(self, addresses):
        points = {}
        for tag, address in addresses.items():
            host, _, port = address.rpartition(":")
            base, previous = host.encode() + b"\0" + port.encode(), 0
            for _ in range(160):
                previous = zlib.crc32(base + previous.to_bytes(4, "little"))
                points.setdefault(previous, tag)
        self.hashes = sorted(points)
        self.tags = [points[h] for h in self.hashes]

    def home(self, name):
        index = bisect.bisect_left(self.hashes, zlib.crc32(name.encode()))
        return self.tags[index % len(self.tags)]


def start_extra(cluster, name, environment, what):
    """One more `quire serve` beside the cluster's instances, outside nginx, in `cluster.dir/name`, with
    `environment`: stopped by cluster.down's caller at exit. Its process and base URL once `/readyz` answers 200;
    `what` names it in the failure."""
    folder = os.path.join(cluster.dir, name)
    os.makedirs(folder, exist_ok=True)
    log_path = os.path.join(folder, "quire.log")
    process = subprocess.Popen([cluster.binary, "serve", "--port", "0"], stdout=open(log_path, "w"),
                               stderr=subprocess.STDOUT, env=environment, cwd=folder)
    cluster.extra_processes.append(process)
    for _ in range(400):
        for line in open(log_path):
            if '"listening"' in line:
                base = f"http://127.0.0.1:{json.loads(line)['port']}"
                probe = Client(base)
                for _ in range(400):
                    try:
                        if probe.get("/readyz", timeout=2).status == 200:
                            return process, base
                    except (OSError, http.client.HTTPException):
                        pass
                    time.sleep(0.025)
                raise Failure(f"{what} did not turn ready: {open(log_path).read()[-500:]}")
        if process.poll() is not None:
            break
        time.sleep(0.025)
    raise Failure(f"{what} did not start: {open(log_path).read()[-500:]}")
