#!/usr/bin/env python3
"""Quire's benchmarks, a family each (the modules of scripts/benchmarks/), the HTTP ones against the C reference
server of bench/mhd-reference.c in the same run.

  scripts/bench.py http [--rounds N] [--seconds S] [--only TEXT] [--cpu-limit CPUS] [--binary PATH]
                                                     requests/s, p50, p99 of the read endpoints vs the reference,
                                                     rounds alternating (the demo page also with the default
                                                     configuration's text access log, JSON lines, an HS256 and an
                                                     ES256 token: against the reference sent the same token, and
                                                     the reference sent none)
  scripts/bench.py sessions [--count N]              resident memory growth for N sessions (50-item windows)
  scripts/bench.py long-polls [--count N] [--rearm-seconds S]
                                                     N concurrent long polls on one list, one write: time to answer
                                                     all (bench/fan-out-client.c); then for S s the N re-armed as
                                                     answered, one write a second (bench/long-poll-client.c):
                                                     answers in time, 503s
  scripts/bench.py load [--rounds N] [--seconds S] [--cpu-limit CPUS]
                                                     the wrk Lua scenarios of bench/ vs the reference: requests/s, p50,
                                                     p99, errors, server CPU per request
  scripts/bench.py soak [--seconds S] [--warm-up W]  pages + sessions + writes + long polls at once; fails on any error
                                                     or on resident-memory growth after the warm-up
  scripts/bench.py window-cost                        what an answer costs at a 100- and a 20,000-item window (extend,
                                                     changes after a 1-item write), over HTTP
  scripts/bench.py fan-out [--count N] [--window W]  N sessions holding W-item windows long-poll one list; one 1-item
                                                     write: time until every one is answered
  scripts/bench.py wire [--rounds N] [--seconds S]   compression: bytes on the wire of a 50-item page and session with
                                                     gzip vs plain; requests/s of the cached page and of session
                                                     creation with Accept-Encoding: gzip vs without (page: both
                                                     against the reference in the same run)
  scripts/bench.py streams [--count N] [--window W] [--idle-seconds S] [--lists L] [--lists-seconds S] [--blocks]
                                                     N sessions holding W-item windows each keep an event stream open
                                                     on one list: resident memory per idle stream beyond the session
                                                     (beside the stack's floor: bench/stream-reference.c, plain C on
                                                     libmicrohttpd), each with its breakdown (pool pages, connection,
                                                     response, own objects, allocator: bench/heap-census.c; --blocks
                                                     lists the blocks), why streams were refused, the server's CPU
                                                     while they sit idle S s with heartbeats, then one 1-item
                                                     write: time until every stream has delivered; then N streams
                                                     over L lists, each list written once a second
                                                     (bench/stream-lists-client.c): events within 1 s, streams that
                                                     missed their list's last write
  scripts/bench.py allocations [--seconds S]         heap allocations per request (bench/malloc-count.c preloaded) of
                                                     the read endpoints, next to the reference's for the same bytes
  scripts/bench.py writes [--rounds N] [--seconds S] [--connections C] [--long-seconds L] [--binary PATH]
                         [--no-postgres | --only-postgres]
                                                     64 producers inserting one item at a time into 1,000 lists (wrk,
                                                     bench/writes.lua): acknowledged writes/s on the in-memory store
                                                     (requests prepared, and built as sent) and on SQLite, beside page
                                                     reads/s of the same server, the disk's one-at-a-time fdatasync
                                                     rate, and a lone producer's latency against one fdatasync, in N
                                                     rounds (each ratio: the median of its rounds, or every round's
                                                     where the target says "each"); the producers on SQLite for L s
                                                     (60), counting requests over 1 s; then on PostgreSQL (its own server,
                                                     scripts/local/pg-local) beside pgbench -N with as many clients,
                                                     once
                                                     (--only-postgres: that row alone)
  scripts/bench.py filters                           filtered sessions: a 1-item write with 1,000 sessions on 1,000
                                                     equality filters vs none; 10,000 long polls over 100
                                                     filters, one write touching all; a session on a new filter of a
                                                     100,000-item list; a filtered answer vs the same unfiltered
  scripts/bench.py working-set [--lists N] [--items I] [--pages P] [--budget BYTES] [--folder DIR]
                                                     N stored lists of I items (quire-bench seed-lists, SQLite): the
                                                     restart to /readyz, resident memory after P first pages of
                                                     random lists, each page's latency (cold, then again warm),
                                                     and the budget's count against the resident memory it grew by
  scripts/bench.py instructions [--seconds S] [--limits]
                                                     instructions per request of the read endpoints under valgrind's
                                                     callgrind, next to the reference's: a figure that does not move
                                                     with the machine's load (requests/s do); --limits: rate limits on
  scripts/bench.py tls [--rounds N] [--seconds S] [--handshake-seconds S] [--binary PATH]
                                                     HTTPS: a keep-alive page over TLS vs plain HTTP (beside nginx
                                                     terminating TLS and bench/tls-reference.c), new TLS connections
                                                     per second (full, resumed), Quire vs nginx
  scripts/bench.py limits [--seconds S] [--rounds N] [--read-seconds S] [--binary PATH]
                                                     rate limits on (writes 100/s, burst 200 per client): 20
                                                     producers at 20 writes/s each, alone then beside one client
                                                     flooding over 64 connections (their refusals, p99 ratio; the
                                                     flood's commits over its allowance, its other answers 429);
                                                     page reads with limits on vs the C reference
  scripts/bench.py cluster [--binary PATH] [--bench-writes N] [--bench-seconds S] [--bench-lists N] [--bench-items N]
                                                     a local cluster of the release build: a write seen on another
                                                     instance, durable writes through nginx, the partition, wrk's
                                                     read mix with 1, 2 and 3 instances (scripts/test/cluster-test
                                                     --bench-only)
  scripts/bench.py sources [--seconds S] [--clients N] [--lists N] [--copy-rows N] [--copy-lists N] ...
                                                     tables of a PostgreSQL on loopback kept as lists by the release
                                                     build: single-row transactions of N SQL clients (applied ÷
                                                     committed, the lag at the end, the WAL the slot retains),
                                                     100-row transactions over 100 lists (rows applied/s), a committed
                                                     row to a waiting long poll (p50/p99), the first copy of a big
                                                     table (time, peak memory), SIGKILL and restart

Every server listens on 127.0.0.1 only, every load run is bounded in time, and the servers are stopped at exit.
streams, long-polls and fan-out connect from several loopback source addresses (127.0.0.2, 127.0.0.3, …: one has
about 28,000 ports toward one server port) and raise the open-file limits to the count (the hard one too as root
with CAP_SYS_RESOURCE, up to fs.nr_open; else they stop saying what to set), so that --count 100000 is asked of the
servers, not of the client.
"""
import argparse

