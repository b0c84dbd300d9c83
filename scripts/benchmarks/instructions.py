"""`bench.py instructions`: instructions per request of the read endpoints under valgrind's
callgrind, next to the reference's: a figure that does not move with the machine's load."""
import json, os, re, shutil, signal, subprocess, sys, tempfile

from .common import (UNREFUSED_READ_LIMITS, build, compile_reference, free_port, quire_environment, request, start,
    wait_listening, wait_ready)


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
    limits = UNREFUSED_READ_LIMITS if options.limits else {}

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
        mine, answered = count(lambda port: [quire, "serve"], lambda port: quire_environment(port, limits), path,
                               is_quire=True)
        print(f"{name:32} {mine:21,} {ref:14,} {answered:17,}")
