//go:build consoledev

package console

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestDevServer(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/console/", New(Options{}))
	var ex uint64
	now := time.Now()
	j := func(w http.ResponseWriter, v any) { w.Header().Set("Content-Type", "application/json"); json.NewEncoder(w).Encode(v) }
	outline := map[string]any{"kind": "sequence", "position": "po.bpel:20", "count": 10, "ns": 50000000, "children": []any{
		map[string]any{"kind": "receive", "name": "start", "position": "po.bpel:21", "count": 10, "ns": 1000000},
		map[string]any{"kind": "invoke", "name": "callCRM", "position": "po.bpel:30", "count": 10, "ns": 30000000},
		map[string]any{"kind": "flow", "position": "po.bpel:40", "count": 10, "ns": 15000000, "children": []any{
			map[string]any{"kind": "invoke", "name": "callERP", "position": "po.bpel:41", "count": 10, "ns": 14000000},
			map[string]any{"kind": "assign", "name": "sum", "position": "po.bpel:50", "count": 10, "ns": 400000},
		}},
		map[string]any{"kind": "reply", "name": "ack", "position": "po.bpel:60", "count": 10, "ns": 200000},
	}}
	proc := func() map[string]any {
		ex += 37
		return map[string]any{"name": "{urn:example:po}PurchaseOrder", "local": "PurchaseOrder", "version": 2, "bundle": "purchase-order", "file": "po.bpel", "state": "active", "deployed": now,
			"endpoints": []any{map[string]any{"path": "/processes/PurchaseOrder", "service": "POService", "port": "POPort", "soap": "1.1", "operations": []string{"submitPurchaseOrder"}}},
			"stats": map[string]any{"started": ex, "completed": ex - 2, "faulted": 1, "exchanges": ex, "exchangeNs": ex * 1200000}, "sampleEvery": 16}
	}
	mux.HandleFunc("/api/v1/", func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimPrefix(r.URL.Path, "/api/v1/")
		switch {
		case p == "":
			j(w, map[string]any{"readOnly": false})
		case p == "processes":
			p1 := proc()
			p2 := map[string]any{"name": "{urn:example:po}PurchaseOrder", "local": "PurchaseOrder", "version": 1, "bundle": "purchase-order", "file": "po.bpel", "state": "retired", "deployed": now.Add(-time.Hour), "stats": map[string]any{}}
			j(w, []any{p1, p2})
		case strings.HasPrefix(p, "processes/"):
			if r.Method == "POST" {
				j(w, map[string]any{})
				return
			}
			x := proc()
			x["outline"] = outline
			j(w, x)
		case p == "bundles":
			j(w, []any{map[string]any{"name": "purchase-order", "state": "deployed", "version": 2, "deployed": now, "processes": []string{"{urn:example:po}PurchaseOrder"}},
				map[string]any{"name": "hd", "state": "failed", "errors": []string{"hd.bpel:12: bogus: unknown activity <bogus>", "hd.bpel:14: <x>: not allowed"}}})
		case p == "instances":
			var l []any
			for i := 0; i < 7; i++ {
				l = append(l, map[string]any{"id": "i-" + string(rune('a'+i)), "process": "{urn:example:po}PurchaseOrder", "version": 2, "state": []string{"waiting", "completed", "suspended", "faulted"}[i%4], "started": now, "lastActive": now, "correlations": map[string]string{"po": "PO-00012" + string(rune('0'+i))}})
			}
			j(w, map[string]any{"instances": l, "next": "abc", "scanned": 7})
		case strings.HasPrefix(p, "instances/"):
			if r.Method == "POST" {
				w.WriteHeader(409)
				j(w, map[string]any{"error": "conflict: instance ended"})
				return
			}
			j(w, map[string]any{"id": "i-a", "process": "{urn:example:po}PurchaseOrder", "version": 2, "state": "suspended", "started": now, "lastActive": now,
				"correlations": map[string]string{"po": "PO-000123"}, "variables": map[string]string{"in": `<po:purchaseOrder xmlns:po="urn:example:po"><po:id a="1&amp;2">PO-000123</po:id><po:items><po:item qty="2">x &lt;script&gt;alert(1)&lt;/script&gt;</po:item></po:items></po:purchaseOrder>`, "raw": "not xml <b>bold</b>"},
				"branches": []any{map[string]any{"activity": "invoke callCRM", "position": "po.bpel:30", "waiting": "partner answer"}},
				"alarms":   []any{now.Add(time.Hour)},
				"failure":  map[string]any{"activity": "invoke callCRM", "position": "po.bpel:30", "reason": "dial tcp 127.0.0.1:9101: connection refused", "attempts": 3, "time": now},
				"actions":  []string{"retry", "fault", "cancel", "terminate", "delete"},
				"timeline": []any{map[string]any{"kind": "instanceCreated", "time": now}, map[string]any{"kind": "activityCompleted", "time": now, "activity": "receive", "name": "start", "position": "po.bpel:21", "durationNs": 120000}}})
		default:
			http.NotFound(w, r)
		}
	})
	srv := &http.Server{Addr: "127.0.0.1:8799", Handler: mux}
	go srv.ListenAndServe()
	time.Sleep(20 * time.Minute)
}
