package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/events"
)

// readEvents reads the JSON lines written so far to path: complete
// lines only, since the listener writes a batch through a buffer and a
// reader may catch it half-written.
func readEvents(t *testing.T, path string) []events.Event {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	b = b[:bytes.LastIndexByte(b, '\n')+1]
	var evs []events.Event
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev events.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("events file line %q: %v", sc.Text(), err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func TestEventsFileOfPurchaseOrder(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	path := filepath.Join(t.TempDir(), "events.jsonl")
	o := startOrchd(t, "--deploy", deploy, "--events-file", path)
	client := &http.Client{Timeout: 30 * time.Second}
	r := post(t, client, o.base+"/processes/PurchaseOrder", textXML, poAction, readWorkload(t, "po-request.xml"))
	checkAck(t, r, map[string]string{"poId": "PO-000123", "status": "ACCEPTED"})

	var evs []events.Event
	if !eventually(func() bool {
		evs = readEvents(t, path)
		return len(evs) > 0 && evs[len(evs)-1].Kind == events.InstanceCompleted
	}) {
		t.Fatalf("no instanceCompleted in the events file:\n%v\n%s", evs, o.log())
	}
	if evs[0].Kind != events.InstanceCreated {
		t.Errorf("first event %s, want instanceCreated", evs[0].Kind)
	}
	var calls []string
	var kinds []events.Kind
	for _, ev := range evs {
		kinds = append(kinds, ev.Kind)
		if ev.Instance != evs[0].Instance || ev.Process != "{urn:example:po:process}PurchaseOrder" || ev.Time.IsZero() {
			t.Errorf("event %+v: want instance %s of PurchaseOrder, with a time", ev, evs[0].Instance)
		}
		if ev.Kind == events.PartnerInvoked || ev.Kind == events.PartnerAnswered {
			calls = append(calls, ev.Kind.String()+" "+ev.Partner+"."+ev.Operation)
		}
	}
	if len(calls) != 4 || !strings.HasPrefix(calls[0], "partnerInvoked ") || !strings.HasPrefix(calls[1], "partnerAnswered ") {
		t.Errorf("partner events %v: want invoked/answered for the CRM, then the ERP", calls)
	}
	for _, k := range []events.Kind{events.ActivityStarted, events.ActivityCompleted, events.VariableChanged} {
		if !slices.Contains(kinds, k) {
			t.Errorf("no %s event in %v", k, kinds)
		}
	}
	_, metrics := get(t, o.base+"/metrics")
	if v := metricValue(t, metrics, "orchd_events_emitted_total"); v != strconv.Itoa(len(evs)) {
		t.Errorf("orchd_events_emitted_total %s, file has %d events", v, len(evs))
	}
}

// poRate posts n purchase orders one after the other and returns the
// exchanges per second and the slowest exchange.
func poRate(t *testing.T, base string, n int) (float64, time.Duration) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	body := readWorkload(t, "po-request.xml")
	var slowest time.Duration
	start := time.Now()
	for i := 0; i < n; i++ {
		t0 := time.Now()
		r := post(t, client, base+"/processes/PurchaseOrder", textXML, poAction, body)
		if r.status != http.StatusOK {
			t.Fatalf("exchange %d: status %d\n%s", i, r.status, r.body)
		}
		slowest = max(slowest, time.Since(t0))
	}
	return float64(n) / time.Since(start).Seconds(), slowest
}

func TestSleepingWebhookBlacklisted(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	// The webhook holds each delivery until the test releases it (or
	// orchd hangs up): a listener that sleeps.
	held := make(chan struct{})
	var release sync.Once
	var inDelivery atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice orchd hanging up.
		_, _ = io.Copy(io.Discard, r.Body)
		inDelivery.Add(1)
		defer inDelivery.Add(-1)
		select {
		case <-held:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hook.Close)
	t.Cleanup(func() { release.Do(func() { close(held) }) })

	// Exchanges do not wait for the listener: with a budget longer than
	// the test (10m), PO exchanges are answered one after the other while
	// the webhook holds a delivery. Had they waited, the first would hang.
	patient := startOrchd(t, "--deploy", deploy, "--events-webhook", hook.URL, "--events-budget", "10m", "--events-queue", "1024")
	poRate(t, patient.base, 1)
	waitUntil(t, "the webhook to hold a delivery", func() bool { return inDelivery.Load() > 0 })
	const n = 100
	rate, slowest := poRate(t, patient.base, n)
	if inDelivery.Load() == 0 {
		t.Errorf("the webhook's delivery ended during the exchanges: the check did not hold it")
	}
	t.Logf("%d sequential PO exchanges while the webhook held a delivery: %.0f/s (slowest %s)", n, rate, slowest)
	release.Do(func() { close(held) })

	// With a short budget a sleeping listener is blacklisted.
	sleepy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-time.After(time.Minute):
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(sleepy.Close)
	const budget = 200 * time.Millisecond
	o := startOrchd(t, "--deploy", deploy, "--events-webhook", sleepy.URL, "--events-budget", budget.String(), "--events-queue", "1024")
	poRate(t, o.base, 20)
	if !eventually(func() bool { return strings.Contains(o.log(), "event listener blacklisted") }) {
		t.Fatalf("the sleeping webhook was not blacklisted:\n%s", o.log())
	}
	if c := strings.Count(o.log(), "event listener blacklisted"); c != 1 || !strings.Contains(o.log(), "budget of "+budget.String()) {
		t.Errorf("blacklisting logged %d times, or without its cause:\n%s", c, o.log())
	}
	_, metrics := get(t, o.base+"/metrics")
	listener := `listener="webhook:` + sleepy.URL + `"`
	if v := metricValue(t, metrics, `orchd_events_listeners_blacklisted_total{`+listener+`}`); v != "1" {
		t.Errorf("blacklisted metric %s, want 1", v)
	}
	full := metricValue(t, metrics, `orchd_events_dropped_total{`+listener+`,reason="queue_full"}`)
	cut := metricValue(t, metrics, `orchd_events_dropped_total{`+listener+`,reason="blacklisted"}`)
	nf, _ := strconv.ParseFloat(full, 64)
	nc, _ := strconv.ParseFloat(cut, 64)
	if nf+nc == 0 {
		t.Errorf("no events counted as dropped (queue_full %s, blacklisted %s)", full, cut)
	}
}
