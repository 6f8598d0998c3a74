package process

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
)

// persistentOneWay is the rt-oneway fixture made persistent.
func persistentOneWay(t *testing.T) *Process {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "rt-oneway")
	copyDir(t, filepath.Join(bundlesDir, "rt-oneway"), dir)
	dd := filepath.Join(dir, "deploy.xml")
	b, err := os.ReadFile(dd)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dd, []byte(strings.Replace(string(b), "<in-memory>true</in-memory>", "<in-memory>false</in-memory>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	procs, err := LoadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	return procs[0]
}

// flakyPartner is a partner that fails while fail is positive and records the
// ids it accepted.
type flakyPartner struct {
	mu   sync.Mutex
	fail int
	got  []string
	ch   chan struct{}
}

func (r *flakyPartner) bind(*exchange.Endpoint) exchange.Partner {
	return exchange.PartnerFunc(func(_ context.Context, c *exchange.Call) (*exchange.Message, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.fail > 0 {
			r.fail--
			return nil, errors.New("partner down")
		}
		r.got = append(r.got, childText(c.Input.Part("payload"), "id"))
		select {
		case r.ch <- struct{}{}:
		default:
		}
		return nil, nil
	})
}

func runOneWay(t *testing.T, e *Engine, p *Process, id string) {
	t.Helper()
	r := dispatch(t, e, p, testReq(id, "1", ""))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.out == nil || childText(r.out.Part("payload"), "a") != "sent" {
		t.Fatalf("reply: %v", r.out)
	}
}

func TestReliableOutbox(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orchd.db")
	st, err := persist.Open(path, persist.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := persistentOneWay(t)

	// The partner is down: the exchange is answered anyway (the request
	// is in the outbox, committed), and the sender keeps trying.
	down := &flakyPartner{fail: 1 << 30, ch: make(chan struct{}, 1)}
	ctx1, stop1 := context.WithCancel(context.Background())
	e1 := NewEngine(Options{Store: st, Partners: down.bind, OutboxRetry: 5 * time.Millisecond})
	if err := e1.Deploy(p); err != nil {
		t.Fatal(err)
	}
	if _, err := e1.Recover(ctx1); err != nil {
		t.Fatal(err)
	}
	runOneWay(t, e1, p, "OB-1")
	n := 0
	_ = st.Outbox(func(persist.OutboxMessage) bool { n++; return true })
	if n != 1 {
		t.Fatalf("outbox holds %d messages, want 1", n)
	}
	stop1()

	// A restart with the partner back (and failing twice first) delivers
	// it from the outbox, then acknowledges it.
	p2 := persistentOneWay(t)
	up := &flakyPartner{fail: 2, ch: make(chan struct{}, 1)}
	e2 := NewEngine(Options{Store: st, Partners: up.bind, OutboxRetry: 5 * time.Millisecond})
	if err := e2.Deploy(p2); err != nil {
		t.Fatal(err)
	}
	rec, err := e2.Recover(context.Background())
	if err != nil || rec.Outbox != 1 {
		t.Fatalf("recover: %+v %v", rec, err)
	}
	select {
	case <-up.ch:
	case <-time.After(5 * time.Second):
		t.Fatal("the outbox message was not delivered")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		n = 0
		_ = st.Outbox(func(persist.OutboxMessage) bool { n++; return true })
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the delivered message was not acknowledged")
		}
		time.Sleep(5 * time.Millisecond)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.got) != 1 || up.got[0] != "OB-1" {
		t.Errorf("partner received %v", up.got)
	}
	if len(down.got) != 0 {
		t.Errorf("the failing partner accepted %v", down.got)
	}
	st.Close()
}
