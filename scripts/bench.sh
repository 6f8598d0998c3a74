#!/usr/bin/env bash
# bench.sh: measure orchd against the hand-written reference (cmd/poref) on
# the purchase-order workload, with the mock partners in their own process.
#
# Builds bin/orchd and bin/poref, starts `orchd mock-partners`,
# `orchd serve --deploy ./deploy` and `poref`, waits until each answers,
# runs `orchd bench --url <orchd> --vs <poref>` and prints its table.
# Whatever it started is stopped on exit, however it exits.
#
# Environment (defaults in brackets):
#   DURATION [10s]  WARMUP [2s]  CONCURRENCY [1,16,64,256]
#   ORCHD_PORT [8080]  POREF_PORT [8090]  CRM_PORT [9101]  ERP_PORT [9102]
#   GO [go]  BENCH_ARGS [] extra flags for orchd bench (e.g. --json)
#   VS [poref]  poref: A = orchd's in-memory PO, B = poref; memory: A = orchd's
#     persistent PO, B = its in-memory PO, on the same orchd (then the store's
#     checkpoints and write transactions per persistent exchange are printed)
#   ORCHD [bin/orchd built here]  an orchd binary to measure instead
#   KEEP [0]  1: the persistent PO keeps its completed instances (its
#     <cleanup on="success"/> removed), so each exchange stores one
# The example bundle's WSDLs call the partners on 127.0.0.1:9101 and :9102;
# with other CRM_PORT/ERP_PORT a copy of ./deploy is rewritten to match.
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
CONCURRENCY=${CONCURRENCY:-1,16,64,256}
ORCHD_PORT=${ORCHD_PORT:-8080}
POREF_PORT=${POREF_PORT:-8090}
CRM_PORT=${CRM_PORT:-9101}
ERP_PORT=${ERP_PORT:-9102}
BENCH_ARGS=${BENCH_ARGS:-}
VS=${VS:-poref}
case "$VS" in poref | memory) ;; *) echo "bench: VS is poref or memory, not $VS" >&2; exit 2 ;; esac

die() { echo "bench: $*" >&2; exit 1; }

port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

for p in "$ORCHD_PORT" "$POREF_PORT" "$CRM_PORT" "$ERP_PORT"; do
	if port_taken "$p"; then
		die "port $p on 127.0.0.1 is taken; stop what listens there or set ORCHD_PORT/POREF_PORT/CRM_PORT/ERP_PORT"
	fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/orchd-bench.XXXXXX")
pids=()
cleanup() {
	local code=$?
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$work"
	exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "bench: building bin/orchd and bin/poref" >&2
mkdir -p bin
if [[ -z "${ORCHD:-}" ]]; then
	$GO build -o bin/orchd ./cmd/orchd
	ORCHD=bin/orchd
fi
$GO build -o bin/poref ./cmd/poref

deploy=./deploy
if [[ "$CRM_PORT" != 9101 || "$ERP_PORT" != 9102 || "${KEEP:-0}" == 1 ]]; then
	deploy="$work/deploy"
	cp -R ./deploy "$deploy"
	sed -i.bak -e "s#127\.0\.0\.1:9101#127.0.0.1:$CRM_PORT#g" -e "s#127\.0\.0\.1:9102#127.0.0.1:$ERP_PORT#g" "$deploy"/*/*.wsdl
	if [[ "${KEEP:-0}" == 1 ]]; then
		sed -i.bak -e 's#<cleanup on="success"/>##' "$deploy"/purchase-order-persistent/deploy.xml
	fi
	rm -f "$deploy"/*/*.bak
fi

start() { # name, then the command; logs go to $work/<name>.log
	local name=$1
	shift
	"$@" >"$work/$name.log" 2>&1 &
	pids+=($!)
}

start mock-partners "$ORCHD" mock-partners --crm "127.0.0.1:$CRM_PORT" --erp "127.0.0.1:$ERP_PORT" --log-level warn
start orchd "$ORCHD" serve --listen "127.0.0.1:$ORCHD_PORT" --deploy "$deploy" --data "$work/data" --log-level warn
start poref bin/poref --listen "127.0.0.1:$POREF_PORT" \
	--crm "http://127.0.0.1:$CRM_PORT/crm" --erp "http://127.0.0.1:$ERP_PORT/erp" --log-level warn

orchd_url="http://127.0.0.1:$ORCHD_PORT/processes/PurchaseOrder"
poref_url="http://127.0.0.1:$POREF_PORT/processes/PurchaseOrder"

# wait_ready name url: poll with a real purchase order until it is acknowledged.
wait_ready() {
	local name=$1 url=$2 i
	for ((i = 0; i < 100; i++)); do
		if curl -fsS -m 2 -H 'Content-Type: text/xml; charset=utf-8' \
			-H 'SOAPAction: "urn:example:po#submitPurchaseOrder"' \
			--data-binary @internal/loadgen/assets/po-request.xml "$url" 2>/dev/null |
			grep -q '<po:status>ACCEPTED</po:status>'; then
			return 0
		fi
		for pid in "${pids[@]}"; do
			kill -0 "$pid" 2>/dev/null || { cat "$work"/*.log >&2; die "a server exited before $name answered (logs above)"; }
		done
		sleep 0.1
	done
	cat "$work"/*.log >&2
	die "$name did not acknowledge a purchase order at $url within 10s (logs above)"
}
wait_ready orchd "$orchd_url"
wait_ready poref "$poref_url"

if [[ "$VS" == memory ]]; then
	a_url="http://127.0.0.1:$ORCHD_PORT/processes/PurchaseOrderPersistent"
	b_url=$orchd_url
	wait_ready "orchd (persistent)" "$a_url"
	echo "bench: A = orchd persistent PO, B = orchd in-memory PO; $CONCURRENCY clients, $DURATION per level after $WARMUP warmup" >&2
else
	a_url=$orchd_url
	b_url=$poref_url
	echo "bench: A = orchd, B = poref (hand-written reference); $CONCURRENCY clients, $DURATION per level after $WARMUP warmup" >&2
fi
# shellcheck disable=SC2086
"$ORCHD" bench --url "$a_url" --vs "$b_url" --concurrency "$CONCURRENCY" \
	--duration "$DURATION" --warmup "$WARMUP" $BENCH_ARGS

if [[ "$VS" == memory ]]; then
	# The store's work per persistent exchange (warmups and readiness
	# checks included).
	curl -fsS "http://127.0.0.1:$ORCHD_PORT/metrics" | awk '
		/^orchd_exchanges_total\{/ && /PurchaseOrderPersistent/ { ex += $NF }
		/^orchd_store_checkpoints_total / { cp = $NF }
		/^orchd_store_write_transactions_total / { tx = $NF }
		END { if (ex > 0) printf "bench: persistent exchanges %d, checkpoints %d (%.2f per exchange), write transactions (fsyncs) %d (%.2f per exchange)\n", ex, cp, cp / ex, tx, tx / ex }' >&2
fi
