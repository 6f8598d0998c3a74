package persist

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestVerify damages a consistent file one way per row, behind the store's
// back, and checks that Verify (and Check) names the damage.
func TestVerify(t *testing.T) {
	due := time.Unix(1700000100, 0)
	waitTimer := timerKey(&Timer{Due: due, InstanceID: "w"})
	tests := []struct {
		name   string
		damage func(b *bucketSet) error
		want   string // in the error; "" = consistent
	}{
		{"consistent", func(*bucketSet) error { return nil }, ""},
		{"route to missing instance", func(b *bucketSet) error {
			return b.routes.Put([]byte("k-gone"), []byte("gone"))
		}, `route "k-gone" points to missing instance "gone"`},
		{"route to completed instance", func(b *bucketSet) error {
			if err := b.routes.Put([]byte("k-done"), []byte("c")); err != nil {
				return err
			}
			return b.index.Put(indexKey("c", kindRoute, []byte("k-done")), []byte{})
		}, `route "k-done" points to instance "c" in state completed`},
		{"route not indexed", func(b *bucketSet) error {
			return b.index.Delete(indexKey("w", kindRoute, []byte("k-w")))
		}, `route "k-w" of instance "w" is not in its index`},
		{"timer of missing instance", func(b *bucketSet) error {
			return b.timers.Put(timerKey(&Timer{Due: due, InstanceID: "gone"}), []byte{})
		}, `points to missing instance "gone"`},
		{"timer of completed instance", func(b *bucketSet) error {
			k := timerKey(&Timer{Due: due, InstanceID: "c"})
			if err := b.timers.Put(k, []byte{}); err != nil {
				return err
			}
			return b.index.Put(indexKey("c", kindTimer, k), []byte{})
		}, `of instance "c" in state completed`},
		{"index lists a removed timer", func(b *bucketSet) error {
			return b.timers.Delete(waitTimer)
		}, `index of instance "w" lists a timer that does not exist`},
		{"index lists a route of another instance", func(b *bucketSet) error {
			return b.routes.Put([]byte("k-w"), []byte("c"))
		}, `index of instance "w" lists route "k-w", bound to "c"`},
		{"variable of missing instance", func(b *bucketSet) error {
			return b.vars.Put(varKey("gone", 1), []byte("<v/>"))
		}, `belongs to missing instance "gone"`},
		{"undecodable instance", func(b *bucketSet) error {
			return b.instances.Put([]byte("bad"), []byte{99})
		}, `unknown record format`},
		{"undecodable outbox message", func(b *bucketSet) error {
			return b.outbox.Put([]byte{0, 0, 0, 0, 0, 0, 0, 9}, []byte{1})
		}, `outbox 9`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "orchd.db")
			st, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			w := inst("w", Waiting)
			if err := st.Commit(
				&Checkpoint{Instance: w, Vars: map[int][]byte{1: []byte("<v/>")},
					AddRoutes: []Route{{Key: "k-w"}}, AddTimers: []Timer{{Due: due}},
					Outbox: []OutboxMessage{{Partner: "p", Operation: "op", Payload: []byte("x")}}},
				&Checkpoint{Instance: inst("c", Completed)},
			); err != nil {
				t.Fatal(err)
			}
			if err := st.db.Update(func(tx *bolt.Tx) error { return tt.damage(buckets(tx)) }); err != nil {
				t.Fatal(err)
			}
			rep, err := st.Verify()
			if cerr := st.Close(); cerr != nil {
				t.Fatal(cerr)
			}
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if rep.Instances != 2 || rep.States[Waiting] != 1 || rep.States[Completed] != 1 ||
					rep.Routes != 1 || rep.Timers != 1 || rep.Index != 2 || rep.Vars != 1 || rep.Outbox != 1 {
					t.Errorf("report: %s", rep)
				}
				if _, err := Check(path); err != nil {
					t.Errorf("Check: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Verify = %v, want ErrCorrupt naming %q", err, tt.want)
			}
			if rep.NProblems == 0 || !strings.Contains(strings.Join(rep.Problems, "\n"), tt.want) {
				t.Errorf("report %s: %v", rep, rep.Problems)
			}
		})
	}
}

// TestReadOnly opens a file read-only: it reads, refuses writes, and two
// read-only opens share it.
func TestReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orchd.db")
	if _, err := Open(path, Options{ReadOnly: true}); err == nil {
		t.Fatal("read-only Open of a missing file succeeded")
	}
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(&Checkpoint{Instance: inst("a", Waiting)}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	ro2, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("second read-only Open: %v", err)
	}
	defer ro2.Close()
	if _, _, err := ro.Instance("a"); err != nil {
		t.Errorf("read: %v", err)
	}
	if err := ro.Commit(&Checkpoint{Instance: inst("b", Waiting)}); err == nil {
		t.Error("Commit on a read-only store succeeded")
	}
	if rep, err := Check(path); err != nil || rep.Instances != 1 {
		t.Errorf("Check beside read-only opens: %s %v", rep, err)
	}
}
