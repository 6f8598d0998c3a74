#!/usr/bin/env bash
# peak2x.sh: one orchd offered twice its peak (README, The front door).
#
# Starts `orchd mock-partners` and one orchd (extra flags in SERVE_ARGS) on
# the example bundles, measures the closed-loop peak at KNEE clients, then
# runs an open loop at twice that rate with at most MAX_OUT outstanding,
# and prints both with shed, unsent, the limit mid-run and the CPU seconds
# orchd and the partners used during each loop (warmup included, the same
# length for both) and the generator during the open loop.
#
# With PIN=1, orchd and the partners run on CPU 1 and the generator on
# CPU 0 (taskset), so that the requests the generator sends, shed ones
# included, do not take CPU from the server: as with a generator on
# another machine.
#
# Environment: BIN [bin/orchd] KNEE [64] MAX_OUT [3000] DURATION [6s]
#   WARMUP [1s] SERVE_ARGS [] PORT [38080] CRM_PORT [39101] ERP_PORT [39102]
#   PIN []
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/orchd}
KNEE=${KNEE:-64}
MAX_OUT=${MAX_OUT:-3000}
DURATION=${DURATION:-6s}
WARMUP=${WARMUP:-1s}
SERVE_ARGS=${SERVE_ARGS:-}
PORT=${PORT:-38080}
PIN=${PIN:-}
srv=() gen=()
if [ -n "$PIN" ]; then
	srv=(taskset -c 1)
	gen=(taskset -c 0)
fi
CRM_PORT=${CRM_PORT:-39101}
ERP_PORT=${ERP_PORT:-39102}

w=$(mktemp -d "${TMPDIR:-/tmp}/orchd-peak2x.XXXXXX")
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	rm -rf "$w"
}
trap cleanup EXIT
cp -R ./deploy "$w/deploy"
sed -i -e "s#127\.0\.0\.1:9101#127.0.0.1:$CRM_PORT#g" -e "s#127\.0\.0\.1:9102#127.0.0.1:$ERP_PORT#g" "$w"/deploy/*/*.wsdl
"${srv[@]}" "$BIN" mock-partners --crm "127.0.0.1:$CRM_PORT" --erp "127.0.0.1:$ERP_PORT" --log-level warn >"$w/m.log" 2>&1 &
M=$!
pids+=("$M")
# shellcheck disable=SC2086
"${srv[@]}" "$BIN" serve --listen "127.0.0.1:$PORT" --deploy "$w/deploy" --data "$w/data" --deploy-poll 0 --log-level warn $SERVE_ARGS >"$w/o.log" 2>&1 &
O=$!
pids+=("$O")
sleep 2
U="http://127.0.0.1:$PORT/processes/PurchaseOrder"
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
c0=$(cpu "$O") n0=$(cpu "$M")
"${gen[@]}" "$BIN" bench --url "$U" --concurrency "$KNEE" --duration "$DURATION" --warmup "$WARMUP" --json >"$w/c.json"
c1=$(cpu "$O") n1=$(cpu "$M")
rate=$(python3 -c "import json;print(int(2*json.load(open('$w/c.json'))['levels'][0]['tx_per_s']))")
o0=$(cpu "$O") m0=$(cpu "$M")
(sleep 3; curl -s "http://127.0.0.1:$PORT/metrics" | grep -E '^orchd_(admission_limit|inflight_exchanges|queued_exchanges) ' | tr '\n' ' ') >"$w/mid.txt" &
mid=$!
gcpu=$(python3 - "$w/r.json" "${gen[@]}" "$BIN" bench --url "$U" --rate "$rate" --max-outstanding "$MAX_OUT" --duration "$DURATION" --warmup "$WARMUP" --json <<'PY'
import resource, subprocess, sys
subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "w"), check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.2f" % (r.ru_utime + r.ru_stime))
PY
)
o1=$(cpu "$O") m1=$(cpu "$M")
wait "$mid" || true
python3 - "$w" "$rate" "$o1" "$o0" "$m1" "$m0" "$gcpu" "$c1" "$c0" "$n1" "$n0" <<'PY'
import json, sys
w, rate = sys.argv[1], sys.argv[2]
o, m, gen = (int(sys.argv[3]) - int(sys.argv[4])) / 100, (int(sys.argv[5]) - int(sys.argv[6])) / 100, sys.argv[7]
c = json.load(open(w + "/c.json"))["levels"][0]
r = json.load(open(w + "/r.json"))["levels"][0]
co, cm = (int(sys.argv[8]) - int(sys.argv[9])) / 100, (int(sys.argv[10]) - int(sys.argv[11])) / 100
print("closed: %.1f tx/s, p99 %.1f ms; CPU s orchd %.2f, partners %.2f" % (c["tx_per_s"], c["latency"]["p99_ms"], co, cm))
print("open at %s/s: %.1f tx/s (%.0f%%), p99 %.1f ms, shed %d, errors %d, unsent %s" % (
    rate, r["tx_per_s"], 100 * r["tx_per_s"] / c["tx_per_s"], r["latency"]["p99_ms"], r["shed"], r["errors"], r.get("unsent")))
print("CPU seconds during the open loop: orchd %.2f, partners %.2f, generator %s" % (o, m, gen))
print("mid-run:", open(w + "/mid.txt").read())
PY
uptime
