package process

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// TestAdoptOutbox: two engines share one store, as two orchd nodes
// share etcd. The first writes an outbox message it cannot deliver and
// stops; the second, started before the message existed, adopts it and
// delivers it once, however often it is asked to adopt.
func TestAdoptOutbox(t *testing.T) {
	st, err := persist.Open(filepath.Join(t.TempDir(), "orchd.db"), persist.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	up := &flakyPartner{fail: 1, ch: make(chan struct{}, 1)}
	e2 := NewEngine(Options{Store: st, Partners: up.bind, OutboxRetry: 50 * time.Millisecond})
	if err := e2.Deploy(persistentOneWay(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := e2.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer e2.Close()

	p1 := persistentOneWay(t)
	down := &flakyPartner{fail: 1 << 30, ch: make(chan struct{}, 1)}
	ctx1, stop1 := context.WithCancel(context.Background())
	e1 := NewEngine(Options{Store: st, Partners: down.bind, OutboxRetry: time.Hour})
	if err := e1.Deploy(p1); err != nil {
		t.Fatal(err)
	}
	if _, err := e1.Recover(ctx1); err != nil {
		t.Fatal(err)
	}
	runOneWay(t, e1, p1, "AD-1")
	stop1() // e1 "dies" with the message unsent

	tests := []struct {
		name string
		want int
	}{
		{"adopts the dead engine's message", 1},
		{"not twice while it is being sent", 0},
	}
	for _, tc := range tests {
		if n, err := e2.AdoptOutbox(); err != nil || n != tc.want {
			t.Fatalf("%s: AdoptOutbox = %d, %v; want %d", tc.name, n, err, tc.want)
		}
	}
	select {
	case <-up.ch:
	case <-time.After(5 * time.Second):
		t.Fatal("the adopted message was not delivered")
	}
	waitOutboxLen(t, st, 0, "the delivered message was not acknowledged")
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.got) != 1 || up.got[0] != "AD-1" {
		t.Errorf("partner received %v", up.got)
	}
}

// TestAdoptInterrupted: two engines share one store. The first is inside
// a persistent instance's partner call (checkpointed as running before
// it: the instance answered its client first, so the store holds it) when
// it "dies"; the second, asked to adopt, resumes that run from its
// checkpoint, and the instance is no longer running; asked again, it
// finds nothing to resume.
func TestAdoptInterrupted(t *testing.T) {
	st, err := persist.Open(filepath.Join(t.TempDir(), "orchd.db"), persist.Options{MaxBatchDelay: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	block := make(chan struct{})
	t.Cleanup(func() { close(block) }) // after the store is closed: e1's late commit fails
	t.Cleanup(func() { st.Close() })
	called := make(chan struct{}, 1)
	hang := func(*exchange.Endpoint) exchange.Partner {
		return exchange.PartnerFunc(func(context.Context, *exchange.Call) (*exchange.Message, error) {
			called <- struct{}{}
			<-block
			return nil, errors.New("the engine died")
		})
	}
	dir := filepath.Join(bundlesDir, "mgmt-recover")
	deploy := func(e *Engine) *interp.Version {
		procs, err := loadBundle(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Deploy(procs...); err != nil {
			t.Fatal(err)
		}
		return procs[0]
	}
	e1 := NewEngine(Options{Store: st, Partners: hang})
	p1 := deploy(e1)
	if _, err := e1.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	go func() { _ = dispatch(t, e1, p1, testReq("AI-1", "1", "")) }()
	select {
	case <-called:
	case <-time.After(10 * time.Second):
		t.Fatal("the first engine never called its partner")
	}
	running := func() int {
		n := 0
		_ = st.Instances(func(rec *persist.Instance) bool {
			if rec.State == persist.Running {
				n++
			}
			return true
		})
		return n
	}
	if n := running(); n != 1 {
		t.Fatalf("%d instances running while the first engine waits for its partner, want 1", n)
	}

	e2 := NewEngine(Options{Store: st, Partners: func(*exchange.Endpoint) exchange.Partner {
		return exchange.PartnerFunc(func(context.Context, *exchange.Call) (*exchange.Message, error) {
			t.Error("the adopted run sent again the call that may have happened")
			return nil, errors.New("not again")
		})
	}})
	deploy(e2)
	e2.baseCtx = context.Background() // as Recover sets it; e2 has nothing of its own to recover
	if n, err := e2.AdoptInterrupted(func(string) bool { return true }); err != nil || n != 1 {
		t.Fatalf("AdoptInterrupted = %d, %v; want 1", n, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for running() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the adopted run did not go on: the instance is still running")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n, err := e2.AdoptInterrupted(func(string) bool { return true }); err != nil || n != 0 {
		t.Errorf("second AdoptInterrupted = %d, %v; want 0", n, err)
	}
	if n, err := e2.AdoptInterrupted(func(string) bool { return false }); err != nil || n != 0 {
		t.Errorf("AdoptInterrupted of no one's = %d, %v; want 0", n, err)
	}
}
