"""`bench.py working-set`: lists beyond memory, a restart and first pages of random lists from a
data set larger than the budget."""
import os, subprocess, sys, tempfile, time

from .common import ROOT, build, free_port, metric, quire_environment, request, rss_mb, start
from .lists import Connection


def build_bench():
    subprocess.run(["swift", "build", "-c", "release", "--product", "quire-bench"],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return os.path.join(ROOT, ".build", "release", "quire-bench")


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def working_set(options):
    """Lists beyond memory: only the lists in use are held, so a restart reads none and memory follows the pages
    asked for, not the data set."""
    import random
    folder = options.folder or tempfile.mkdtemp(prefix="quire-working-set-")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"lists-{options.lists}x{options.items}.sqlite")
    if not os.path.exists(path):
        seeding = time.monotonic()
        subprocess.run([build_bench(), "seed-lists", path + ".part", str(options.lists), str(options.items)],
                       check=True)
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + ".part" + suffix):
                os.rename(path + ".part" + suffix, path + suffix)
        print(f"seeded {options.lists:,} lists x {options.items} items in {time.monotonic() - seeding:.0f} s")
    print(f"data set: {options.lists:,} lists x {options.items} items, {os.path.getsize(path) / 1e6:,.0f} MB file "
          f"(in the OS page cache: a warm restart); lists.memoryBytes {options.budget:,}")
    binary = build()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    # A small page cache: what the pages grow resident memory by is then the lists' (the cache, bounded by
    # pages.cacheEntries on its own, would hold 1,000 prepared pages beside them).
    env = quire_environment(port, {"QUIRE_STORAGE_PATH": path, "QUIRE_DEMO_SEED": "false",
                                   "QUIRE_LISTS_MEMORY_BYTES": str(options.budget),
                                   "QUIRE_PAGES_CACHE_ENTRIES": "16"})
    started = time.monotonic()
    process = start([binary, "serve"], env=env, cwd=folder)
    while True:
        try:
            if request("GET", base + "/readyz")[0] == 200:
                break
        except Exception:
            pass
        if time.monotonic() - started > 120 or process.poll() is not None:
            sys.exit("quire did not become ready")
        time.sleep(0.005)
    ready = time.monotonic() - started
    rss_ready = rss_mb(process.pid)
    connection = Connection(port)
    names = random.Random(46).sample(range(options.lists), options.pages)
    timings = {}
    for phase in ("cold", "warm"):
        latencies = []
        for index in names:
            begun = time.perf_counter()
            status, _ = connection.request("GET", f"/v1/lists/u-{index}")
            latencies.append((time.perf_counter() - begun) * 1000)
            if status != 200:
                sys.exit(f"GET /v1/lists/u-{index}: {status}")
        timings[phase] = latencies
        if phase == "cold":
            rss_after = rss_mb(process.pid)
    counted = metric(base, "quire_lists_resident_bytes") / 1e6
    resident = metric(base, "quire_lists_resident")
    loads = metric(base, "quire_list_loads_total")
    evictions = metric(base, "quire_list_evictions_total")
    grown = rss_after - rss_ready
    budget_mb = options.budget / 1e6 if options.budget else float("inf")
    rows = [
        ("restart to /readyz 200", f"{ready:.2f} s", "<= 1 s", ready <= 1),
        (f"resident memory after the restart and {options.pages:,} first pages",
         f"{rss_after:,.0f} MB (at ready {rss_ready:,.0f} MB)", "<= 300 MB" if options.lists <= 100_000
         else f"<= budget + 200 MB", rss_after <= (300 if options.lists <= 100_000 else budget_mb + 200)),
        (f"first page of a cold list, p99 (p50) of {options.pages:,}",
         f"{percentile(timings['cold'], 0.99):.2f} ms ({percentile(timings['cold'], 0.5):.2f} ms)", "<= 10 ms",
         percentile(timings["cold"], 0.99) <= 10),
        ("the same pages again, lists held: p99 (p50)",
         f"{percentile(timings['warm'], 0.99):.2f} ms ({percentile(timings['warm'], 0.5):.2f} ms)", "", None),
        ("lists counted by the budget ÷ the resident memory they grew by",
         f"{counted:.1f} MB / {grown:.1f} MB = {counted / grown if grown > 0 else float('nan'):.2f}",
         "0.75-1.25", grown > 0 and 0.75 <= counted / grown <= 1.25),
        ("lists held, loaded, left memory", f"{resident:,}, {loads:,}, {evictions:,}", "", None),
    ]
    width = max(len(row[0]) for row in rows)
    for name, figure, target, met in rows:
        verdict = "" if met is None else ("met" if met else "MISSED")
        print(f"  {name:<{width}}  {figure:<34} {target:<18} {verdict}")
