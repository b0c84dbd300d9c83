"""Lists and the writes the tests make on them: list names and items, whole-list reads, waiting until
every instance serves a version, the random writers and the checks that what they had acknowledged is there."""
import json, random, threading, time, uuid
import http.client

from .harness import Failure, INSTANCES, check


def new_list(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def item(item_id, data):
    return {"id": item_id, "type": "row", "data": data}


def create_list(client, name, sections):
    answer = client.request("PUT", f"/v1/lists/{name}", {"sections": sections})
    check(answer.status in (200, 201), f"PUT /v1/lists/{name}: {answer}")
    return answer.json["version"]


def full_list(client, name):
    """(version, [(section id, item id, type, data)], section ids) of the whole list, page by page."""
    rows, sections, version, cursor = [], [], None, None
    for _ in range(1000):
        path = f"/v1/lists/{name}?limit=500" + (f"&after={cursor}" if cursor else "")
        answer = client.get(path)
        check(answer.status == 200, f"GET {path}: {answer}")
        page = answer.json
        if version is None:
            version = page["version"]
        elif page["version"] != version:
            return full_list(client, name)  # a write between two pages: read again
        for section in page["sections"]:
            if not sections or sections[-1] != section["id"]:
                sections.append(section["id"])
            rows.extend((section["id"], i["id"], i["type"], i.get("data")) for i in section["items"])
        if not page["page"]["hasNext"]:
            return version, rows, sections
        cursor = page["page"]["next"]
    raise Failure(f"{name}: more than 1000 pages")


def served_version(client, name):
    answer = client.get(f"/v1/lists/{name}?limit=1", timeout=5)
    return answer.json["version"] if answer.status == 200 else None


def wait_version(cluster, name, version, instances=INSTANCES, seconds=20):
    """Until every instance serves `name` at `version` at least; the time it took."""
    started = time.monotonic()
    clients = {i: cluster.client(i) for i in instances}
    pending = set(instances)
    last = {}
    while pending:
        for instance in sorted(pending):
            try:
                last[instance] = served_version(clients[instance], name)
            except (OSError, http.client.HTTPException) as error:
                last[instance] = repr(error)
            if isinstance(last[instance], int) and last[instance] >= version:
                pending.discard(instance)
        if pending and time.monotonic() - started > seconds:
            raise Failure(f"{name}: after {seconds} s, {', '.join(sorted(pending))} serve(s) version "
                          f"{[last[i] for i in sorted(pending)]}, not {version}: do the instances share "
                          f"PostgreSQL (storage.kind: postgres) and learn of each other's writes?")
        if pending:
            time.sleep(0.02)
    return time.monotonic() - started


def same_everywhere(cluster, name, instances=INSTANCES):
    """Every instance serves the same version and rows; returns them."""
    reads = {i: full_list(cluster.client(i), name) for i in instances}
    first = instances[0]
    for instance in instances[1:]:
        check(reads[instance][0] == reads[first][0],
              f"{name}: {instance} serves version {reads[instance][0]}, {first} {reads[first][0]}")
        check(reads[instance][1:] == reads[first][1:],
              f"{name}: {instance} and {first} serve version {reads[first][0]} with different content")
    return reads[first]


class Writer(threading.Thread):
    """Random ops on one list, each write inserting an item of its own (after a base item or one of its own),
    some also updating, moving or removing one of its own acknowledged items. Keeps what was acknowledged."""

    def __init__(self, name, client, lists, base, writes=None, stop=None, pause=0.0, moves=True, seed=None):
        super().__init__(daemon=True)
        self.tag, self.client, self.lists, self.base = name, client, lists, base
        self.writes, self.stop, self.pause, self.moves = writes, stop, pause, moves
        self.random = random.Random(seed)
        self.live = {lst: {} for lst in lists}     # acknowledged items: id -> data
        self.removed = {lst: set() for lst in lists}
        # Items a write without a known outcome touched (no answer, nginx's 502, or a 503 that says the write
        # may have been made): id -> the data it may have (None: it may be gone). Such a write may have been
        # committed by an instance killed before it answered, so these items are no longer used or checked
        # as acknowledged.
        self.uncertain = {lst: {} for lst in lists}
        self.versions = {lst: [] for lst in lists}
        self.unknown = []                          # (time, what) of writes without an answer
        self.refused = []                          # (time, status, Retry-After, problem) of answered failures
        self.acked_at = []                         # times of acknowledged writes
        self.latencies = []

    def run(self):
        count = 0
        while (self.writes is None or count < self.writes) and not (self.stop and self.stop.is_set()):
            count += 1
            lst = self.random.choice(self.lists)
            live = self.live[lst]
            new_id = f"{self.tag}-{count}"
            data = {"w": self.tag, "n": count}
            anchor = self.random.choice(self.base + list(live)[-20:])
            ops = [{"op": "insertItems", "section": "s", "after": anchor, "items": [item(new_id, data)]}]
            others = [i for i in live if i != anchor]
            updated = moved = removed = None
            if others and self.random.random() < 0.25:
                updated = self.random.choice(others)
                ops.append({"op": "updateItems", "items": [item(updated, {"w": self.tag, "n": count, "u": 1})]})
            if self.moves and others and self.random.random() < 0.1:
                moved = self.random.choice(others)
                ops.append({"op": "moveItem", "id": moved, "section": "s", "after": self.random.choice(self.base)})
            if others and self.random.random() < 0.3:
                removed = self.random.choice(others)
                ops.append({"op": "removeItems", "ids": [removed]})
            started = time.monotonic()
            try:
                answer = self.client.request("POST", f"/v1/lists/{lst}/ops", {"ops": ops}, timeout=30)
            except (OSError, http.client.HTTPException) as error:
                self.unknown.append((time.monotonic(), f"{lst} {new_id}: {error!r}"))
                self.outcome_unknown(lst, data, updated, removed)
                continue
            if answer.status != 200:
                self.refused.append((time.monotonic(), answer.status, answer.headers.get("retry-after"),
                                     answer.problem() or answer.raw[:200]))
                written = answer.json.get("written") if isinstance(answer.json, dict) else None
                if answer.status == 502 or written == "unknown":
                    self.outcome_unknown(lst, data, updated, removed)
                if self.pause:
                    time.sleep(self.pause)
                continue
            self.latencies.append(time.monotonic() - started)
            self.acked_at.append(time.monotonic())
            self.versions[lst].append(answer.json["version"])
            live[new_id] = data
            if updated:
                live[updated] = {"w": self.tag, "n": count, "u": 1}
            if removed:
                del live[removed]
                self.removed[lst].add(removed)
            if self.pause:
                time.sleep(self.random.uniform(0, 2 * self.pause))


    def outcome_unknown(self, lst, data, updated, removed):
        """A write whose outcome is unknown updated `updated` and removed `removed` (or not; they may be the same
        item, updated then removed)."""
        live, uncertain = self.live[lst], self.uncertain[lst]
        after_update = json.dumps({"w": self.tag, "n": data["n"], "u": 1}, sort_keys=True)
        for item_id, after in ((updated, after_update), (removed, None)):
            if item_id is None:
                continue
            states = uncertain.setdefault(item_id, set())
            if item_id in live:
                states.add(json.dumps(live.pop(item_id), sort_keys=True))
            states.add(after)


def check_acknowledged(name, rows, writers, base_ids):
    """Every acknowledged item is in the rows with its acknowledged data; every acknowledged removal is not."""
    by_id = {}
    for section, item_id, _, data in rows:
        check(item_id not in by_id, f"{name}: item {item_id} twice in the final list")
        by_id[item_id] = data
    for base_id in base_ids:
        check(base_id in by_id, f"{name}: base item {base_id} lost")
    lost, stale, resurrected = [], [], []
    for writer in writers:
        for item_id, data in writer.live.get(name, {}).items():
            if item_id not in by_id:
                lost.append(item_id)
            elif by_id[item_id] != data:
                stale.append(f"{item_id}: {by_id[item_id]} instead of {data}")
        resurrected.extend(i for i in writer.removed.get(name, ()) if i in by_id)
        for item_id, allowed in writer.uncertain.get(name, {}).items():
            found = json.dumps(by_id[item_id], sort_keys=True) if item_id in by_id else None
            if found not in allowed:
                stale.append(f"{item_id}: {by_id.get(item_id)}, neither before nor after a write of unknown outcome")
    check(not lost, f"{name}: {len(lost)} acknowledged item(s) lost, e.g. {lost[:5]}")
    check(not stale, f"{name}: {len(stale)} acknowledged update(s) lost, e.g. {stale[:3]}")
    check(not resurrected, f"{name}: {len(resurrected)} acknowledged removal(s) undone, e.g. {resurrected[:5]}")


def check_versions(name, writers, first):
    versions = sorted(v for w in writers for v in w.versions.get(name, []))
    duplicates = sorted({v for v in versions if versions.count(v) > 1}) if len(set(versions)) != len(versions) else []
    check(not duplicates, f"{name}: versions acknowledged twice: {duplicates[:10]}")
    return versions
