"""partition: lists written and read through nginx are each held by exactly one instance, their home on
nginx's ring, and the homes spread the lists about evenly."""
import threading, time

from .harness import check
from .lists import create_list, item, new_list
from .load import check_homes


def test_partition(cluster, count=300):
    """N lists written and read through nginx: each is held by its home on nginx's ring and by no other instance;
    the homes spread the lists about evenly."""
    ring = cluster.ring()
    names = [new_list(f"part{n}") for n in range(count)]
    before = {m: cluster.metrics(m) for m in cluster.members}
    started = time.monotonic()

    def write(share):
        nginx = cluster.client(cluster.nginx)
        for name in share:
            create_list(nginx, name, [{"id": "s", "items": [item(f"i{k}", k) for k in range(5)]}])
            answer = nginx.request("GET", f"/v1/lists/{name}?limit=2")
            check(answer.status == 200 and answer.json["version"] == 1, f"GET {name} through nginx: {answer}")

    threads = [threading.Thread(target=write, args=(names[n::4],), daemon=True) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    elapsed = time.monotonic() - started
    after = {m: cluster.metrics(m) for m in cluster.members}
    loaded = {m: int(after[m]["quire_list_loads_total"] - before[m].get("quire_list_loads_total", 0))
              for m in cluster.members}
    expected = {m: sum(1 for n in names if ring.home(n) == m) for m in cluster.members}
    # Each list loaded once (a write to a list not held looks for it in the store first), by its home only: held by
    # exactly one instance.
    check(sum(loaded.values()) == count, f"{count} lists written and read through nginx were loaded "
          f"{sum(loaded.values())} times in all ({loaded}): some are held by more than one instance")
    check(loaded == expected, f"lists loaded per instance {loaded}, their homes on nginx's ring {expected}")
    check_homes(cluster, names, ring, "partition")
    shares = {m: loaded[m] / count for m in cluster.members}
    check(max(shares.values()) <= 0.55 and min(shares.values()) >= 0.15, f"lists per instance far from even: {loaded}")
    return (f"{count} lists written and read through nginx in {elapsed:.1f} s: each held by exactly one instance, "
            f"its home on nginx's ring ({', '.join(f'{m} {loaded[m]}' for m in cluster.members)}; busiest "
            f"{max(shares.values()):.0%}); a session on each opened on its home")
