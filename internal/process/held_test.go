package process

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/exchange"
)

// TestHeldBehindOfferHandedOver forces the interleaving of 48c1108: a
// message B held behind a message A that is being offered (queuedBehind),
// after the instance A was offered to took A and registered under the key
// again, inside that same offer. When the offer ends, B must be handed to
// the instance; before the fix it stayed held until --message-hold
// dropped it (an in-memory one-way message, already acknowledged: lost).
//
// rt-held-race's instance waits for notify in one branch while a call of
// the other branch (slow) is in flight, so the held A reaches it as mail
// (mail.go) and redeliver's offer ends when the run settles its mail, not
// when the run ends. Between taking A and that, the branch replies to
// run, which registers the instance under its key (preRegister), and
// waits for notify again. The test holds the run in the reply's Respond
// while it sends B, and holds slow's answer until B is handed over: the
// run's end (block), which would also release B, cannot come first.
func TestHeldBehindOfferHandedOver(t *testing.T) {
	procs, err := loadBundle(filepath.Join(bundlesDir, "rt-held-race"))
	if err != nil {
		t.Fatal(err)
	}
	p := procs[0]
	release := make(chan struct{}) // slow's answer
	var releaseOnce sync.Once
	unblockSlow := func() { releaseOnce.Do(func() { close(release) }) }
	reported := make(chan string, 1)
	partners := func(*exchange.Endpoint) exchange.Partner {
		return exchange.PartnerFunc(func(ctx context.Context, c *exchange.Call) (*exchange.Message, error) {
			if n := childText(c.Input.Part("payload"), "n"); n == "1" {
				select { // slow: run's own message
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			} else {
				reported <- n // report: the second notify's n
			}
			return partnerAnswer(c)
		})
	}
	// Held messages wait far longer than the test: B is handed over by
	// the end of A's offer or not at all.
	e := NewEngine(Options{Partners: partners, MessageHold: 30 * time.Second})
	if err := e.Deploy(p); err != nil {
		t.Fatal(err)
	}
	endpoint := func(service string) *exchange.Endpoint {
		for _, ep := range p.Endpoints {
			if ep.Service.Local == service {
				return ep
			}
		}
		t.Fatalf("no endpoint for %s", service)
		return nil
	}
	exchangeFor := func(service, op, n string, respond func(*exchange.Message, *exchange.Fault)) *exchange.Exchange {
		ep := endpoint(service)
		o := opNamed(ep, op)
		m := exchange.NewMessage(o.Input.Name)
		m.Parts["payload"] = testReq("H-1", n, "")
		return &exchange.Exchange{Endpoint: ep, Operation: o, Input: m, Respond: respond}
	}
	// state reads the held table and the offers in progress.
	type state struct {
		held     []*exchange.Exchange
		offering int
		live     int
	}
	read := func() state {
		e.reg.mu.Lock()
		defer e.reg.mu.Unlock()
		var s state
		for _, list := range e.reg.held {
			for _, h := range list {
				if !slices.Contains(s.held, h.ex) {
					s.held = append(s.held, h.ex)
				}
			}
		}
		for _, n := range e.reg.offering {
			s.offering += n
		}
		s.live = len(e.reg.live)
		return s
	}
	waitFor := func(what string, cond func(state) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for s := read(); !cond(s); s = read() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 10s (held %d, offers in progress %d, live instances %d)", what, len(s.held), s.offering, s.live)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}

	// A comes before any instance: held, and acknowledged (one-way,
	// in-memory).
	exA := exchangeFor("PartnerService", "notify", "2", nil)
	if err := e.Dispatch(context.Background(), exA); err != nil {
		t.Fatalf("notify A: %v", err)
	}
	if s := read(); len(s.held) != 1 || s.held[0] != exA || s.offering != 0 {
		t.Fatalf("after A: held %d, offers %d; want A held, no offer", len(s.held), s.offering)
	}

	// run creates the instance. Its reply (after it took A) waits in
	// Respond until B is sent.
	replied := make(chan string, 1)
	cont := make(chan struct{})
	var contOnce sync.Once
	resume := func() { contOnce.Do(func() { close(cont) }) }
	t.Cleanup(func() { resume(); unblockSlow() })
	exRun := exchangeFor("TestService", "run", "1", func(m *exchange.Message, f *exchange.Fault) {
		a := "fault"
		if m != nil {
			a = childText(m.Part("payload"), "a")
		}
		replied <- a
		<-cont
	})
	runDone := make(chan error, 1)
	go func() { runDone <- e.Dispatch(context.Background(), exRun) }()
	select {
	case a := <-replied:
		if a != "a=2" {
			t.Fatalf("run's reply %q, want a=2 (A taken)", a)
		}
	case err := <-runDone:
		t.Fatalf("run ended before its reply: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the instance never took A and replied")
	}

	// The instance took A and is registered under H-1 again; A's offer
	// has not ended (its mail is settled later in the run). B is held
	// behind it.
	exB := exchangeFor("PartnerService", "notify", "3", nil)
	if err := e.Dispatch(context.Background(), exB); err != nil {
		t.Fatalf("notify B: %v", err)
	}
	if s := read(); len(s.held) != 1 || s.held[0] != exB || s.offering == 0 {
		t.Fatalf("after B: held %d (B: %v), offers %d; want B held behind A's offer", len(s.held), len(s.held) == 1 && s.held[0] == exB, s.offering)
	}
	resume()

	// The run waits for notify (mail open) while slow is in flight; A's
	// offer ends and must hand B over, with no new registration to do it.
	waitFor("B handed over when A's offer ended, while the instance waits for it", func(s state) bool { return len(s.held) == 0 })

	unblockSlow()
	select {
	case n := <-reported:
		if n != "3" {
			t.Errorf("the instance took notify n=%s second, want 3 (B)", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the instance never took B")
	}
	select {
	case err := <-runDone:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run's Dispatch never returned")
	}
	waitFor("the instance ended, nothing held or offered", func(s state) bool {
		return len(s.held) == 0 && s.offering == 0 && s.live == 0
	})
}
