"""`bench.py cluster`: the cluster's figures, each next to its target, on a local cluster of the release build
(scripts/local/cluster in CLUSTER_DIR, default .build/cluster-bench, stopped at the end): a write on q1 seen by a
long poll on q2 (p50 <= 10 ms, p99 <= 50 ms over 200 writes); durable writes per second through nginx on one list
and on 100 lists (16 writers), next to the same load on one SQLite instance; the partition (20,000 lists: the
busiest instance's share and memory, a 4th instance added and the busiest SIGKILLed under load); wrk's read mix
(bench/walk-pages.lua, bench/sessions.lua) through nginx with 1, 2 and 3 instances, with the CPU per request of
the instances and of nginx. Access logs are off (quire's and nginx's). The run is bounded in time.

The figures are made by scripts/test/cluster-test --bench-only, which shares its cluster harness with the
cluster's tests; this family checks the binary and hands over to it.
"""
import os, sys

from .common import ROOT

# cluster-test's options that this family passes on when given.
PASSED_ON = ("bench_writes", "bench_seconds", "bench_lists", "bench_items", "deadline")


def cluster(options):
    os.chdir(ROOT)
    binary = options.binary
    if not os.access(binary, os.X_OK):
        sys.exit(f"cluster-bench: {binary} is not built (make build-release)")
    arguments = [os.path.join(ROOT, "scripts", "test", "cluster-test"), "--bench-only", "--binary", binary]
    for name in PASSED_ON:
        value = getattr(options, name)
        if value is not None:
            arguments += ["--" + name.replace("_", "-"), str(value)]
    if options.keep:
        arguments.append("--keep")
    os.environ.setdefault("CLUSTER_DIR", ".build/cluster-bench")
    sys.stdout.flush()
    os.execv(arguments[0], arguments)
