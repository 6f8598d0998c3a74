# orchd: see README.md. All targets run from a fresh clone with only Go
# (and, for -race, a C compiler) installed.

GO ?= go
FUZZTIME ?= 3000x

.PHONY: cpushare run test unit fuzz fuzz-long vet build interop bench bench-go conformance overload soak soak-short cluster-bench

## run: build orchd, serve the example bundles (./deploy) with the CRM and ERP
## mock partners in process, post the shipped purchase order
## (deploy/purchase-order/po-request.xml) once it serves and print the ack;
## orchd then keeps serving on 127.0.0.1:8080 until Ctrl-C (needs curl)
run: build
	@bin/orchd serve --deploy ./deploy --mock-partners & pid=$$!; \
	trap 'kill $$pid 2>/dev/null' INT TERM; \
	curl -s --retry 30 --retry-connrefused --retry-delay 1 \
	  -H 'Content-Type: text/xml; charset=utf-8' -H 'SOAPAction: "urn:example:po#submitPurchaseOrder"' \
	  --data-binary @deploy/purchase-order/po-request.xml http://127.0.0.1:8080/processes/PurchaseOrder && \
	  printf '\n(orchd serves on http://127.0.0.1:8080/, the console at /console/; Ctrl-C stops it)\n'; \
	wait $$pid

## test: vet, all tests with the race detector, then each fuzz target briefly
test: vet unit fuzz

vet:
	@test -z "$$(gofmt -l cmd internal)" || { echo "gofmt needed:"; gofmt -l cmd internal; exit 1; }
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 -timeout=25m ./...

# FUZZ_TARGETS: every fuzz target, as package:Target. make fuzz runs each
# for FUZZTIME (3000 iterations: the seeds and committed corpora in
# testdata/fuzz/<Target>, and a little more); make fuzz-long for FUZZ_LONG
# (60s) each.
FUZZ_TARGETS = \
	./internal/partnerallow/:FuzzParse \
	./internal/soap/:FuzzDecodeEnvelope \
	./internal/soap/:FuzzHeaderParts \
	./internal/soap/:FuzzAddressing \
	./internal/soap/:FuzzParseDifferential \
	./internal/xmlparse/:FuzzParse \
	./internal/process/xmldoc/:FuzzParse \
	./internal/process/ast/:FuzzParse \
	./internal/process/check/:FuzzCheck \
	./internal/process/:FuzzCompileBPEL \
	./internal/process/compile/:FuzzCompileInsertPath \
	./internal/process/expr/:FuzzCheckXPath1Functions \
	./internal/process/interp/:FuzzXPath1Fast \
	./internal/xpath1/:FuzzParse \
	./internal/process/epr/:FuzzParseEPR \
	./internal/process/interp/:FuzzDecodeCompFrames \
	./internal/process/interp/:FuzzDecodeFrames \
	./internal/process/interp/:FuzzRewrite \
	./internal/process/interp/:FuzzSplitFingerprint \
	./internal/persist/:FuzzDecodeRecord \
	./internal/endpoints/:FuzzParse \
	./internal/redact/:FuzzAddress \
	./internal/publicurl/:FuzzHost \
	./internal/xsd/:FuzzLoad \
	./internal/xsd/:FuzzDeadlineAfter \
	./internal/xslt/:FuzzCompile \
	./internal/xpath2/:FuzzParse \
	./internal/xpath2/:FuzzParseXQuery \
	./internal/bundlezip/:FuzzExtract \
	./internal/bundlezip/:FuzzCheckDirectory \
	./internal/server/:FuzzHeadScanner \
	./internal/wssec/:FuzzParseCredentials \
	./internal/wssec/:FuzzAuthenticate \
	./internal/humantask/:FuzzParseHT \
	./internal/humantask/:FuzzParseHTConfig \
	./internal/humantask/:FuzzParsePeople \
	./internal/admin/:FuzzParseMigrate \
	./internal/admin/:FuzzParseIncidentQuery \
	./internal/taskform/:FuzzParse \
	./internal/htclient/:FuzzDecode
FUZZ_LONG ?= 60s

