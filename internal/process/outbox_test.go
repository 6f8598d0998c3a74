package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// persistentOneWay is the rt-oneway fixture made persistent.
func persistentOneWay(t *testing.T) *interp.Version {
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
	procs, err := loadBundle(dir)
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

func runOneWay(t *testing.T, e *Engine, p *interp.Version, id string) {
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
	waitOutboxLen(t, st, 0, "the delivered message was not acknowledged")
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

// TestDamagedOutbox: a damaged outbox record (the record, or only its
// payload) is kept and not sent, and neither keeps the engine from
// recovering and sending the other messages.
func TestDamagedOutbox(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orchd.db")
	st, err := persist.Open(path, persist.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := persistentOneWay(t)
	down := &flakyPartner{fail: 1 << 30, ch: make(chan struct{}, 1)}
	ctx1, stop1 := context.WithCancel(context.Background())
	e1 := NewEngine(Options{Store: st, Partners: down.bind, OutboxRetry: time.Hour})
	if err := e1.Deploy(p); err != nil {
		t.Fatal(err)
	}
	if _, err := e1.Recover(ctx1); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"OB-record", "OB-payload", "OB-good"} {
		runOneWay(t, e1, p, id)
	}
	stop1()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// Damage the first record whole and the second one's payload (its
	// last bytes: the end of the serialized part).
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	var seqs [][]byte
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("outbox"))
		_ = b.ForEach(func(k, _ []byte) error { seqs = append(seqs, bytes.Clone(k)); return nil })
		if len(seqs) != 3 {
			return fmt.Errorf("outbox holds %d records, want 3", len(seqs))
		}
		if err := b.Put(seqs[0], []byte{0xff}); err != nil {
			return err
		}
		v := bytes.Clone(b.Get(seqs[1]))
		return b.Put(seqs[1], append(v[:len(v)-12], "<broken"...))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	st, err = persist.Open(path, persist.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	up := &flakyPartner{ch: make(chan struct{}, 4)}
	e2 := NewEngine(Options{Store: st, Partners: up.bind, OutboxRetry: 5 * time.Millisecond})
	if err := e2.Deploy(persistentOneWay(t)); err != nil {
		t.Fatal(err)
	}
	rec, err := e2.Recover(context.Background())
	if err != nil || rec.DamagedOutbox != 2 || rec.Outbox != 1 {
		t.Fatalf("recover: %+v, %v; want 2 damaged records and 1 message to send", rec, err)
	}
	select {
	case <-up.ch:
	case <-time.After(5 * time.Second):
		t.Fatal("the intact message was not delivered")
	}
	// The intact message is acknowledged; both damaged ones stay.
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []uint64
		var damaged int
		_ = st.Outbox(func(m persist.OutboxMessage) bool {
			left = append(left, m.Seq)
			if m.Err != nil {
				damaged++
			}
			return true
		})
		if len(left) == 2 && damaged == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("outbox holds %v (%d damaged), want the two damaged records", left, damaged)
		}
		time.Sleep(5 * time.Millisecond)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.got) != 1 || up.got[0] != "OB-good" {
		t.Errorf("partner received %v, want only OB-good", up.got)
	}
	if n, err := e2.AdoptOutbox(); err != nil || n != 0 {
		t.Errorf("AdoptOutbox after recovery: %d started, %v; want 0 (damaged records are not sent)", n, err)
	}
}

// waitOutboxLen waits up to 5 s for st's outbox to hold n messages,
// failing with msg otherwise.
func waitOutboxLen(t *testing.T, st *persist.Store, n int, msg string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		k := 0
		_ = st.Outbox(func(persist.OutboxMessage) bool { k++; return true })
		if k == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the outbox holds %d messages, want %d", msg, k, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
