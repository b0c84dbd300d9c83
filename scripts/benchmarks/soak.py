"""`bench.py soak`: pages, session flows, writes and long polls at once; fails on any error or on
resident-memory growth after the warm-up."""
import shutil, subprocess, sys, time

from .common import children, metric, parse_scenario, rss_mb, start_quire, wrk_command


def soak(options):
    """Pages, session flows, writes and long polls at once; RSS sampled every few seconds after a warm-up."""
    if not shutil.which("wrk"):
        sys.exit("wrk is missing: make deps-bench")
    process, base = start_quire()
    total = options.warm_up + options.seconds
    wait = 10
    runs = [
        ("walk-pages", wrk_command(base, total, "walk-pages.lua", ["demo", 20], threads=1, connections=16)),
        ("sessions", wrk_command(base, total, "sessions.lua", ["demo", 20, 4, 4], threads=1, connections=16)),
        ("write-and-poll", wrk_command(base, total, "write-and-poll.lua", ["demo", options.write_rate, wait, 20],
                                       threads=2, connections=32, timeout=wait + 30)),
    ]
    print(f"soak: {options.warm_up} s warm-up + {options.seconds} s measured, 16 walkers, 16 session clients, "
          f"1 producer ({options.write_rate} writes/s) and 31 long-polling clients (wait={wait}) at once")
    started = time.monotonic()
    outputs = {}
    procs = [(name, subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
             for name, command in runs]
    for _, proc in procs:
        children.append(proc)
    samples = []
    while time.monotonic() - started < total - 0.5:
        time.sleep(min(options.interval, max(0.1, total - 0.5 - (time.monotonic() - started))))
        t = time.monotonic() - started
        samples.append((t, rss_mb(process.pid), metric(base, "quire_sessions_active"),
                        metric(base, "quire_long_polls_waiting")))
        print(f"  t={t:5.1f} s  RSS {samples[-1][1]:7.1f} MB  sessions {samples[-1][2]:6d}  waiting {samples[-1][3]:4d}"
              f"{'  (warm-up)' if t < options.warm_up else ''}", flush=True)
    for name, proc in procs:
        try:
            outputs[name] = proc.communicate(timeout=total + 60)[0]
        except subprocess.TimeoutExpired:
            proc.kill()
            sys.exit(f"soak: wrk ({name}) did not stop in time")
    if process.poll() is not None:
        sys.exit(f"soak: quire exited during the run (status {process.returncode})")
    print()
    print(f"{'scenario':16} {'requests/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    errors = 0
    lines = []
    for name, _ in runs:
        rps, p50, p99, e, line = parse_scenario(outputs[name])
        errors += e
        lines.append(line)
        print(f"{name:16} {rps:11.0f} {p50:8.3f} {p99:8.3f} {e:7d}")
    for line in lines:
        print(f"  {line}")
    measured = [s for s in samples if s[0] >= options.warm_up]
    if len(measured) < 2:
        sys.exit("soak: too few samples after the warm-up")
    first, last = measured[0][1], measured[-1][1]
    peak = max(s[1] for s in measured)
    growth = last - first
    print(f"soak: RSS after warm-up {first:.1f} MB, at the end {last:.1f} MB (growth {growth:+.1f} MB, "
          f"peak {peak:.1f} MB; limit +{options.max_growth:.0f} MB); errors {errors}")
    print("soak: RSS samples (MB): " + " ".join(f"{s[1]:.1f}" for s in samples))
    problems = []
    if errors:
        problems.append(f"{errors} errors")
    if growth > options.max_growth:
        problems.append(f"resident memory grew by {growth:.1f} MB after the warm-up")
    if problems:
        sys.exit("soak FAILED: " + "; ".join(problems))
    print("soak: passed (zero errors, no resident-memory growth beyond noise after the warm-up)")
