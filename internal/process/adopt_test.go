package process

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/persist"
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
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := 0
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
	if len(up.got) != 1 || up.got[0] != "AD-1" {
		t.Errorf("partner received %v", up.got)
	}
}
