"""wake: a write on q1 wakes a long poll and an event stream held on q2."""
import json, threading, time
import http.client

from .harness import Failure, check
from .lists import create_list, item, new_list, wait_version
from .sessions import instance_of


def test_wake(cluster):
    name = new_list("wake")
    a, b = cluster.client("q1"), cluster.client("q2")
    version = create_list(a, name, [{"id": "s", "items": [item("base-0", 0)]}])
    wait_version(cluster, name, version, ("q2",))
    poll_session = b.request("POST", f"/v1/lists/{name}/sessions", {"limit": 10})
    stream_session = b.request("POST", f"/v1/lists/{name}/sessions", {"limit": 10})
    check(poll_session.status == 201 and stream_session.status == 201, f"sessions on q2: {poll_session}")
    if instance_of(poll_session.json["session"]) is None:
        raise Failure(f"session id {poll_session.json['session']!r} names no instance: is cluster.instance set "
                      f"(QUIRE_CLUSTER_INSTANCE), and does this quire know it?")
    check(instance_of(poll_session.json["session"]) == "q2", f"a session opened on q2 is named "
          f"{poll_session.json['session']}")
    results = {}

    def long_poll():
        poller = cluster.client("q2")
        answer = poller.request("GET", f"/v1/sessions/{poll_session.json['session']}/changes?seq=1&wait=20",
                                timeout=30)
        results["poll"] = (time.monotonic(), answer)

    def stream():
        connection = http.client.HTTPConnection("127.0.0.1", cluster.ports["q2"], timeout=30)
        connection.request("GET", f"/v1/sessions/{stream_session.json['session']}/events?seq=1")
        response = connection.getresponse()
        results["stream-status"] = response.status
        event = None
        while True:
            line = response.readline()
            if not line:
                break
            line = line.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event in ("changes", "reset"):
                results["stream"] = (time.monotonic(), json.loads(line[6:]))
                break
        connection.close()

    threads = [threading.Thread(target=long_poll, daemon=True), threading.Thread(target=stream, daemon=True)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    check("poll" not in results and "stream" not in results, f"answered before any write: {results}")
    written = time.monotonic()
    answer = a.request("POST", f"/v1/lists/{name}/ops",
                       {"ops": [{"op": "insertItems", "section": "s", "before": "base-0", "items": [item("woken", 1)]}]})
    check(answer.status == 200, f"write on q1: {answer}")
    for thread in threads:
        thread.join(10)
    check("poll" in results, "the long poll on q2 was not answered within 10 s of a write on q1")
    check("stream" in results, f"the event stream on q2 sent nothing within 10 s of a write on q1 "
          f"(status {results.get('stream-status')})")
    poll_at, poll = results["poll"]
    check(poll.status == 200 and poll.json["version"] == answer.json["version"], f"the long poll: {poll}")
    check("woken" in poll.raw.decode(), f"the long poll's answer lacks the item written: {poll}")
    stream_at, event = results["stream"]
    check(event["version"] == answer.json["version"] and "woken" in json.dumps(event), f"the stream: {event}")
    return (f"a write on q1 woke a long poll on q2 after {1000 * (poll_at - written):.0f} ms and an event "
            f"stream on q2 after {1000 * (stream_at - written):.0f} ms (write included)")
