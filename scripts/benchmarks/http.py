"""`bench.py http`: requests/s, p50 and p99 of the read endpoints against the C reference serving the same
bytes, rounds alternating; the demo page also with the default configuration's access log, JSON lines, an
HS256 and an ES256 token."""
import base64, json, os, re, shutil, statistics, subprocess, sys, tempfile, time

from .common import (children, compile_reference, cpu_limit, cpu_per_request, free_port, quire_binary, request,
    start, start_quire, wrk)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def es256_setup(directory):
    """An ES256 key made with openssl, its JWKS file, and a token for `read:demo` signed with it: returns
    (jwks path, token). The signature is openssl's DER (r, s) turned into the 64 bytes JWS wants."""
    key = os.path.join(directory, "es256.pem")
    subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key], check=True)
    text = subprocess.run(["openssl", "ec", "-in", key, "-text", "-noout"], capture_output=True, text=True,
                          check=True).stdout
    pub = bytes.fromhex(re.search(r"pub:\s*([0-9a-f:\s]+?)\s*ASN1", text, re.S).group(1).replace(":", "")
                        .replace(" ", "").replace("\n", ""))
    jwks = os.path.join(directory, "jwks.json")
    with open(jwks, "w") as f:
        json.dump({"keys": [{"kty": "EC", "crv": "P-256", "alg": "ES256", "kid": "bench",
                             "x": b64url(pub[1:33]), "y": b64url(pub[33:65])}]}, f)
    header = b64url(json.dumps({"alg": "ES256", "kid": "bench", "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"sub": "bench", "scope": "read:demo", "exp": int(time.time()) + 3600}).encode())
    der = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key], input=f"{header}.{payload}".encode(),
                         capture_output=True, check=True).stdout
    # SEQUENCE { INTEGER r, INTEGER s }
    offset = 2 if der[1] < 0x80 else 3
    integers = []
    for _ in range(2):
        length = der[offset + 1]
        integers.append(int.from_bytes(der[offset + 2:offset + 2 + length], "big"))
        offset += 2 + length
    signature = b"".join(n.to_bytes(32, "big") for n in integers)
    return jwks, f"{header}.{payload}.{b64url(signature)}"


def http(options):
    if not shutil.which("wrk"):
        sys.exit("wrk is missing: make deps-bench")
    limit = cpu_limit(options)
    reference_binary = compile_reference()
    binary = quire_binary(options)
    server, base = start_quire(binary=binary)
    # The default configuration (the access log on: a text line per request, to /dev/null), and the same
    # with JSON lines.
    default_server, default = start_quire({"QUIRE_LOG_LEVEL": "info"}, binary)
    logged_server, logged = start_quire({"QUIRE_LOG_LEVEL": "info", "QUIRE_LOG_FORMAT": "json"}, binary)
    # The same server with JSON Web Tokens on: an HS256 token from `quire token`, an ES256 one made here.
    secret = "bench-secret-" + "x" * 32
    jwks, es256 = es256_setup(tempfile.mkdtemp(prefix="quire-jwt-"))
    tokened_server, tokened = start_quire({"QUIRE_AUTH_JWT_SECRET": secret, "QUIRE_AUTH_JWT_JWKS_FILE": jwks}, binary)
    servers = {base: server, default: default_server, logged: logged_server, tokened: tokened_server}
    if limit:
        for process in list(children):
            limit.add(process)
    hs256 = subprocess.run([binary, "token", "--sub", "bench", "--scope", "read:demo", "--ttl", "1h"],
                           env=dict(os.environ, QUIRE_AUTH_JWT_SECRET=secret), capture_output=True, text=True,
                           check=True).stdout.strip()
    status, body = request("POST", base + "/v1/lists/demo/sessions", {"limit": 20})
    session = json.loads(body)
    endpoints = [
        ("GET /healthz", "/healthz", 0.95, False),
        ("GET /v1/lists/demo?limit=20", "/v1/lists/demo?limit=20", 0.9, False),
        ("GET changes (nothing new)", f"/v1/sessions/{session['session']}/changes?since={session['version']}", 0.85,
         False),
        ("GET demo page, default config (text log)", default + "/v1/lists/demo?limit=20", 0.8, False),
        ("GET demo page, JSON access log", logged + "/v1/lists/demo?limit=20", 0.75, False),
        ("GET /v1/lists/demo?limit=20 HS256", (tokened + "/v1/lists/demo?limit=20", hs256), 0.8, False),
        ("GET /v1/lists/demo?limit=20 ES256", (tokened + "/v1/lists/demo?limit=20", es256), None, False),
        ("GET /healthz, new connections", "/healthz", 0.8, True),
    ]
    print(f"{'endpoint':40} {'server':10} {'requests/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    results = []
    for name, path, target, close in endpoints:
        if options.only and options.only not in name:
            continue
        path, token = path if isinstance(path, tuple) else (path, None)
        url = path if path.startswith("http") else base + path
        status, expected = request("GET", url, token=token)
        if status != 200:
            sys.exit(f"{name}: {status} {expected[:300]!r}")
        body_file = os.path.join(tempfile.mkdtemp(), "body")
        with open(body_file, "wb") as f:
            f.write(expected)
        port = free_port()
        reference = start([reference_binary, str(port), body_file])
        if limit:
            limit.add(reference)
        time.sleep(0.3)
        wrk(url, 1, token=token)  # warm-up, both
        wrk(f"http://127.0.0.1:{port}/", 1, token=token)
        quire_server = next(process for prefix, process in servers.items() if url.startswith(prefix + "/"))
        ratios = []
        cpu_ratios = []
        # A token's request carries a few hundred bytes of `Authorization` field that libmicrohttpd's parser reads
        # before Quire sees the request: the stack's cost, which the reference pays too when it is sent the same
        # field. Its target is judged against that reference; the ratio against the reference sent no field is
        # printed beside it.
        bare_ratios = []
        for round in range(options.rounds):
            def measure_reference():
                return cpu_per_request(
                    reference, options.seconds,
                    lambda: wrk(f"http://127.0.0.1:{port}/", options.seconds, close=close, token=token))

            def measure_quire():
                return cpu_per_request(
                    quire_server, options.seconds, lambda: wrk(url, options.seconds, close=close, token=token))

            # Which server goes first alternates from round to round: the one measured right after the other
            # inherits its TIME_WAIT sockets and the kernel's state, which favours neither side then.
            if round % 2 == 0:
                (ref, ref_cpu), (quire, quire_cpu) = measure_reference(), measure_quire()
            else:
                (quire, quire_cpu), (ref, ref_cpu) = measure_quire(), measure_reference()
            ratios.append(quire[0] / ref[0])
            cpu_ratios.append(ref_cpu / quire_cpu)
            rows = [("reference" if token is None else "ref+token", ref), ("quire", quire)]
            if token is not None:
                bare = wrk(f"http://127.0.0.1:{port}/", options.seconds, close=close)
                bare_ratios.append(quire[0] / bare[0])
                rows.append(("reference", bare))
            for label, (rps, p50, p99, errors) in rows:
                print(f"{name:40} {label:10} {rps:11.0f} {p50:8.3f} {p99:8.3f} {errors:7d}")
        reference.terminate()
        reference.wait()
        median = statistics.median(ratios)
        results.append((name + (", reference sent the same token" if token else ""), median, target, ratios,
                        statistics.median(cpu_ratios)))
        if token is not None:
            results.append((name + ", reference sent no token", statistics.median(bare_ratios), None, bare_ratios,
                            None))
    print()
    # The second ratio is the reference's server CPU time per request over Quire's (median of the rounds): the
    # share of the gap that is the server's own work, which wrk's and the kernel's noise moves less.
    print("| endpoint | median ratio to the reference | rounds | target | server CPU per request, reference / quire |")
    print("| --- | --- | --- | --- | --- |")
    for name, median, target, ratios, cpu_ratio in results:
        verdict = "—" if target is None else f">= {target}x: {'met' if median >= target else '**not met**'}"
        cpu = "" if cpu_ratio is None else f"{cpu_ratio:.2f}x"
        print(f"| {name} | {median:.2f}x | {', '.join(f'{r:.2f}' for r in ratios)} | {verdict} | {cpu} |")
