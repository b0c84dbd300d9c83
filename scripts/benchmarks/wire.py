"""`bench.py wire`: compression, the bytes on the wire of a page and a session with gzip and without,
and requests/s of the cached page and of session creation with Accept-Encoding: gzip and without."""
import json, os, shutil, statistics, sys, tempfile
import urllib.request

from .common import compile_reference, request, start_quire, start_reference, wrk


def wire_bytes(base, path, method="GET", body=None, gzip=False):
    """The body bytes on the wire of one request, and its Content-Encoding."""
    headers = {"Accept-Encoding": "gzip"} if gzip else {"Accept-Encoding": "identity"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=60) as response:
        return len(response.read()), response.headers.get("Content-Encoding")


def wire(options):
    if not shutil.which("wrk"):
        sys.exit("wrk is missing: make deps-bench")
    reference_binary = compile_reference()
    quire, base = start_quire()
    page = "/v1/lists/demo?limit=50"
    print("| figure | plain | gzip | ratio | target |")
    print("| --- | --- | --- | --- | --- |")
    for name, path, method, body in (("50-item page", page, "GET", None),
                                      ("50-item session creation", "/v1/lists/demo/sessions", "POST", {"limit": 50})):
        plain, _ = wire_bytes(base, path, method, body)
        zipped, encoding = wire_bytes(base, path, method, body, gzip=True)
        ratio = zipped / plain
        verdict = "meets" if ratio <= 0.2 and encoding == "gzip" else "MISSES"
        print(f"| bytes on the wire, {name} | {plain} | {zipped} ({encoding}) | {ratio:.1%} | <= 20% ({verdict}) |")
    status, expected = request("GET", base + page)
    reference, reference_base = start_reference(reference_binary, expected)
    session_script = os.path.join(tempfile.mkdtemp(prefix="quire-wire-"), "create.lua")
    with open(session_script, "w") as f:
        f.write('wrk.method = "POST"\nwrk.body = \'{"limit":50}\'\nwrk.headers["Content-Type"] = "application/json"\n')
    gzip = ("Accept-Encoding: gzip",)
    wrk(base + page, 1, extra=gzip)  # warm-up: the page and its gzip variant are cached
    page_ratios, create_ratios = [], []
    print()
    print(f"{'run':44} {'requests/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    sessions = base + "/v1/lists/demo/sessions"
    for round in range(options.rounds):
        # Plain and gzip take turns at going first, so that neither always runs on a warmer (or more loaded)
        # machine; the ratios are of runs of the same round.
        order = (False, True) if round % 2 == 0 else (True, False)
        ref = wrk(reference_base + "/", options.seconds)
        page_runs = {zip_it: wrk(base + page, options.seconds, extra=gzip if zip_it else ()) for zip_it in order}
        create_runs = {zip_it: wrk(sessions, options.seconds, script=session_script, extra=gzip if zip_it else ())
                       for zip_it in order}
        if quire.poll() is not None:
            sys.exit(f"quire exited with {quire.returncode} during round {round + 1}")
        plain, zipped = page_runs[False], page_runs[True]
        create_plain, create_zipped = create_runs[False], create_runs[True]
        print(f"round {round + 1}")
        for label, (rps, p50, p99, errors) in (("  reference (C, plain page)", ref),
                                               (f"  cached page, plain ({plain[0] / ref[0]:.2f}x reference)", plain),
                                               (f"  cached page, gzip ({zipped[0] / ref[0]:.2f}x reference)", zipped),
                                               ("  session creation, plain", create_plain),
                                               ("  session creation, gzip", create_zipped)):
            print(f"{label:44} {rps:11.0f} {p50:8.3f} {p99:8.3f} {errors:7d}")
        page_ratios.append((zipped[0] / ref[0]) / (plain[0] / ref[0]))
        create_ratios.append(create_zipped[0] / create_plain[0])
    reference.terminate()
    reference.wait()
    page_median, create_median = statistics.median(page_ratios), statistics.median(create_ratios)
    print()
    print(f"cached page with gzip: median {page_median:.2f}x the plain page (each against the reference in the same "
          f"round) ({'meets' if page_median >= 0.95 else 'BELOW'} the 0.95x target)")
    print(f"session creation (limit=50) with gzip: median {create_median:.2f}x without "
          f"({'meets' if create_median >= 0.8 else 'BELOW'} the 0.8x target)")
