package process

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orchd/orchd/internal/exchange"
)

// TestHeldMessagesCapped: with Options.MessageHoldMax messages held, the
// next message that would be held is refused at once (KindUnavailable,
// naming the limit), neither held nor acknowledged, and counted as
// refused; once an instance took a held message there is room again.
// The hold outlasts the test, so only a message taken frees a place.
func TestHeldMessagesCapped(t *testing.T) {
	procs, err := loadBundle(filepath.Join(bundlesDir, "rt-held-race"))
	if err != nil {
		t.Fatal(err)
	}
	p := procs[0]
	reported := make(chan string, 1)
	partners := func(*exchange.Endpoint) exchange.Partner {
		return exchange.PartnerFunc(func(_ context.Context, c *exchange.Call) (*exchange.Message, error) {
			if n := childText(c.Input.Part("payload"), "n"); n != "1" {
				reported <- n // report: the second notify's n
			}
			return partnerAnswer(c)
		})
	}
	const limit = 2
	e := NewEngine(Options{Partners: partners, MessageHold: time.Hour, MessageHoldMax: limit})
	if err := e.Deploy(p); err != nil {
		t.Fatal(err)
	}
	exchangeFor := func(service, op, id, n string) *exchange.Exchange {
		for _, ep := range p.Endpoints {
			if ep.Service.Local == service {
				o := opNamed(ep, op)
				m := exchange.NewMessage(o.Input.Name)
				m.Parts["payload"] = testReq(id, n, "")
				return &exchange.Exchange{Endpoint: ep, Operation: o, Input: m}
			}
		}
		t.Fatalf("no endpoint for %s", service)
		return nil
	}
	notify := func(id, n string) error {
		return e.Dispatch(context.Background(), exchangeFor("PartnerService", "notify", id, n))
	}
	heldNow := func() (count int, keys int) {
		e.reg.mu.Lock()
		defer e.reg.mu.Unlock()
		return e.reg.heldCount, len(e.reg.held)
	}
	refused := func() float64 { return testutil.ToFloat64(p.Metrics.HeldRefused) }

	// Two one-way messages to an in-memory process, no instance yet:
	// held and acknowledged.
	for _, id := range []string{"C-1", "C-2"} {
		if err := notify(id, "2"); err != nil {
			t.Fatalf("notify %s under the limit: %v", id, err)
		}
	}
	if n, k := heldNow(); n != limit || k != limit {
		t.Fatalf("after two held: count %d under %d keys, want %d", n, k, limit)
	}
	// The third is over the limit: refused at once, not held.
	err = notify("C-3", "2")
	if err == nil || exchange.KindOf(err) != exchange.KindUnavailable || !strings.Contains(err.Error(), "limit of 2 held messages") {
		t.Fatalf("notify over the limit: %v (kind %v), want an unavailable error naming the limit of 2", err, exchange.KindOf(err))
	}
	if n, k := heldNow(); n != limit || k != limit {
		t.Errorf("after the refusal: count %d under %d keys, want %d: the refused message was held", n, k, limit)
	}
	if r := refused(); r != 1 {
		t.Errorf("refused held messages = %v, want 1", r)
	}

	// run creates C-1's instance, which takes its held notify (n=2) and
	// replies, then waits for a second notify: one place is free.
	var answer string
	run := exchangeFor("TestService", "run", "C-1", "1")
	run.Respond = func(m *exchange.Message, f *exchange.Fault) {
		if m != nil {
			answer = childText(m.Part("payload"), "a")
		}
	}
	if err := e.Dispatch(context.Background(), run); err != nil || answer != "a=2" {
		t.Fatalf("run C-1: %v, answer %q; want a=2 (the held notify taken)", err, answer)
	}
	// The offer that handed the message over ends on its own goroutine.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		n, _ := heldNow()
		taken := testutil.ToFloat64(p.Metrics.HeldTaken)
		if n == limit-1 && taken == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the instance took a held message: count %d, taken %v; want %d, 1", n, taken, limit-1)
		}
	}
	if err := notify("C-3", "2"); err != nil {
		t.Fatalf("notify C-3 once a place is free: %v", err)
	}
	if err := notify("C-4", "2"); exchange.KindOf(err) != exchange.KindUnavailable {
		t.Fatalf("notify C-4 at the limit again: %v, want refused", err)
	}
	// A message an instance waits for is not held: never refused.
	if err := notify("C-1", "3"); err != nil {
		t.Fatalf("notify C-1, which its instance waits for, at the limit: %v", err)
	}
	select {
	case n := <-reported:
		if n != "3" {
			t.Errorf("the instance reported n=%s, want 3", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the instance never took its second notify")
	}
	if n, _ := heldNow(); n != limit || testutil.ToFloat64(e.metrics.heldNow) != limit {
		t.Errorf("at the end: count %d, gauge %v, want %d (C-2, C-3)", n, testutil.ToFloat64(e.metrics.heldNow), limit)
	}
	if r := refused(); r != 2 {
		t.Errorf("refused held messages = %v, want 2", r)
	}
}
