# Quire: `make run` serves on 127.0.0.1:8080 with the embedded defaults; `make test` runs every test.
# Each installs the missing Debian packages it needs first (scripts/local/install-deps): `make run` only what the
# server is built from and links, `make test` what every test runs too.

SWIFT ?= swift
RUN_ARGS ?=
## Seconds each fuzz target runs: in `make test` (the seed corpora replayed, then a short search) and
## in `make fuzz`.
FUZZ_TEST_SECONDS ?= 5
FUZZ_SECONDS ?= 300

.PHONY: all deps deps-server deps-bench build build-release build-run run check-run cluster cluster-down demo-sources test docs spec-test readme-test wire-test streams-test monitoring-test scrape-test client-test browser-test cors-browser-test tls-test cluster-test check-dockerfile check-format check-house format fuzz bench bench-http bench-sessions bench-long-polls bench-fan-out bench-streams bench-window-cost bench-wire bench-load bench-soak bench-core bench-store bench-working-set bench-filters bench-writes bench-tls bench-allocations bench-instructions bench-cluster bench-sources bench-limits clean

all: build

deps:
	@scripts/local/install-deps

## Only what the server is built from and links (libmicrohttpd, GnuTLS, SQLite, zlib, pkg-config): what `make run`
## installs on a fresh machine.
deps-server:
	@scripts/local/install-deps server

deps-bench:
	@scripts/local/install-deps bench

build: deps
	$(SWIFT) build

## The server as it is deployed and benchmarked: release, the Swift runtime linked statically (as the Dockerfile
## builds it); what the benchmarks and the local cluster run.
build-release: deps
	$(SWIFT) build -c release --product quire --static-swift-stdlib

## The server for `make run`: release, in a build directory of its own (.build-run) with only what the server is
## made of (QUIRE_SERVER_ONLY: no OpenAPI generator for the SDK's plugin, no test-only packages), without the
## PostgreSQL trait and debug information, the Swift runtime linked dynamically from the toolchain: what a first
## `make run` need not wait for (docs/performance.md, "The first make run").
build-run: deps-server
	@scripts/local/build-run "$(SWIFT)"

## `make run` as a newcomer runs it, end to end (its build, the demo served, Ctrl-C): CI runs it after `make test`.
check-run: deps-server
	scripts/test/check-run

## Build in release mode and start the service on its embedded defaults (Ctrl-C stops it gracefully).
## Lists are kept in data/quire.sqlite (storage.path), so they survive a restart. The demo list changes by itself
## (demo.live; DEMO_LIVE=false to keep it still): open http://127.0.0.1:8080/demo to watch it.
DEMO_LIVE ?= true
run: build-run
	QUIRE_DEMO_LIVE=$${QUIRE_DEMO_LIVE:-$(DEMO_LIVE)} .build-run/release/quire serve $(RUN_ARGS)

## A local cluster on loopback (docs/cluster.md): PostgreSQL, three instances tagged q1 q2 q3 on it (release build)
## and nginx in front (deploy/nginx/quire-cluster.conf: partitioned by list), all under .build/cluster; prints the
## URL, the PIDs and where the write token is. Run again to start what has stopped; `scripts/local/cluster status`
## shows what runs, `scripts/local/cluster add` and `scripts/local/cluster remove qN` change the members.
cluster: build-release
	QUIRE_BINARY=.build/release/quire scripts/local/cluster up

## Stops the local cluster (its data stays in .build/cluster).
cluster-down:
	scripts/local/cluster down

## A table of a local PostgreSQL (wal_level logical) kept as live lists (docs/sources.md): table messages, Quire on
## 127.0.0.1:8080 with a source on it (release build) and a writer changing rows every second; open
## http://127.0.0.1:8080/demo?list=inbox-ann to watch. Ctrl-C stops everything; the data stays in .build/demo-sources.
demo-sources: build-release
	QUIRE_BINARY=.build/release/quire scripts/local/demo-sources $(RUN_ARGS)

## Every test: the format and the house rules, unit, property and loopback-HTTP tests, the documentation, then in
## two lanes at once (scripts/test/test-all) schemathesis, the README's curl tour, the wire checks, the alert rules
## and the dashboard (scripts/test/check-monitoring), Prometheus scraping a server on 0.0.0.0, the generated Swift and
## Python clients against a live server, the demo page and CORS in a headless browser, TLS and the cluster, beside
## the fuzz targets (seed corpora replayed under ASan, then 5 s each). The Dockerfile check (`make check-dockerfile`,
## a build from scratch) runs in CI after it (.ci/run).
test: deps
	SWIFT=$(SWIFT) FUZZ_TEST_SECONDS=$(FUZZ_TEST_SECONDS) scripts/test/test-all

