"""`bench.py load`: the wrk Lua scenarios of bench/ against Quire and, in the same run, against the
reference serving comparable bytes: requests/s, p50, p99, errors and the server's CPU per request."""
import json, re, shutil, statistics, sys

from .common import compile_reference, cpu_limit, cpu_per_request, request, scenario, start_quire, start_reference


def load(options):
    """Each bench/*.lua scenario against quire and, in the same run, against the reference serving comparable bytes."""
    if not shutil.which("wrk"):
        sys.exit("wrk is missing: make deps-bench")
    limit = cpu_limit(options)
    reference_binary = compile_reference()
    server, base = start_quire()
    if limit:
        limit.add(server)
    # the bytes the reference answers with: what quire answers for the scenario's typical request
    _, first_page = request("GET", base + "/v1/lists/demo?limit=20")
    _, created = request("POST", base + "/v1/lists/demo/sessions", {"limit": 20})
    created = json.loads(created)
    _, extended = request("GET", base + f"/v1/sessions/{created['session']}/changes?since={created['version']}"
                                         "&extend=next&limit=20")
    request("DELETE", base + f"/v1/sessions/{created['session']}")
    seconds, c = options.seconds, options.connections
    wait = 10
    scenarios = [
        # name, script, wrk args, reference body (None: no comparable reference), wrk --timeout
        ("walk-pages (20-item pages)", "walk-pages.lua", ["demo", 20], first_page, None),
        ("sessions (create, 4 extends, 4 polls, delete)", "sessions.lua", ["demo", 20, 4, 4], extended, None),
        (f"write-and-poll ({options.write_rate} writes/s, wait={wait})", "write-and-poll.lua",
         ["demo", options.write_rate, wait, 20], None, wait + 30),
    ]
    print(f"{'scenario':48} {'server':10} {'requests/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    summary = []
    for name, script, args, body, timeout in scenarios:
        reference = ref_base = None
        if body is not None:
            reference, ref_base = start_reference(reference_binary, body)
            if limit:
                limit.add(reference)
        scenario(base, 1, script, args, connections=c, timeout=timeout)  # warm-up
        rows = {"reference": [], "quire": []}
        cpu = {"reference": [], "quire": []}  # server CPU time per request, microseconds
        notes = []
        for _ in range(options.rounds):
            runs = [("reference", ref_base, reference), ("quire", base, server)] if ref_base \
                else [("quire", base, server)]
            for label, url, process in runs:
                row, per_request = cpu_per_request(
                    process, seconds, lambda: scenario(url, seconds, script, args, connections=c, timeout=timeout))
                rows[label].append(row)
                cpu[label].append(per_request)
                print(f"{name:48} {label:10} {row[0]:11.0f} {row[1]:8.3f} {row[2]:8.3f} {row[3]:7d}"
                      f"  server CPU {per_request:6.2f} us/request")
                if label == "quire":
                    notes.append(row[4])
        if reference:
            reference.terminate()
            reference.wait()
        summary.append((name, rows, notes, cpu))
    print()
    print("| scenario | server | requests/s (median) | p50 ms | p99 ms | errors (all rounds) | ratio to the reference "
          "| server CPU per request (median) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    failed = False
    for name, rows, notes, cpu in summary:
        ratios = [q[0] / r[0] for q, r in zip(rows["quire"], rows["reference"])]
        for label in ("reference", "quire"):
            runs = rows[label]
            if not runs:
                print(f"| {name} | {label} | — (it cannot hold a long poll) | | | | | |")
                continue
            errors = sum(r[3] for r in runs)
            failed |= label == "quire" and errors > 0
            ratio = f"{statistics.median(ratios):.2f}x (rounds {', '.join(f'{x:.2f}' for x in ratios)})" \
                if label == "quire" and ratios else ""
            lags = [re.search(r"wake-lag-ms p50=([\d.]+) p99=([\d.]+)", n) for n in notes]
            if label == "quire" and all(lags):
                ratio = (f"wake-up lag (write sent to poll answered): p50 "
                         f"{statistics.median(float(m.group(1)) for m in lags):.1f} ms, p99 "
                         f"{statistics.median(float(m.group(2)) for m in lags):.1f} ms")
            # Beside the median, the ratio of the reference's to Quire's (per round, then the median): how much more
            # of the server's own CPU a request costs, apart from wrk's share of the same cores.
            spent = f"{statistics.median(cpu[label]):.2f} us"
            if label == "quire" and cpu["reference"]:
                relative = statistics.median(r / q for r, q in zip(cpu["reference"], cpu["quire"]))
                spent += f" (reference / quire: {relative:.2f}x)"
            print(f"| {name} | {label} | {statistics.median(r[0] for r in runs):.0f} | "
                  f"{statistics.median(r[1] for r in runs):.2f} | {statistics.median(r[2] for r in runs):.2f} | "
                  f"{errors} | {ratio} | {spent} |")
    print()
    for name, rows, notes, _ in summary:
        print(f"{name}, last quire round: {notes[-1]}")
    if failed:
        sys.exit("load: quire answered with errors (see the table)")
