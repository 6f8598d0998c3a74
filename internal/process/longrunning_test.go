package process

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// loadInMemory loads a copy of the bundle in src whose deploy.xml says
// in-memory.
func loadInMemory(t *testing.T, src string) []*interp.Version {
	t.Helper()
	dir := filepath.Join(t.TempDir(), filepath.Base(src))
	copyDir(t, src, dir)
	dd := filepath.Join(dir, "deploy.xml")
	b, err := os.ReadFile(dd)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dd, []byte(strings.Replace(string(b), "<in-memory>false</in-memory>", "<in-memory>true</in-memory>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	procs, err := loadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	return procs
}

// approvalInMemory loads the order-approval example as an in-memory
// process (the persistent one is exercised end to end in cmd/orchd).
func approvalInMemory(t *testing.T) (*Engine, *interp.Version) {
	t.Helper()
	procs := loadInMemory(t, "../../deploy/order-approval")
	// A decision no instance waits for is held this long (held.go) before
	// its client hears so.
	e := NewEngine(Options{MessageHold: 200 * time.Millisecond})
	if err := e.Deploy(procs...); err != nil {
		t.Fatal(err)
	}
	return e, procs[0]
}

func approvalCall(t *testing.T, e *Engine, p *interp.Version, op string, fields map[string]string) (status string, err error) {
	t.Helper()
	ep := p.Endpoints[0]
	o := opNamed(ep, op)
	root := map[string]string{"requestApproval": "approvalRequest", "decide": "decision"}[op]
	el := etree.NewElement("appr:" + root)
	el.CreateAttr("xmlns:appr", "urn:example:approval")
	for _, k := range []string{"requestId", "amount", "requester", "timeout", "approved", "approver"} {
		if v, ok := fields[k]; ok {
			el.CreateElement("appr:" + k).SetText(v)
		}
	}
	in := exchange.NewMessage(o.Input.Name)
	in.Parts["payload"] = el
	var out *exchange.Message
	ex := &exchange.Exchange{Endpoint: ep, Operation: o, Input: in, Respond: func(m *exchange.Message, _ *exchange.Fault) { out = m }}
	err = e.Dispatch(context.Background(), ex)
	if out != nil {
		status = childText(out.Part("payload"), "status")
		if id := childText(out.Part("payload"), "requestId"); id != fields["requestId"] {
			t.Errorf("reply requestId %q, want %q", id, fields["requestId"])
		}
	}
	return status, err
}

func TestLongRunningCorrelation(t *testing.T) {
	e, p := approvalInMemory(t)
	for _, id := range []string{"A-1", "A-2", "A-3"} {
		st, err := approvalCall(t, e, p, "requestApproval", map[string]string{"requestId": id, "amount": "10", "requester": "ann"})
		if err != nil || st != "PENDING" {
			t.Fatalf("request %s: status %q err %v", id, st, err)
		}
	}
	// Decisions reach the instance their requestId names, in any order.
	for _, tc := range []struct{ id, approved, want string }{{"A-2", "true", "APPROVED"}, {"A-1", "false", "REJECTED"}, {"A-3", "1", "APPROVED"}} {
		st, err := approvalCall(t, e, p, "decide", map[string]string{"requestId": tc.id, "approved": tc.approved, "approver": "bob"})
		if err != nil || st != tc.want {
			t.Errorf("decide %s: status %q err %v, want %s", tc.id, st, err, tc.want)
		}
	}
	// A decided request's instance is gone: a second decision finds none.
	_, err := approvalCall(t, e, p, "decide", map[string]string{"requestId": "A-2", "approved": "true", "approver": "bob"})
	if err == nil || exchange.KindOf(err) != exchange.KindClient || !strings.Contains(err.Error(), "byRequest=A-2") {
		t.Errorf("second decision: %v, want a client error naming the correlation", err)
	}
	// Decided instances are gone from the registry: only A-… requests
	// still waiting remain (none).
	e.reg.mu.Lock()
	live, routes, held := len(e.reg.live), len(e.reg.routes), len(e.reg.held)
	e.reg.mu.Unlock()
	if live != 0 || routes != 0 || held != 0 {
		t.Errorf("after all decisions: %d live instances, %d routes, %d held messages, want 0", live, routes, held)
	}
	// Creating the same correlation twice is allowed (a new instance).
	if st, err := approvalCall(t, e, p, "requestApproval", map[string]string{"requestId": "A-9", "amount": "1", "requester": "x"}); err != nil || st != "PENDING" {
		t.Errorf("request A-9: %q %v", st, err)
	}
}

func TestLongRunningTimeout(t *testing.T) {
	e, p := approvalInMemory(t)
	st, err := approvalCall(t, e, p, "requestApproval", map[string]string{"requestId": "T-1", "amount": "10", "requester": "ann", "timeout": "PT0.2S"})
	if err != nil || st != "PENDING" {
		t.Fatalf("request: %q %v", st, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.reg.mu.Lock()
		n := len(e.reg.live)
		e.reg.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the alarm did not end the instance")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := approvalCall(t, e, p, "decide", map[string]string{"requestId": "T-1", "approved": "true", "approver": "bob"}); err == nil {
		t.Errorf("decision after expiry was accepted")
	}
}

// A <wait> before the reply: the request waits for it inline and gets its
// reply, for an in-memory and a persistent process alike.
func TestWaitBeforeReply(t *testing.T) {
	for _, persistent := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "rt-wait")
		copyDir(t, filepath.Join(bundlesDir, "rt-wait"), dir)
		opts := Options{}
		if persistent {
			dd := filepath.Join(dir, "deploy.xml")
			b, _ := os.ReadFile(dd)
			if err := os.WriteFile(dd, []byte(strings.Replace(string(b), "<in-memory>true</in-memory>", "<in-memory>false</in-memory>", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			st, err := persist.Open(filepath.Join(t.TempDir(), "orchd.db"), persist.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			opts.Store = st
		}
		procs, err := loadBundle(dir)
		if err != nil {
			t.Fatal(err)
		}
		e := NewEngine(opts)
		if err := e.Deploy(procs...); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		r := dispatch(t, e, procs[0], testReq("W-1", "1", ""))
		if r.err != nil || r.out == nil || childText(r.out.Part("payload"), "a") != "waited" {
			t.Fatalf("persistent=%v: reply %v, err %v", persistent, r.out, r.err)
		}
		if d := time.Since(start); d < 200*time.Millisecond {
			t.Errorf("persistent=%v: answered after %v, before the wait ended", persistent, d)
		}
		if persistent {
			// Only the end's: the instance, new and unanswered, is not
			// checkpointed before its inline wait (waitInline).
			if n := opts.Store.(*persist.Store).Stats().Checkpoints; n != 1 {
				t.Errorf("persistent wait wrote %d checkpoints, want 1 (completed)", n)
			}
		}
	}
}

// A second request whose correlation value a waiting persistent instance
// holds is refused as the client's doing (a Client fault, not a server
// error), naming no other instance; the first instance still answers.
func TestDuplicateConversationRefused(t *testing.T) {
	e, _, p := retentionEngine(t, Options{}, "")
	req := map[string]string{"requestId": "dup", "amount": "1", "requester": "ann"}
	if st, err := approvalCall(t, e, p, "requestApproval", req); err != nil || st != "PENDING" {
		t.Fatalf("first request: %q %v", st, err)
	}
	st, err := approvalCall(t, e, p, "requestApproval", req)
	if err == nil || exchange.KindOf(err) != exchange.KindClient || !strings.Contains(err.Error(), "already belongs to another conversation") || st != "" {
		t.Fatalf("second request: %q %v (kind %v), want a client error naming the conflict and no reply", st, err, exchange.KindOf(err))
	}
	if st, err := approvalCall(t, e, p, "decide", map[string]string{"requestId": "dup", "approved": "true", "approver": "bob"}); err != nil || st != "APPROVED" {
		t.Fatalf("decide: %q %v", st, err)
	}
}