## The documentation, into .build/docs (scripts/test/docs): the Swift SDK's DocC archive (QuireClient.doccarchive, its
## symbols and the articles of Sources/QuireClient/QuireClient.docc) and the HTTP API reference rendered from
## openapi.yaml by MkDocs and neoteroi-mkdocs (api/index.html, static HTML). Fails on any warning of either tool and
## on a public symbol of QuireClient without a documentation comment; `make test` runs it too.
docs: deps
	SWIFT=$(SWIFT) scripts/test/docs

## schemathesis against a live server with openapi.yaml: no 5xx, no response that breaks the spec.
spec-test: deps
	$(SWIFT) build --product quire
	scripts/test/spec-test

## The README's curl tour, run as written against a live server: every command succeeds and prints what the README
## shows under it.
readme-test: deps
	$(SWIFT) build --product quire
	scripts/test/readme-test

## Compression, cache policy and metrics as REDbot and promtool see them, against a live server.
wire-test: deps
	$(SWIFT) build --product quire
	scripts/test/wire-test

## 3,000 event streams from two loopback source addresses, each delivered a write, and the open-file limit told at
## start (scripts/test/streams-test).
streams-test: deps
	$(SWIFT) build --product quire
	scripts/test/streams-test "$$($(SWIFT) build --show-bin-path)/quire"

## The alert and recording rules (deploy/prometheus: promtool check and test rules) and the Grafana dashboard
## (deploy/grafana/quire.json: every query parses), each naming only metrics a live quire exports.
monitoring-test: deps
	$(SWIFT) build --product quire
	QUIRE_BINARY=$$($(SWIFT) build --show-bin-path)/quire scripts/test/check-monitoring

## The clients swift-openapi-generator and openapi-python-client make from openapi.yaml: no generator warning,
## and a session loop through each against a live server, every answer typed and encoded back to its JSON.
client-test: deps
	$(SWIFT) build --product quire
	$(SWIFT) build --product GeneratedClientLoop
	scripts/test/client-test

## Prometheus on deploy/prometheus/prometheus.yml scraping a live quire bound to 0.0.0.0: with the metrics token, on
## the metrics listener, and refused with a wrong token.
scrape-test: deps
	$(SWIFT) build --product quire
	scripts/test/scrape-test

## CORS in headless Chromium: quire.js on a page of another loopback origin, allowed and refused.
cors-browser-test: deps
	$(SWIFT) build --product quire
	scripts/test/cors-browser-test

## The web client and the demo page in headless Chromium (Debian's chromium and chromedriver, Selenium from PyPI
## into .build/browser-venv): the DOM equals the session's window through 200 random writes, a restart, HTML as text.
browser-test: deps
	$(SWIFT) build --product quire
	scripts/test/browser-test

## Coverage-guided fuzzing (libFuzzer + AddressSanitizer) of every parser fed by the network, each target for
## FUZZ_SECONDS; a crash fails with its input saved under .build/fuzz/artifacts.
fuzz: deps
	scripts/test/fuzz --release --seconds $(FUZZ_SECONDS)

## HTTPS end to end: testssl.sh against quire's TLS; deploy/nginx passes nginx -t and serves HTTP/2.
tls-test: deps
	$(SWIFT) build --product quire
	scripts/test/tls-test

## The cluster with the real PostgreSQL, nginx and quire (debug) on loopback (scripts/test/cluster-test, a module
## per scenario in scripts/test/cluster/): a write on one instance wakes a long poll and a stream on another; 2,000
## concurrent writes on two instances are all there, gapless; each list is held by its home on nginx's ring only; a
## SIGKILLed instance under load costs its clients one resync and no acknowledged write, its lists move to the next
## instance on the ring; a 9 s PostgreSQL outage refuses writes with 503, reads go on, everything catches up; an
## instance added and one removed under load move only their lists and resync only the removed one's sessions; a
## short benchmark.
cluster-test: deps
	$(SWIFT) build --product quire
	scripts/test/cluster-test

## The Dockerfile's runtime stage has every shared library the binary links, as the build stage builds it (release,
## static Swift runtime): CI runs it after `make test`.
check-dockerfile: deps
	scripts/test/check-dockerfile

check-format:
	scripts/test/check-format

## The house rules of Sources/: no Swift file over 600 lines, no function over 100, no comment citing a run, a date, a
## commit, an issue, a ratio or a profiler's session. `make test` runs it beside the format check.
check-house:
	scripts/test/check-house

format:
	$(SWIFT) format -i -r Sources Tests Package.swift Examples/GeneratedClient/Package.swift Examples/GeneratedClient/Sources

