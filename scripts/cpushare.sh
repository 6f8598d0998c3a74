#!/usr/bin/env bash
# cpushare.sh: CPU per exchange of orchd, the hand-written reference (poref)
# and the transport-only floor (poref --transport-only), each loaded alone
# in turn at 64 clients, twice; server and mock-partner CPU from /proc.
# Ports 8080, 8090, 8091, 9101, 9102 must be free. D sets the time per run.
cd "$(dirname "$0")/.."
go build -o bin/orchd ./cmd/orchd && go build -o bin/poref ./cmd/poref || exit 1
w=$(mktemp -d)
bin/orchd mock-partners --crm 127.0.0.1:9101 --erp 127.0.0.1:9102 --log-level warn >$w/m.log 2>&1 & M=$!
bin/orchd serve --listen 127.0.0.1:8080 --deploy ./deploy --data $w/data --log-level warn >$w/o.log 2>&1 & O=$!
bin/poref --listen 127.0.0.1:8090 --log-level warn >$w/p.log 2>&1 & P=$!
bin/poref --listen 127.0.0.1:8091 --transport-only --log-level warn >$w/f.log 2>&1 & F=$!
sleep 2
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
for round in 1 2; do
for t in "orchd 8080 $O" "poref 8090 $P" "floor 8091 $F"; do
  set -- $t
  m0=$(cpu $M); s0=$(cpu $3)
  bin/orchd bench --url http://127.0.0.1:$2/processes/PurchaseOrder --concurrency 64 --duration ${D:-5s} --warmup 0s --json > $w/b.json 2>/dev/null & B=$!
  sleep 0.2; 

  wait $B
  m1=$(cpu $M); s1=$(cpu $3)
  python3 - "$1" $((s1-s0)) $((m1-m0)) $w/b.json <<'PY'
import json,sys
name,s,m,f=sys.argv[1],int(sys.argv[2]),int(sys.argv[3]),sys.argv[4]
l=json.load(open(f))['levels'][0]; n=l['successes']
print(f"{name:6s} tx/s {l['tx_per_s']:8.1f}  server {s*1e4/n:6.1f} us/tx  mocks {m*1e4/n:6.1f} us/tx")
PY
done; done
cat /proc/loadavg
kill $M $O $P $F; rm -rf $w