fuzz:
	@missing=$$(grep -rl --include='*_test.go' '^func Fuzz' cmd internal | while read -r f; do \
		for n in $$(grep -o '^func Fuzz[A-Za-z0-9_]*' "$$f" | cut -c6-); do \
			case " $(FUZZ_TARGETS) " in *" ./$$(dirname "$$f")/:$$n "*) ;; *) echo "./$$(dirname "$$f")/:$$n";; esac; \
		done; done); \
		test -z "$$missing" || { echo "fuzz targets missing from FUZZ_TARGETS in the Makefile: $$missing"; exit 1; }
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} in $${t%%:*} ($(FUZZTIME))"; \
		$(GO) test -run='^$$' -fuzz="^$${t#*:}\$$" -fuzztime=$(FUZZTIME) $${t%%:*}; \
	done

## fuzz-long: each fuzz target for FUZZ_LONG (60s; about 21 minutes in all). Not in make test.
fuzz-long:
	$(MAKE) fuzz FUZZTIME=$(FUZZ_LONG)

## interop: build SOAP clients with four toolkits nobody here wrote (Python
## zeep, PHP SoapClient, node-soap, gSOAP wsdl2h/soapcpp2 + g++) from a
## running orchd's ?wsdl, on a port other than 8080 and over TLS, and call
## every operation of the example processes, and (zeep) the human task
## client API from its ?wsdl (cmd/orchd/interop_e2e_test.go).
## Needs python3-zeep, php-cli, php-soap, gsoap, libgsoap-dev, libssl-dev,
## g++, node and npm (.ci/run installs them); node-soap INTEROP_NODE_SOAP is
## installed here into bin/interop.
INTEROP_NODE_SOAP ?= 1.13.0
interop:
	@grep -qs '"version": "$(INTEROP_NODE_SOAP)"' bin/interop/node_modules/soap/package.json || \
		npm install --no-audit --no-fund --no-save --prefix bin/interop soap@$(INTEROP_NODE_SOAP)
	ORCHD_INTEROP=1 ORCHD_INTEROP_NODE_PATH=$(CURDIR)/bin/interop/node_modules \
		$(GO) test -race -count=1 -timeout=40m -run='^TestInterop$$' -v ./cmd/orchd/

## conformance: run Apache ODE's whole bpel-test corpus (testdata/ode-corpus)
## and print PASS/FAIL/SKIP per case; case failures do not fail the target
## (make test runs the cases listed in internal/conformance/testdata/passing.txt)
conformance:
	ORCHD_CONFORMANCE=all $(GO) test -count=1 -v -timeout=30m -run='^TestConformanceAll$$' ./internal/conformance/

## build: the orchd binary in ./bin, stamped with the checkout's VCS revision
## (-buildvcs=true: some machines turn stamping off in GOFLAGS)
build:
	$(GO) build $(if $(wildcard .git),-buildvcs=true) -o bin/orchd ./cmd/orchd

## bench: orchd against the hand-written reference (cmd/poref), mock partners
## in their own process, at 1, 16, 64 and 256 clients (DURATION=10s per level;
## see scripts/bench.sh for the other knobs)
bench:
	GO=$(GO) ./scripts/bench.sh

## cpushare: CPU per exchange of orchd, the reference and the transport-only
## floor (poref --transport-only), each alone at 64 clients (scripts/cpushare.sh)
cpushare:
	./scripts/cpushare.sh

## overload: orchd offered more than it can serve, with and without shedding
## (closed loop to the knee, 4 x the knee, open loop at about twice the peak;
## see scripts/overload.sh for the knobs)
overload:
	GO=$(GO) ./scripts/overload.sh

## soak: SOAK_DURATION (30m) of an open-loop load on a non-race orchd at
## SOAK_LOAD (0.8) of the capacity it first measures for the soak's mix
## (SOAK_PROBE, 1m, 64 clients closed loop, then the highest open-loop rate
## from that figure down in 10% steps that holds; in-memory POs and one
## request in six of the persistent mix), with a kill -9 and restart every SOAK_RESTART
## (5m); prints tx/s, latency, CPU per exchange, RSS, goroutines,
## shed/unsent/late and the load average every SOAK_SAMPLE (1m), the drift
## of each restart period and the crash invariants; fails on a lost
## acknowledged exchange or another invariant, a tx/s drift over 5% or RSS
## growth over 25% (cmd/orchd/soak_e2e_test.go). SOAK_RATE/SOAK_PERSIST_RATE
## fix the rates instead; SOAK_HEAP_DIR=DIR keeps orchd's heap and CPU
## profiles of each sample. Not in make test.
soak:
	ORCHD_SOAK=1 ORCHD_E2E_NORACE=1 $(GO) test -count=1 -v -timeout=0 -run='^TestSoak$$' ./cmd/orchd/

## soak-short: CI's soak (.ci/run, after make test): 2 minutes at 80% of the
## measured capacity, a kill -9 each minute; fails on the invariants only
## (drift is printed: CI does not gate on wall-clock figures)
soak-short:
	ORCHD_SOAK=1 ORCHD_E2E_NORACE=1 SOAK_DURATION=2m SOAK_RESTART=1m SOAK_SAMPLE=20s SOAK_PROBE=20s SOAK_DRIFT=report \
		$(GO) test -count=1 -v -timeout=10m -run='^TestSoak$$' ./cmd/orchd/

## cluster-bench: orchd on a 3-member etcd (members as separate processes) with
## 1 node without and with --cluster, then 2 and 3 nodes, CPU per exchange per
## process from /proc and etcd's counters, then a raw Txn load for etcd's write
## ceiling; prints the tables of docs/cluster-perf.md (cmd/orchd/cluster_measure_test.go;
## DURATION per phase, default 10s; CLIENTS in total, default 24). About 3.5 minutes.
## Not in make test.
cluster-bench:
	ORCHD_MEASURE=1 ORCHD_E2E_NORACE=1 ORCHD_MEASURE_DURATION=$(or $(DURATION),10s) ORCHD_MEASURE_CLIENTS=$(or $(CLIENTS),24) \
		$(GO) test -count=1 -v -timeout=15m -run='^TestMeasureCluster$$' ./cmd/orchd/

## bench-go: Go benchmarks of the hot path, with allocations
bench-go:
	$(GO) test -run='^$$' -bench=. -benchmem ./internal/process/ ./internal/soap/