## Benchmarks: HTTP against bench/mhd-reference.c (a C server on libmicrohttpd) in the same run, memory, long
## polls, the wrk Lua scenarios of bench/ (against the reference too), a 60-second mixed soak, the core, the store
## (durable writes and start-up), TLS and the local cluster: each a family of scripts/bench.py (scripts/benchmarks/).
bench: bench-http bench-allocations bench-instructions bench-sessions bench-long-polls bench-fan-out bench-streams bench-window-cost bench-wire bench-load bench-soak bench-core bench-store bench-working-set bench-filters bench-writes bench-tls bench-limits bench-cluster bench-sources

bench-http: deps-bench
	scripts/bench.py http --rounds 5 --seconds 5

## Heap allocations per request (a malloc interposer preloaded), next to the reference's.
bench-allocations: deps-bench
	scripts/bench.py allocations --seconds 3

## Instructions per request (valgrind's callgrind) of the read endpoints, next to the reference's: steady where
## requests/s move with the machine's load.
bench-instructions: deps-bench
	scripts/bench.py instructions --seconds 6

bench-sessions: deps
	scripts/bench.py sessions --count 100000

bench-long-polls: deps
	scripts/bench.py long-polls --count 5000

bench-load: deps-bench
	scripts/bench.py load --rounds 3 --seconds 5

bench-soak: deps-bench
	scripts/bench.py soak --seconds 60 --warm-up 15

bench-core: deps
	$(SWIFT) run -c release quire-bench diff
	$(SWIFT) run -c release quire-bench sessions

## 10,000 sessions holding 2,000-item windows long-poll one list; one write: time until all are answered.
bench-fan-out: deps
	scripts/bench.py fan-out --count 10000 --window 2000

## 10,000 event streams (2,000-item windows) on one list: memory per idle stream, one write delivered to all.
bench-streams: deps
	scripts/bench.py streams --count 10000 --window 2000

## What an answer costs at a 100- and at a 20,000-item window, over HTTP.
bench-window-cost: deps
	scripts/bench.py window-cost

## Compression: bytes on the wire of a 50-item page and session (gzip vs plain); requests/s of the cached page
## (gzip vs plain, against the C reference in the same run) and of session creation (gzip vs plain).
bench-wire: deps-bench
	scripts/bench.py wire --rounds 5 --seconds 4

## Durable writes (p50/p99 of a 10-op batch and of a 1% PUT on 10,000 items) and start-up with 1,000,000 items.
## Lists beyond memory: 100,000 stored lists of 100 items, a restart and 1,000 first pages of random lists.
bench-working-set: deps-bench
	scripts/bench.py working-set --folder .build/working-set

## Writes at the disk's speed: 64 producers on the in-memory store and on SQLite, beside fdatasync and page reads.
bench-writes: deps-bench
	scripts/bench.py writes

## Filtered sessions: views' cost to a write, a fan-out over filters, a first build, a filtered answer.
bench-filters: deps-bench
	scripts/bench.py filters

bench-store: deps
	$(SWIFT) run -c release quire-bench store

## HTTPS: keep-alive pages over TLS vs plain HTTP; new TLS connections/s (full, resumed), Quire vs nginx.
bench-tls: deps-bench
	scripts/bench.py tls --rounds 3 --seconds 5

## Rate limits on (writes 100/s, burst 200 per client): 20 producers at 20 writes/s beside one flooding over 64
## connections (their refusals and p99, the flood's commits over its allowance); page reads vs the C reference.
bench-limits: deps-bench
	scripts/bench.py limits

## The local cluster (release build): a write on q1 seen by a long poll on q2, p50/p99 over 200 writes (targets 10 and
## 50 ms); durable writes/s through nginx on one list and on 100 lists, next to one SQLite instance; the partition
## (20,000 lists: the busiest instance's share <= 45% and memory <= 0.5 of one instance holding all; a 4th instance
## added and the busiest SIGKILLed under load: <= 30% of the lists move, no acknowledged write lost, no read failed);
## wrk's read mix through nginx with 1, 2 and 3 instances, with the CPU per request of the instances and of nginx.
bench-cluster: deps-bench build-release
	scripts/bench.py cluster

## Sources (release build, PostgreSQL on loopback): 16 SQL clients' single-row transactions over 10,000 lists for 30 s
## (applied ÷ committed, lag, the slot's retained WAL), 100-row transactions (rows applied/s), a committed row to a
## waiting long poll (p50/p99), the first copy of 1,000,000 rows (time, memory), SIGKILL and restart.
bench-sources: deps-bench build-release
	scripts/bench.py sources

clean:
	rm -rf .build .build-*
