"""`bench.py fan-out`: N sessions holding W-item windows long-poll one list; one 1-item write: the
time until every one is answered (bench/fan-out-client.c)."""
import json, os, re, resource, subprocess, tempfile, time

from .common import BENCH, children, metric, start_quire
from .lists import Connection, open_window, put_feed


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
