"""`bench.py streams`: the resident memory of an idle event stream, beside the stack's own floor
(bench/stream-reference.c), each with its breakdown, then one write delivered to every stream."""
import json, os, re, subprocess, tempfile, time

from lib.proc_times import cpu_seconds

from .census import HeapCensus, describe_blocks, describe_breakdown
from .common import BENCH, children, compile_reference, connection_room, metric, request, rss_mb, start_quire
from .lists import open_windows, open_windows_on, put_feed


HEARTBEAT_SECONDS = 15.0  # events.heartbeatInterval's default


def stream_floor(client_binary, count, sources, pool_bytes, census, preload=None):
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
    client = subprocess.Popen([client_binary, str(port), paths, "/write", "{}", str(sources)],
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
    sources = connection_room(options.count)
    binary = os.path.join(tempfile.mkdtemp(prefix="quire-streams-"), "stream-client")
    subprocess.run(["cc", "-O2", "-o", binary, os.path.join(BENCH, "stream-client.c")], check=True)
    pool_bytes = 16 << 10  # server.connectionMemoryBytes' default, which Quire runs with below
    floor, floor_delivery, floor_parts = stream_floor(binary, options.count, sources, pool_bytes, HeapCensus())
    census = HeapCensus()
    # Sessions for the streams on one list, then as many on the many lists (the first ones are idle by then).
    process, base = start_quire({"QUIRE_EVENTS_MAX_STREAMS": str(options.count + 100),
                                 "QUIRE_EVENTS_HEARTBEAT_INTERVAL": str(HEARTBEAT_SECONDS),
                                 "QUIRE_SERVER_CONNECTION_LIMIT": str(options.count + 1000),
                                 "QUIRE_SESSIONS_CAPACITY": str(2 * options.count + 1000), **census.environment()})
    port = int(base.rsplit(":", 1)[1])
    put_feed(base, max(options.window * 2, 20_000))
    paths = os.path.join(os.path.dirname(binary), "paths")
    opening = time.monotonic()
    with open(paths, "w") as f:
        for session, _ in open_windows(port, "feed", options.window, options.count):
            f.write(f"/v1/sessions/{session}/events\n")
    sessions_seconds = time.monotonic() - opening
    time.sleep(2)
    before = rss_mb(process.pid)
    census.recording(True)
    body = json.dumps({"ops": [{"op": "updateItems", "items": [{"id": "f10", "type": "row", "data": {"edited": True}}]}]})
    opening = time.monotonic()
    client = subprocess.Popen([binary, str(port), paths, "/v1/lists/feed/ops", body, str(sources)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    children.append(client)
    ready = client.stdout.readline().strip()
    ready_seconds = time.monotonic() - opening
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
    # Every stream idle for a heartbeat interval and more: what the server spends on them (heartbeats, its tickers).
    idle_from = cpu_seconds([process.pid])
    time.sleep(options.idle_seconds)
    idle_share = (cpu_seconds([process.pid]) - idle_from) / options.idle_seconds
    client.stdin.write("go\n")
    client.stdin.flush()
    result = client.stdout.readline().strip()
    client.wait(timeout=180)
    last = re.search(r"last (\d+) ms", result)
    # The target: the last delivery within 1 s up to 10,000 streams, within 2 s up to 100,000.
    target_ms = 1000 if options.count <= 10_000 else 2000
    delivered_ok = client.returncode == 0 and last and int(last.group(1)) <= target_ms
    ready_ok = ready.startswith(f"ready {options.count} of ") and ready_seconds <= 60 and refused == 0
    print(f"streams: {options.count} sessions holding {options.window}-item windows opened in {sessions_seconds:.0f} s; "
          f"streams from {sources} loopback source addresses; client: {ready} in {ready_seconds:.1f} s "
          f"(target: every one, within 60 s) {'ok' if ready_ok else 'MISSED'}; "
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
    print(f"streams-idle: the server's CPU while the {open_streams} streams sat idle for {options.idle_seconds} s "
          f"(heartbeats every {HEARTBEAT_SECONDS:.0f} s): {idle_share * 100:.1f}% of one core (target <= 5%) "
          f"{'ok' if idle_share <= 0.05 else 'MISSED'}")
    print(f"streams-delivery: {result} (target: every stream, the last <= {target_ms} ms) "
          f"{'ok' if delivered_ok else 'MISSED'}")
    if options.lists:
        streams_over_lists(port, base, os.path.dirname(binary), options.count, options.lists, options.lists_seconds,
                           sources)


def streams_over_lists(port, base, directory, count, lists, seconds, sources):
    """`count` streams over `lists` lists of 20 items (as many on each), every list written once a second for
    `seconds` s (bench/stream-lists-client.c): the share of events delivered within 1 s of their write, and the
    streams that missed their list's last write. Run after the streams on one list have ended: a client's close
    of a suspended stream is noticed at its next heartbeat, so this waits until the server holds none."""
    binary = os.path.join(directory, "stream-lists-client")
    subprocess.run(["cc", "-O2", "-pthread", "-o", binary, os.path.join(BENCH, "stream-lists-client.c")], check=True)
    deadline = time.monotonic() + 2 * HEARTBEAT_SECONDS + 30
    while metric(base, "quire_event_streams_open") > 0 and time.monotonic() < deadline:
        time.sleep(0.5)
    items = [{"id": f"i{index}", "type": "row", "data": {"n": index}} for index in range(20)]
    for index in range(lists):
        request("PUT", f"{base}/v1/lists/l{index}", {"sections": [{"id": "all", "items": items}]})
    paths = os.path.join(directory, "list-paths")
    with open(paths, "w") as f:
        opened = open_windows_on(port, [f"l{index % lists}" for index in range(count)], 20)
        for index, (session, _) in enumerate(opened):
            f.write(f"{index % lists} /v1/sessions/{session}/events\n")
    client = subprocess.Popen([binary, str(port), paths, str(lists), str(seconds), str(sources)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    children.append(client)
    ready = client.stdout.readline().strip()
    client.stdin.write("go\n")
    client.stdin.flush()
    result = client.stdout.readline().strip()
    client.wait(timeout=seconds + 120)
    share = re.search(r"([\d.]+)% within 1 s", result)
    missed = re.search(r"(\d+) streams missed", result)
    ok = client.returncode == 0 and share and float(share.group(1)) >= 99.9 and missed and missed.group(1) == "0"
    print(f"streams-lists: {count} streams over {lists} lists ({count // lists} each), every list written once a "
          f"second for {seconds} s; client: {ready}; {result} (target: >= 99.9% within 1 s, none missed) "
          f"{'ok' if ok else 'MISSED'}")
