"""handoff: a write acknowledged on q1 is at once the ground of the next write on q2."""
from .harness import check
from .lists import create_list, item, new_list, wait_version


def test_handoff(cluster, rounds=200):
    name = new_list("handoff")
    a, b = cluster.client("q1"), cluster.client("q2")
    create_list(a, name, [{"id": "s", "items": [item("base-0", 0)]}])
    wait_version(cluster, name, 1, ("q2",))
    refused = []
    for n in range(rounds):
        first = a.request("POST", f"/v1/lists/{name}/ops",
                          {"ops": [{"op": "insertItems", "section": "s", "items": [item(f"h-{n}", n)]}]})
        check(first.status == 200, f"write on q1: {first}")
        headers = {"If-Match": f'"{first.json["version"]}"'} if n % 2 else None
        second = b.request("POST", f"/v1/lists/{name}/ops",
                           {"ops": [{"op": "updateItems", "items": [item(f"h-{n}", -n)]}]}, headers=headers)
        if second.status != 200:
            refused.append(f"{'with' if headers else 'without'} If-Match: {second.status} "
                           f"{(second.json or {}).get('detail', second.raw[:100])}")
        elif second.json["version"] != first.json["version"] + 1:
            refused.append(f"version {second.json['version']} after {first.json['version']}")
    check(not refused, f"{len(refused)} of {rounds} writes on q2 right after a write on q1 refused, e.g. "
          f"{refused[:3]} (q2 checked them against a version older than the one q1 had acknowledged)")
    return f"{rounds} writes on q2, each naming what q1 had just acknowledged, all accepted"