import benchmarks.cluster
import benchmarks.sources
import benchmarks.tls
from benchmarks.allocations import allocations
from benchmarks.cluster import cluster
from benchmarks.common import stop_all
from benchmarks.fan_out import fan_out
from benchmarks.filters import filters
from benchmarks.http import http
from benchmarks.instructions import instructions
from benchmarks.limits import limits
from benchmarks.load import load
from benchmarks.long_polls import long_polls
from benchmarks.sessions import sessions
from benchmarks.soak import soak
from benchmarks.sources import sources
from benchmarks.streams import streams
from benchmarks.tls import tls
from benchmarks.window_cost import window_cost
from benchmarks.wire import wire
from benchmarks.working_set import working_set
from benchmarks.writes import writes

FAMILIES = {"http": http, "sessions": sessions, "long-polls": long_polls, "load": load, "soak": soak,
            "window-cost": window_cost, "fan-out": fan_out, "wire": wire, "streams": streams,
            "allocations": allocations, "instructions": instructions, "working-set": working_set,
            "filters": filters, "writes": writes, "tls": tls, "cluster": cluster, "limits": limits,
            "sources": sources}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    h = commands.add_parser("http")
    h.add_argument("--rounds", type=int, default=5)
    h.add_argument("--seconds", type=int, default=4)
    h.add_argument("--only", help="run the endpoints whose name contains this text (e.g. demo)")
    h.add_argument("--cpu-limit", type=float, help="give the servers this many CPUs' time (a slower machine)")
    h.add_argument("--binary", help="the quire to run, relative paths from the repository (default: the release "
                   "build, made first)")
    s = commands.add_parser("sessions")
    s.add_argument("--count", type=int, default=100_000)
    l = commands.add_parser("long-polls")
    l.add_argument("--count", type=int, default=5_000)
    l.add_argument("--rearm-seconds", type=int, default=30,
                   help="then every poll re-armed as answered while the list is written once a second (0: not)")
    ld = commands.add_parser("load")
    ld.add_argument("--rounds", type=int, default=3)
    ld.add_argument("--seconds", type=int, default=5)
    ld.add_argument("--connections", type=int, default=64)
    ld.add_argument("--write-rate", type=int, default=20, help="writes per second in write-and-poll")
    ld.add_argument("--cpu-limit", type=float, help="give the servers this many CPUs' time (a slower machine)")
    sk = commands.add_parser("soak")
    sk.add_argument("--seconds", type=int, default=60, help="measured seconds, after the warm-up")
    sk.add_argument("--warm-up", type=int, default=15)
    sk.add_argument("--interval", type=float, default=5.0, help="seconds between RSS samples")
    sk.add_argument("--write-rate", type=int, default=20)
    sk.add_argument("--max-growth", type=float, default=10.0, help="MB of RSS growth allowed after the warm-up")
    commands.add_parser("window-cost")
    w = commands.add_parser("wire")
    w.add_argument("--rounds", type=int, default=3)
    w.add_argument("--seconds", type=int, default=4)
    f = commands.add_parser("fan-out")
    f.add_argument("--count", type=int, default=10_000)
    f.add_argument("--window", type=int, default=2_000)
    st = commands.add_parser("streams")
    st.add_argument("--count", type=int, default=10_000)
    st.add_argument("--window", type=int, default=2_000)
    st.add_argument("--lists", type=int, default=1_000,
                    help="then as many streams over this many lists, each written once a second (0: not)")
    st.add_argument("--lists-seconds", type=int, default=30)
    st.add_argument("--idle-seconds", type=int, default=30,
                    help="seconds the streams sit idle (heartbeats sent) while the server's CPU is measured")
    st.add_argument("--blocks", action="store_true",
                    help="list the heap blocks an idle stream holds, by part and size (asked/given)")
    a = commands.add_parser("allocations")
    a.add_argument("--seconds", type=int, default=3)
    ins = commands.add_parser("instructions")
    ins.add_argument("--seconds", type=int, default=6)
    ins.add_argument("--limits", action="store_true", help="rate limits on (reads so high that none is refused)")
    commands.add_parser("filters")
    wr = commands.add_parser("writes")
    wr.add_argument("--rounds", type=int, default=3)
    wr.add_argument("--seconds", type=int, default=8)
    wr.add_argument("--connections", type=int, default=64)
    wr.add_argument("--binary", help="the quire to run, relative paths from the repository (default: the release "
                    "build, made first)")
    wr.add_argument("--long-seconds", type=int, default=60,
                    help="the producers' run on SQLite whose slowest requests are counted (0: none)")
    only = wr.add_mutually_exclusive_group()
    only.add_argument("--no-postgres", action="store_true", help="leave out the PostgreSQL row (and pgbench)")
    only.add_argument("--only-postgres", action="store_true",
                      help="the PostgreSQL row alone (no in-memory or SQLite run)")
    ws = commands.add_parser("working-set")
    ws.add_argument("--lists", type=int, default=100_000)
    ws.add_argument("--items", type=int, default=100)
    ws.add_argument("--pages", type=int, default=1_000)
    ws.add_argument("--budget", type=int, default=512 << 20, help="lists.memoryBytes")
    ws.add_argument("--folder", help="where the data set's file is kept (and reused by later runs)")
    raw = argparse.RawDescriptionHelpFormatter
    tl = commands.add_parser("tls", description=benchmarks.tls.__doc__, formatter_class=raw)
    tl.add_argument("--rounds", type=int, default=3)
    tl.add_argument("--seconds", type=int, default=5)
    tl.add_argument("--handshake-seconds", type=int, default=4)
    tl.add_argument("--binary", default=None)
    lm = commands.add_parser("limits")
    lm.add_argument("--seconds", type=int, default=10, help="seconds of the producers alone, then of the flood")
    lm.add_argument("--rounds", type=int, default=3, help="rounds of page reads against the reference")
    lm.add_argument("--read-seconds", type=int, default=4)
    lm.add_argument("--binary", help="the quire to run, relative paths from the repository (default: the release "
                    "build, made first)")
    cl = commands.add_parser("cluster", description=benchmarks.cluster.__doc__, formatter_class=raw)
    cl.add_argument("--binary", default=".build/release/quire", help="relative paths start at the repository")
    cl.add_argument("--bench-writes", type=int, help="writes seen on another instance (default 200)")
    cl.add_argument("--bench-seconds", type=float, help="seconds of each throughput and read-mix run (default 5)")
    cl.add_argument("--bench-lists", type=int, help="lists of the partition's figures (default 20,000)")
    cl.add_argument("--bench-items", type=int, help="items of each of those lists (default 60)")
    cl.add_argument("--deadline", type=float, help="seconds after which a watchdog stops everything")
    cl.add_argument("--keep", action="store_true", help="leave the cluster running at the end")
    so = commands.add_parser("sources", description=benchmarks.sources.__doc__, formatter_class=raw)
    so.add_argument("--binary", default=".build/release/quire",
                    help="relative paths start at the repository; empty: build it (swift build -c release)")
    so.add_argument("--seconds", type=int, default=30, help="the single-row load's length")
    so.add_argument("--clients", type=int, default=16, help="SQL clients of the single-row load")
    so.add_argument("--lists", type=int, default=10_000, help="lists of the single-row load")
    so.add_argument("--rows-per-list", type=int, default=10, help="rows of each of those lists at the start")
    so.add_argument("--batch-seconds", type=int, default=15, help="the 100-row transactions' load's length")
    so.add_argument("--batch-clients", type=int, default=4)
    so.add_argument("--batch-rows-per-list", type=int, default=100, help="rows of each of the 100 lists")
    so.add_argument("--latency-seconds", type=int, default=20, help="the long polls' run")
    so.add_argument("--latency-rate", type=int, default=20, help="rows committed per second during it")
    so.add_argument("--copy-rows", type=int, default=1_000_000, help="rows of the table copied at the start")
    so.add_argument("--copy-lists", type=int, default=10_000, help="lists they fill")
    options = parser.parse_args()
    try:
        FAMILIES[options.command](options)
    finally:
        stop_all()


if __name__ == "__main__":
    main()
