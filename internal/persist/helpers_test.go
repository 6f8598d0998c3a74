package persist

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// testStore is a Store on a real file in t.TempDir(), in the spirit of
// bbolt's internal/btesting: at cleanup it is closed, and the file is
// checked (bbolt's own check plus the store's invariants).
type testStore struct {
	*Store
	t    testing.TB
	opts Options
}

func newTestStore(t testing.TB, opts Options) *testStore {
	t.Helper()
	path := filepath.Join(t.TempDir(), "orchd.db")
	st, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	ts := &testStore{Store: st, t: t, opts: opts}
	t.Cleanup(func() {
		if err := ts.Store.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		checkFile(t, path)
	})
	return ts
}

// reopen closes the store and opens the same file again, as a restart does.
func (ts *testStore) reopen() {
	ts.t.Helper()
	if err := ts.Store.Close(); err != nil {
		ts.t.Fatalf("Close: %v", err)
	}
	checkFile(ts.t, ts.path)
	st, err := Open(ts.path, ts.opts)
	if err != nil {
		ts.t.Fatalf("reopen: %v", err)
	}
	ts.Store = st
}

func (ts *testStore) mustCommit(cps ...*Checkpoint) {
	ts.t.Helper()
	if err := ts.Commit(cps...); err != nil {
		ts.t.Fatalf("Commit: %v", err)
	}
}

// checkFile opens a closed data file with bbolt directly and verifies bbolt's
// page consistency and the store's cross-bucket invariants.
func checkFile(t testing.TB, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("check %s: %v", path, err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return fmt.Errorf("bbolt check: %w", err)
		}
		if err := checkInvariants(tx); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		t.Errorf("check %s: %v", path, err)
	}
}

func checkInvariants(tx *bolt.Tx) error {
	if err := verifyTx(tx); err != nil {
		return err
	}
	insts := tx.Bucket([]byte(bucketInstances))
	routes := tx.Bucket([]byte(bucketRoutes))
	timers := tx.Bucket([]byte(bucketTimers))
	index := tx.Bucket([]byte(bucketIndex))
	owned := func(k []byte) ([]byte, error) {
		i := bytes.IndexByte(k, sep)
		if i < 1 {
			return nil, fmt.Errorf("key %q has no instance prefix", k)
		}
		if insts.Get(k[:i]) == nil {
			return nil, fmt.Errorf("key %q belongs to missing instance %q", k, k[:i])
		}
		return k[i+1:], nil
	}
	if err := tx.Bucket([]byte(bucketVars)).ForEach(func(k, _ []byte) error {
		_, err := owned(k)
		return err
	}); err != nil {
		return fmt.Errorf("vars: %w", err)
	}
	if err := index.ForEach(func(k, _ []byte) error {
		rest, err := owned(k)
		if err != nil {
			return err
		}
		id := k[:bytes.IndexByte(k, sep)]
		switch rest[0] {
		case kindRoute:
			if v := routes.Get(rest[1:]); !bytes.Equal(v, id) {
				return fmt.Errorf("index route %q -> %q, routes says %q", rest[1:], id, v)
			}
		case kindTimer:
			if timers.Get(rest[1:]) == nil {
				return fmt.Errorf("index timer %q has no timer", rest[1:])
			}
		default:
			return fmt.Errorf("index kind %q", rest[0])
		}
		return nil
	}); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	if err := routes.ForEach(func(k, v []byte) error {
		if index.Get(indexKey(string(v), kindRoute, k)) == nil {
			return fmt.Errorf("route %q -> %q not indexed", k, v)
		}
		return nil
	}); err != nil {
		return err
	}
	return timers.ForEach(func(k, _ []byte) error {
		t, err := decodeTimerKey(k)
		if err != nil {
			return err
		}
		if insts.Get([]byte(t.InstanceID)) == nil {
			return fmt.Errorf("timer %q of missing instance", k)
		}
		if index.Get(indexKey(t.InstanceID, kindTimer, k)) == nil {
			return fmt.Errorf("timer %q not indexed", k)
		}
		return nil
	})
}
