"""`bench.py long-polls`: N concurrent long polls (20-item windows of the demo list), one write: the time until
every one is answered; then the same N re-armed as they are answered while the list is written once a second: the
share answered in time, and any `503`. The polls are held by C clients with one epoll loop each
(bench/fan-out-client.c, bench/long-poll-client.c), from several loopback source addresses, so that the client
holds 100,000 of them on the same two cores as the server."""
import os, re, subprocess, tempfile

import json

from .common import BENCH, children, connection_room, request, start_quire
from .fan_out import fan_out_run


def rearmed(port, base, sessions, seconds, sources):
    """bench/long-poll-client.c: every session's poll (`wait=25`) parked again as soon as it is answered, the demo
    list's m-1 written once a second for `seconds` s. Each session was answered the one write of the run before:
    its window is at the list's version now."""
    version = json.loads(request("GET", base + "/v1/lists/demo?limit=1")[1])["version"]
    directory = tempfile.mkdtemp(prefix="quire-long-polls-")
    binary = os.path.join(directory, "long-poll-client")
    subprocess.run(["cc", "-O2", "-pthread", "-o", binary, os.path.join(BENCH, "long-poll-client.c")], check=True)
    paths = os.path.join(directory, "paths")
    with open(paths, "w") as f:
        for session, _ in sessions:
            f.write(f"/v1/sessions/{session}/changes?since={version}\n")
    client = subprocess.Popen([binary, str(port), paths, "demo", "m-1", "message", str(seconds), str(sources)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    children.append(client)
    ready = client.stdout.readline().strip()
    client.stdin.write("go\n")
    client.stdin.flush()
    result = client.stdout.readline().strip()
    client.wait(timeout=seconds + 120)
    share = re.search(r"([\d.]+)% in time", result)
    unavailable = re.search(r"503 (\d+)", result)
    ok = client.returncode == 0 and share and float(share.group(1)) == 100.0 and unavailable.group(1) == "0"
    print(f"long-polls-rearmed: {len(sessions)} long polls (wait=25) re-armed as answered, one write a second for "
          f"{seconds} s; client: {ready}; {result} (target: 100% in time, no 503) {'ok' if ok else 'MISSED'}")


def long_polls(options):
    sources = connection_room(options.count)
    process, base = start_quire({"QUIRE_LONG_POLL_MAX_WAITERS": str(options.count + 100),
                                 "QUIRE_SERVER_CONNECTION_LIMIT": str(options.count + 1000),
                                 "QUIRE_SESSIONS_CAPACITY": str(max(200_000, options.count + 1000))})
    port = int(base.rsplit(":", 1)[1])
    sessions = fan_out_run(port, base, options.count, 20, sources, list_name="demo", item=("m-1", "message"),
                           label="long-polls")
    if options.rearm_seconds:
        rearmed(port, base, sessions, options.rearm_seconds, sources)
