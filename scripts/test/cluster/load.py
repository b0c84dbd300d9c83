"""The load through nginx that the kill, membership and partition checks run under: lists homed on every
instance, readers, and where each list's sessions open."""
import random, threading, time
import http.client

from .harness import check
from .lists import new_list
from .sessions import SessionClient, instance_of


def pick_lists(cluster, prefix, per_instance, members=None):
    """New list names, `per_instance` homed on each member by nginx's ring (in member order)."""
    ring = cluster.ring(members)
    chosen = {m: [] for m in (members or cluster.members)}
    while any(len(names) < per_instance for names in chosen.values()):
        name = new_list(prefix)
        home = ring.home(name)
        if len(chosen[home]) < per_instance:
            chosen[home].append(name)
    return [name for names in chosen.values() for name in names]


class Reader(threading.Thread):
    """Pages of random lists through nginx until `stop`; every answer but 200, and every transport failure, is a
    failed read."""

    def __init__(self, cluster, lists, stop, seed):
        super().__init__(daemon=True)
        self.client, self.lists, self.stop = cluster.client(cluster.nginx), lists, stop
        self.random, self.count, self.failures = random.Random(seed), 0, []

    def run(self):
        while not self.stop.is_set():
            name = self.random.choice(self.lists)
            try:
                answer = self.client.request("GET", f"/v1/lists/{name}?limit=5", timeout=30)
                if answer.status != 200:
                    self.failures.append((time.monotonic(), name, f"{answer.status} {answer.problem()}"))
            except (OSError, http.client.HTTPException) as error:
                self.failures.append((time.monotonic(), name, repr(error)))
            self.count += 1
            time.sleep(0.005)


def session_homes(cluster, names):
    """The instance each list's sessions open on through nginx (the tag of a session's id), each session deleted."""
    nginx = cluster.client(cluster.nginx)
    homes = {}
    for name in names:
        answer = nginx.request("POST", f"/v1/lists/{name}/sessions", {"limit": 1})
        check(answer.status == 201, f"a session on {name} through nginx: {answer}")
        homes[name] = instance_of(answer.json["session"])
        nginx.request("DELETE", f"/v1/sessions/{answer.json['session']}")
    return homes


def check_homes(cluster, names, ring, what):
    homes = session_homes(cluster, names)
    wrong = [f"{n}: {homes[n]}, not {ring.home(n)}" for n in names if homes[n] != ring.home(n)]
    check(not wrong, f"{what}: {len(wrong)} of {len(names)} lists served elsewhere than their home on nginx's "
          f"ring, e.g. {wrong[:3]}")


def settle_homes(cluster, names, ring, seconds=15):
    """Until a session on each list opens on its home: nginx sends a list's requests elsewhere for fail_timeout
    (10 s) after its home failed (an instance killed by an earlier test and started again)."""
    deadline = time.monotonic() + seconds
    while True:
        homes = session_homes(cluster, names)
        if all(homes[n] == ring.home(n) for n in names) or time.monotonic() > deadline:
            return
        time.sleep(0.5)


def open_clients(cluster, names, per_list, ring):
    """`per_list` session clients through nginx on each list, each on the list's home."""
    clients = []
    for name in names:
        for _ in range(per_list):
            client = SessionClient(len(clients), cluster, name)
            client.open()
            check(client.instance() is not None, f"session id {client.session!r} names no instance (cluster.instance)")
            check(client.instance() == ring.home(name), f"a session on {name} opened through nginx is on "
                  f"{client.instance()}, not on the list's home {ring.home(name)}")
            clients.append(client)
    return clients
