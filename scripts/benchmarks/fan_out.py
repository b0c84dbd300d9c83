"""`bench.py fan-out`: N sessions holding W-item windows long-poll one list; one 1-item write: the
time until every one is answered (bench/fan-out-client.c)."""
import json, os, re, subprocess, tempfile, time

from .common import BENCH, children, connection_room, metric, start_quire
from .lists import open_windows, put_feed


def fan_out_run(port, base, count, window, sources, list_name="feed", item=("f10", "row"), label="fan-out"):
    """Opens `count` sessions holding `window` items of `list_name`; bench/fan-out-client.c parks a long poll for
    each on its own connection (from `sources` loopback addresses), sends one write updating `item` (id, type)
    and reads every answer with one epoll loop. Returns the sessions, [(session, version)]."""
    binary = os.path.join(tempfile.mkdtemp(prefix="quire-fan-out-"), "fan-out-client")
    subprocess.run(["cc", "-O2", "-o", binary, os.path.join(BENCH, "fan-out-client.c")], check=True)
    paths = os.path.join(os.path.dirname(binary), "paths")
    opened = open_windows(port, list_name, window, count)
    with open(paths, "w") as f:
        for session, version in opened:
            f.write(f"/v1/sessions/{session}/changes?since={version}&wait=60\n")
    ops = {"ops": [{"op": "updateItems", "items": [{"id": item[0], "type": item[1], "data": {"edited": True}}]}]}
    client = subprocess.Popen([binary, str(port), paths, f"/v1/lists/{list_name}/ops", json.dumps(ops), str(sources)],
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
    print(f"{label}: {count} sessions holding {window}-item windows, {waiting} long polls waiting (from {sources} "
          f"loopback source addresses); one 1-item write")
    print(f"{label}: {result} (target: the last <= 1000 ms) {'ok' if ok else 'MISSED'}")
    return opened


def fan_out(options):
    sources = connection_room(options.count)
    process, base = start_quire({"QUIRE_LONG_POLL_MAX_WAITERS": str(options.count + 100),
                                 "QUIRE_SERVER_CONNECTION_LIMIT": str(options.count + 1000),
                                 "QUIRE_SESSIONS_CAPACITY": str(max(200_000, options.count + 1000))})
    port = int(base.rsplit(":", 1)[1])
    put_feed(base, max(options.window * 2, 20_000))
    fan_out_run(port, base, options.count, options.window, sources)
