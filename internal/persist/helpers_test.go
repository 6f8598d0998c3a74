package persist

import (
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
	rep := VerifyReport{States: map[State]int{}}
	verifyTxBuckets(tx, &rep)
	if rep.NProblems > 0 {
		return fmt.Errorf("%d inconsistencies: %v", rep.NProblems, rep.Problems)
	}
	return nil
}
