"""`bench.py long-polls`: N concurrent long polls on one list, one write: the time until every one
is answered."""
import asyncio, json, re, resource, time

from .common import request, start_quire
from .lists import Connection


async def long_polls_async(port, base, count):
    created = []
    connection = Connection(port)
    for _ in range(count):
        status, body = connection.request("POST", "/v1/lists/demo/sessions", b'{"limit":20}')
        created.append(json.loads(body))
    answered = []

    async def poll(session):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        path = f"/v1/sessions/{session['session']}/changes?since={session['version']}&wait=30"
        writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"content-length: (\d+)", head, re.I).group(1))
        body = await reader.readexactly(length)
        answered.append((time.monotonic(), int(head.split()[1]), json.loads(body)["version"]))
        writer.close()

    tasks = [asyncio.create_task(poll(session)) for session in created]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        _, metrics = await asyncio.to_thread(request, "GET", base + "/metrics")
        waiting = int(re.search(rb"quire_long_polls_waiting (\d+)", metrics).group(1))
        if waiting >= count:
            break
        await asyncio.sleep(0.05)
    print(f"long-polls: {waiting} waiting")
    write_time = time.monotonic()
    await asyncio.to_thread(request, "POST", base + "/v1/lists/demo/ops",
                            {"ops": [{"op": "updateItems", "items": [{"id": "m-1", "type": "message", "data": {"edited": True}}]}]})
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=60)
    latest = max(t for t, _, _ in answered) - write_time
    statuses = {status for _, status, _ in answered}
    versions = {version for _, _, version in answered}
    print(f"long-polls: {len(answered)} answered (statuses {sorted(statuses)}, versions {sorted(versions)}); "
          f"the last {latest * 1000:.0f} ms after the write (target <= 1000 ms)")


def long_polls(options):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, options.count + 1024), hard))
    process, base = start_quire()
    port = int(base.rsplit(":", 1)[1])
    asyncio.run(long_polls_async(port, base, options.count))
