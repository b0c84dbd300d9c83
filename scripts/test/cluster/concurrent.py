"""concurrent: q1 and q2 write one list at once; every acknowledged write is in the final list,
acknowledged versions are unique and gapless, and every instance serves the same final version and document."""
import time

from .harness import check
from .lists import (Writer, check_acknowledged, check_versions, create_list, item, new_list, same_everywhere,
    wait_version)


def test_concurrent(cluster, writes):
    name = new_list("race")
    base = [f"base-{i}" for i in range(20)]
    first = create_list(cluster.client("q1"), name, [{"id": "s", "items": [item(i, None) for i in base]}])
    wait_version(cluster, name, first, ("q1", "q2", "q3"))
    per_instance = 4
    writers = []
    for n, instance in enumerate(["q1"] * per_instance + ["q2"] * per_instance):
        share = writes // (2 * per_instance) + (1 if n < writes % (2 * per_instance) else 0)
        writers.append(Writer(f"{instance}w{n}", cluster.client(instance), [name], base, writes=share, seed=n))
    started = time.monotonic()
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(150)
    elapsed = time.monotonic() - started
    check(not any(w.is_alive() for w in writers), "writers still running after 150 s")
    problems = [p for w in writers for p in w.unknown + [(t, f"{s} {r} {x}") for t, s, r, x in w.refused]]
    check(not problems, f"{len(problems)} write(s) not acknowledged with no failure injected, e.g. "
          f"{[p[1] for p in problems[:3]]}")
    versions = check_versions(name, writers, first)
    check(versions == list(range(first + 1, first + 1 + len(versions))),
          f"{name}: acknowledged versions are not gapless from {first + 1}: first gap after "
          f"{next((v for v, w in zip(versions, versions[1:]) if w != v + 1), None)}")
    check(len(versions) == writes, f"{len(versions)} acknowledged of {writes}")
    wait_version(cluster, name, first + writes)
    version, rows, _ = same_everywhere(cluster, name)
    check(version == first + writes, f"{name}: final version {version}, expected {first} + {writes} acknowledged")
    check_acknowledged(name, rows, writers, base)
    expected = len(base) + sum(len(w.live[name]) for w in writers)
    check(len(rows) == expected, f"{name}: {len(rows)} items, expected {expected}")
    by_instance = {i: sum(len(w.versions[name]) for w in writers if w.tag.startswith(i)) for i in ("q1", "q2")}
    return (f"{writes} writes ({by_instance['q1']} on q1, {by_instance['q2']} on q2, 8 writers) in {elapsed:.1f} s "
            f"({writes / elapsed:.0f}/s); versions {first + 1}..{version} gapless, each acknowledged once; "
            f"q1 q2 q3 serve version {version} with the same {len(rows)} items")
