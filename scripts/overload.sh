#!/usr/bin/env bash
# overload.sh: measure orchd offered more than it can serve, with and
# without shedding (README, Limits and failure behaviour).
#
# Builds bin/orchd, starts `orchd mock-partners` as its own process and two
# orchd servers on the example bundles: A without an admission bound
# (--max-inflight 0), B with the default --max-inflight and --queue-wait.
# Then, levels alternating A and B (`orchd bench --url A --vs B`):
#   1. closed loop at KNEE_LEVELS clients, to find the knee and the peak;
#   2. closed loop at 4 x KNEE clients;
#   3. open loop at RATE requests/s (about twice the peak), MAX_OUT
#      requests outstanding at most.
# Whatever it started is stopped on exit.
#
# Environment (defaults in brackets):
#   DURATION [10s]  WARMUP [2s]  KNEE_LEVELS [1,4,8,16,32,64,256]
#   KNEE [16]  RATE [5500]  MAX_OUT [1000]  STEPS [123]
#   A_PORT [28080]  B_PORT [28081]  CRM_PORT [29101]  ERP_PORT [29102]
#   GO [go]  B_ARGS [] extra flags for server B (e.g. --max-inflight 32)
#   NICE [0] niceness of the load generator: on a machine it shares with
#   the servers, it yields the CPU to them, as one on another machine would
#   (its lateness still counts: latency runs from when a request was due)
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
KNEE_LEVELS=${KNEE_LEVELS:-1,4,8,16,32,64,256}
KNEE=${KNEE:-16}
RATE=${RATE:-5500}
MAX_OUT=${MAX_OUT:-1000}
STEPS=${STEPS:-123}
A_PORT=${A_PORT:-28080}
B_PORT=${B_PORT:-28081}
CRM_PORT=${CRM_PORT:-29101}
ERP_PORT=${ERP_PORT:-29102}
B_ARGS=${B_ARGS:-}
NICE=${NICE:-0}

die() { echo "overload: $*" >&2; exit 1; }
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "$A_PORT" "$B_PORT" "$CRM_PORT" "$ERP_PORT"; do
	port_taken "$p" && die "port $p on 127.0.0.1 is taken; set A_PORT/B_PORT/CRM_PORT/ERP_PORT"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/orchd-overload.XXXXXX")
pids=()
cleanup() {
	local code=$?
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	rm -rf "$work"
	exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p bin
$GO build -o bin/orchd ./cmd/orchd
deploy="$work/deploy"
cp -R ./deploy "$deploy"
sed -i.bak -e "s#127\.0\.0\.1:9101#127.0.0.1:$CRM_PORT#g" -e "s#127\.0\.0\.1:9102#127.0.0.1:$ERP_PORT#g" "$deploy"/*/*.wsdl
rm -f "$deploy"/*/*.bak

start() { # name, then the command; logs go to $work/<name>.log
	local name=$1
	shift
	"$@" >"$work/$name.log" 2>&1 &
	pids+=($!)
}
start mock-partners bin/orchd mock-partners --crm "127.0.0.1:$CRM_PORT" --erp "127.0.0.1:$ERP_PORT" --log-level warn
start orchd-a bin/orchd serve --listen "127.0.0.1:$A_PORT" --deploy "$deploy" --data "$work/data-a" --deploy-poll 0 --log-level warn --max-inflight 0
# shellcheck disable=SC2086
start orchd-b bin/orchd serve --listen "127.0.0.1:$B_PORT" --deploy "$deploy" --data "$work/data-b" --deploy-poll 0 --log-level warn $B_ARGS

a="http://127.0.0.1:$A_PORT/processes/PurchaseOrder"
b="http://127.0.0.1:$B_PORT/processes/PurchaseOrder"
for url in "$a" "$b"; do
	for ((i = 0; ; i++)); do
		((i < 100)) || { cat "$work"/*.log >&2; die "$url does not answer"; }
		curl -fsS -m 2 -H 'Content-Type: text/xml; charset=utf-8' -H 'SOAPAction: "urn:example:po#submitPurchaseOrder"' \
			--data-binary @internal/loadgen/assets/po-request.xml "$url" 2>/dev/null | grep -q ACCEPTED && break
		sleep 0.1
	done
done

common=(--url "$a" --vs "$b" --duration "$DURATION" --warmup "$WARMUP")
echo "A = no admission bound (--max-inflight 0); B = defaults ${B_ARGS:-}"
if [[ $STEPS == *1* ]]; then
	echo "== 1. closed loop, the knee"
	nice -n "$NICE" bin/orchd bench "${common[@]}" --concurrency "$KNEE_LEVELS" 2>/dev/null
fi
if [[ $STEPS == *2* ]]; then
	echo "== 2. closed loop at 4 x $KNEE clients"
	nice -n "$NICE" bin/orchd bench "${common[@]}" --concurrency "$((4 * KNEE))" 2>/dev/null
fi
if [[ $STEPS == *3* ]]; then
	echo "== 3. open loop at $RATE/s, at most $MAX_OUT outstanding"
	nice -n "$NICE" bin/orchd bench "${common[@]}" --rate "$RATE" --max-outstanding "$MAX_OUT" 2>/dev/null
fi
