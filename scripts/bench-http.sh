#!/usr/bin/env bash
# Measures an endpoint of a running-on-demand `quire serve` against ../shared/bench/mhd-reference.c
# serving the same bytes, alternating the two in one run, and prints requests/s, p50, p99 and the ratio.
#
#   scripts/bench-http.sh [PATH] [ROUNDS] [SECONDS]      (default: /healthz 3 5)
#
# Load goes to 127.0.0.1 only and every wrk run is bounded by SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."

path="${1:-/healthz}"
rounds="${2:-3}"
seconds="${3:-5}"
connections="${BENCH_CONNECTIONS:-64}"
quire_port="${BENCH_QUIRE_PORT:-18181}"
reference_port="${BENCH_REFERENCE_PORT:-18197}"
reference_source="${REFERENCE_SOURCE:-../shared/bench/mhd-reference.c}"
work="$(mktemp -d)"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

command -v wrk >/dev/null || { echo "wrk is missing: make deps" >&2; exit 1; }
[ -f "$reference_source" ] || { echo "no reference server at $reference_source" >&2; exit 1; }
swift build -c release --product quire >/dev/null
cc -O2 -o "$work/mhd-reference" "$reference_source" $(pkg-config --cflags --libs libmicrohttpd)

.build/release/quire serve --port "$quire_port" --log-level warning >"$work/quire.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$quire_port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs "http://127.0.0.1:$quire_port$path" >"$work/body"
"$work/mhd-reference" "$reference_port" "$work/body" 2>/dev/null &
pids+=($!)
sleep 0.3

# run NAME URL: one bounded wrk run; prints "rps p50_ms p99_ms errors"
run() {
  wrk -t2 -c"$connections" -d"${seconds}s" --latency "$1" >"$work/wrk.txt" 2>&1
  python3 - "$work/wrk.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def ms(label):
    m = re.search(r"^\s*%s%%\s+([\d.]+)(us|ms|s)\s*$" % label, text, re.M)
    if not m: return float("nan")
    v, u = float(m.group(1)), m.group(2)
    return v / 1000 if u == "us" else v * 1000 if u == "s" else v
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
errors = sum(int(x) for x in re.findall(r"(?:connect|read|write|timeout) (\d+)", text))
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
errors += int(non2xx.group(1)) if non2xx else 0
print(f"{rps:.0f} {ms('50'):.3f} {ms('99'):.3f} {errors}")
PY
}

wrk -t2 -c"$connections" -d1s "http://127.0.0.1:$quire_port$path" >/dev/null 2>&1   # warm-up
printf '%-10s %-6s %12s %9s %9s %7s\n' server round "requests/s" "p50 ms" "p99 ms" errors
ratios=()
for round in $(seq "$rounds"); do
  read -r ref_rps ref_p50 ref_p99 ref_err < <(run "http://127.0.0.1:$reference_port/")
  printf '%-10s %-6s %12s %9s %9s %7s\n' reference "$round" "$ref_rps" "$ref_p50" "$ref_p99" "$ref_err"
  read -r q_rps q_p50 q_p99 q_err < <(run "http://127.0.0.1:$quire_port$path")
  printf '%-10s %-6s %12s %9s %9s %7s\n' quire "$round" "$q_rps" "$q_p50" "$q_p99" "$q_err"
  ratios+=("$(python3 -c "print(f'{$q_rps / $ref_rps:.3f}')")")
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "GET $path: ratio quire/reference per round: ${ratios[*]}; median ${median}x"
