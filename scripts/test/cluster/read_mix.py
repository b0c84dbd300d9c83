"""wrk's read mix through nginx with 1, 2 and 3 instances, with the CPU per request of the instances and
of nginx (--bench-only)."""
import os, re, subprocess

from lib.proc_times import cpu_seconds

from .harness import INSTANCES, ROOT


def read_mix(cluster, seconds):
    """wrk's read scenarios (bench/walk-pages.lua, bench/sessions.lua on the demo list) through nginx with 1, 2
    and 3 instances, and the CPU each request costs the instances and nginx (from /proc), so that scaling on
    more cores can be estimated: on 2 cores, wrk, nginx and the instances share the same two."""
    if subprocess.run(["sh", "-c", "command -v wrk"], capture_output=True).returncode != 0:
        return ["read mix: skipped (no wrk: scripts/local/install-deps bench)"]
    lines = []
    for count in (1, 2, 3):
        cluster.down()
        cluster.env["CLUSTER_INSTANCES"] = str(count)
        cluster.up()
        quire = [int(open(os.path.join(cluster.dir, name, "pid")).read()) for name in INSTANCES[:count]]
        master = int(open(os.path.join(cluster.dir, "nginx", "nginx.pid")).read())
        nginx = [master] + [int(p) for p in subprocess.run(["pgrep", "-P", str(master)], capture_output=True,
                                                           text=True).stdout.split()]
        figures = []
        for label, script, arguments in (("walk-pages", "walk-pages.lua", ["demo", "20"]),
                                         ("sessions", "sessions.lua", ["demo", "20", "4", "4"])):
            before = (cpu_seconds(quire), cpu_seconds(nginx))
            out = subprocess.run(["wrk", "-t1", "-c32", f"-d{int(seconds)}s", "--latency", "-s",
                                  os.path.join(ROOT, "bench", script), cluster.nginx, "--", *arguments],
                                 capture_output=True, text=True, timeout=seconds + 60).stdout
            after = (cpu_seconds(quire), cpu_seconds(nginx))
            rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
            total = re.search(r"(\d+) requests in", out)
            unexpected = re.search(r"unexpected=(\d+)", out)
            if not (rate and total):
                figures.append(f"{label}: wrk failed: {out[-300:]}")
                continue
            requests = int(total.group(1)) or 1
            figures.append(f"{label} {float(rate.group(1)):.0f}/s (CPU per request: instances "
                           f"{1e6 * (after[0] - before[0]) / requests:.0f} us, nginx "
                           f"{1e6 * (after[1] - before[1]) / requests:.0f} us"
                           + (f", {unexpected.group(1)} unexpected" if unexpected and unexpected.group(1) != "0" else "")
                           + ")")
        lines.append(f"read mix through nginx, {count} instance{'s' if count > 1 else ''}: " + "; ".join(figures))
    lines.append(f"read mix: {os.cpu_count()} cores shared by wrk, nginx and the instances: the figures show the "
                 f"cost per request more than scaling")
    cluster.down()
    cluster.env["CLUSTER_INSTANCES"] = "3"
    return lines
