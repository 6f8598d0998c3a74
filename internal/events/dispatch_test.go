package events

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// recorder is a listener that keeps what it gets; gate, when not nil,
// holds each delivery until it is closed; sleep makes each delivery that
// long, ignoring ctx (a listener that does not cooperate).
type recorder struct {
	name  string
	gate  chan struct{}
	sleep time.Duration
	calls atomic.Int32
	mu    sync.Mutex
	got   []Event
}

func (r *recorder) Name() string { return r.name }

func (r *recorder) Deliver(_ context.Context, batch []Event) error {
	r.calls.Add(1)
	if r.gate != nil {
		<-r.gate
	}
	time.Sleep(r.sleep)
	r.mu.Lock()
	r.got = append(r.got, batch...)
	r.mu.Unlock()
	return nil
}

func (r *recorder) events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.got...)
}

func closeOK(t *testing.T, d *Dispatcher) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestQueueFullDropsAndCounts(t *testing.T) {
	r := &recorder{name: "held", gate: make(chan struct{})}
	d, err := NewDispatcher(Options{Queue: 4, Budget: time.Minute}, r)
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	// Emit must not block: the emits end while the listener is stuck
	// (the gate opens only below). The bound is for a hang, not a speed.
	emitted := make(chan struct{})
	go func() {
		defer close(emitted)
		for i := 0; i < n; i++ {
			d.Emit(Event{Kind: ActivityStarted, Name: "a"})
		}
	}()
	select {
	case <-emitted:
	case <-time.After(30 * time.Second):
		t.Fatal("100 emits to a stuck listener did not return: Emit blocks")
	}
	dropped := testutil.ToFloat64(d.sinks[0].full)
	// The listener's goroutine holds the batch it took before it got
	// stuck (at most the 5 queued by then), and its queue 4 more.
	if dropped < n-9 || dropped >= n {
		t.Errorf("dropped = %v, want %d to %d (queue of 4)", dropped, n-9, n-4)
	}
	close(r.gate)
	closeOK(t, d)
	if got := len(r.events()); float64(got)+dropped != n {
		t.Errorf("delivered %d + dropped %v != emitted %d", got, dropped, n)
	}
	if e := testutil.ToFloat64(d.emitted); e != n {
		t.Errorf("emitted = %v, want %d", e, n)
	}
}

func TestSlowListenerBlacklistedWithinBudget(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	// The slow listener's delivery hangs until the end of the test (it
	// ignores its context): it is blacklisted while it hangs, by its
	// budget, and Close does not wait for it. Order, not speed, is
	// asserted; the bounds are for a hang.
	slow := &recorder{name: "sleepy", gate: make(chan struct{})}
	defer close(slow.gate)
	fast := &recorder{name: "fast"}
	const budget = 50 * time.Millisecond
	d, err := NewDispatcher(Options{Logger: log, Budget: budget}, slow, fast)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	d.Emit(Event{Kind: InstanceCreated, Instance: "1"})
	for d.Blacklisted("sleepy") == nil {
		if time.Since(start) > 30*time.Second {
			t.Fatal("the hanging listener was not blacklisted (budget 50ms)")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if el := time.Since(start); el < budget {
		t.Errorf("blacklisted after %s, before its budget %s ran out", el, budget)
	}
	for i := 0; i < 10; i++ {
		d.Emit(Event{Kind: InstanceCompleted, Instance: "1"})
	}
	closeOK(t, d) // returns (within closeOK's bound) while the delivery still hangs
	if c := slow.calls.Load(); c != 1 {
		t.Errorf("blacklisted listener got %d deliveries, want 1", c)
	}
	if got := len(fast.events()); got != 11 {
		t.Errorf("the other listener got %d events, want 11", got)
	}
	if n := testutil.ToFloat64(d.sinks[0].black); n != 1 {
		t.Errorf("blacklisted metric = %v, want 1", n)
	}
	if n := testutil.ToFloat64(d.sinks[0].cutDrops); n != 10 {
		t.Errorf("dropped (blacklisted) = %v, want 10", n)
	}
	if n := strings.Count(logs.String(), "blacklisted"); n != 1 {
		t.Errorf("logged %d times, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "budget of 50ms") || !strings.Contains(logs.String(), "listener=sleepy") {
		t.Errorf("log does not say which listener and why:\n%s", logs.String())
	}
}

func TestDuplicateListenerNames(t *testing.T) {
	if _, err := NewDispatcher(Options{}, &recorder{name: "x"}, &recorder{name: "x"}); err == nil {
		t.Fatal("two listeners with one name were accepted")
	}
}

func TestFileListenerWritesJSONLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDispatcher(Options{}, f)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	want := []Event{
		{Kind: InstanceCreated, Time: at, Process: "{urn:p}P", Instance: "i1"},
		{Kind: VariableChanged, Time: at, Process: "{urn:p}P", Instance: "i1", Variable: "v", Activity: "assign", Position: "p.bpel:12"},
		{Kind: InstanceFaulted, Time: at, Process: "{urn:p}P", Instance: "i1", Fault: "{urn:f}bad", Duration: time.Millisecond},
	}
	for _, ev := range want {
		d.Emit(ev)
	}
	closeOK(t, d)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	var got []Event
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, ev)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(got), len(want), data)
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) {
			t.Errorf("line %d time %v, want %v", i, got[i].Time, want[i].Time)
		}
		got[i].Time = want[i].Time
		if got[i] != want[i] {
			t.Errorf("line %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if !strings.Contains(string(data), `"kind":"variableChanged"`) {
		t.Errorf("kinds are not written by name:\n%s", data)
	}
}

func TestWebhookRetriesThenDelivers(t *testing.T) {
	var hits atomic.Int32
	var got []Event
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Errorf("body: %v", err)
		}
	}))
	defer srv.Close()
	w := &Webhook{URL: srv.URL, Backoff: time.Millisecond}
	if err := w.Deliver(context.Background(), []Event{{Kind: PartnerInvoked, Partner: "crm"}}); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 3 || len(got) != 1 || got[0].Partner != "crm" {
		t.Errorf("hits %d, got %+v", hits.Load(), got)
	}
}

func TestWebhookClientErrorNotRetried(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		http.Error(w, "no", http.StatusBadRequest)
	}))
	defer srv.Close()
	w := &Webhook{URL: srv.URL, Backoff: time.Millisecond}
	err := w.Deliver(context.Background(), []Event{{Kind: PartnerInvoked}})
	if err == nil || !strings.Contains(err.Error(), "400") || hits.Load() != 1 {
		t.Errorf("err %v after %d hits, want a 400 error after 1", err, hits.Load())
	}
}

func TestParseCategory(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Category
		ok   bool
	}{
		{"instanceLifecycle", InstanceLifecycle, true},
		{"ActivityLifecycle", ActivityLifecycle, true},
		{"dataHandling", DataHandling, true},
		{"correlation", Correlation, true},
		{"partnerInteraction", PartnerInteraction, true},
		{"humanTask", HumanTask, true},
		{"bogus", 0, false},
	} {
		got, err := ParseCategory(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("ParseCategory(%q) = %v, %v", tc.in, got, err)
		}
	}
	for k := InstanceCreated; k < kindEnd; k++ {
		if k.Category() == 0 {
			t.Errorf("%s has no category", k)
		}
		var back Kind
		if err := back.UnmarshalText([]byte(k.String())); err != nil || back != k {
			t.Errorf("%s does not read back: %v", k, err)
		}
	}
}
