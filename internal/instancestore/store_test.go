package instancestore

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/persist"
)

// The tests open real bbolt files in t.TempDir.

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := persist.Open(path, persist.Options{ReadOnly: true, LockTimeout: 50 * time.Millisecond})
	if errors.Is(err, persist.ErrLocked) {
		return true // held by the store under test
	}
	return err == nil
}

func TestLazyIsEmptyUntilOpened(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	opened := 0
	l := NewLazy(Config{Dir: dir}, nil, func(Store) { opened++ })
	defer l.Close()
	if _, _, err := l.Instance("i1"); !errors.Is(err, persist.ErrNotFound) {
		t.Fatalf("Instance before Open: %v, want persist.ErrNotFound", err)
	}
	if id, ok, err := l.Route("k"); id != "" || ok || err != nil {
		t.Fatalf("Route before Open: %q %v %v", id, ok, err)
	}
	n := 0
	count := func(*persist.Instance) bool { n++; return true }
	if err := l.Instances(count); err != nil || n != 0 {
		t.Fatalf("Instances before Open: %d, %v", n, err)
	}
	if res, err := l.ScanInstances(persist.Scan{Limit: 10}, func(*persist.InstanceView) bool { n++; return true }); err != nil || n != 0 || res != (persist.ScanResult{}) {
		t.Fatalf("ScanInstances before Open: %+v, %d, %v", res, n, err)
	}
	if err := l.Timers(func(persist.Timer) bool { n++; return true }); err != nil || n != 0 {
		t.Fatalf("Timers before Open: %d, %v", n, err)
	}
	if err := l.Outbox(func(persist.OutboxMessage) bool { n++; return true }); err != nil || n != 0 {
		t.Fatalf("Outbox before Open: %d, %v", n, err)
	}
	if ts, err := l.InstanceTimers("i1"); ts != nil || err != nil {
		t.Fatalf("InstanceTimers before Open: %v, %v", ts, err)
	}
	if err := l.AckOutbox(1); err != nil {
		t.Fatalf("AckOutbox before Open: %v", err)
	}
	if l.Stats() != (persist.Stats{}) || l.Opened() != nil || opened != 0 {
		t.Fatal("the store was opened by a read")
	}
	if exists(t, filepath.Join(dir, File)) {
		t.Fatal("a read created the data file")
	}

	st, err := l.Open()
	if err != nil {
		t.Fatal(err)
	}
	again, err := l.Open()
	if err != nil || again != st || l.Opened() != st || opened != 1 {
		t.Fatalf("a second Open: %v, same store %v, onOpen called %d times", err, again == st, opened)
	}
	if !exists(t, filepath.Join(dir, File)) {
		t.Fatal("no data file after Open")
	}
}

func TestLazyCommitOpensAndPersists(t *testing.T) {
	dir := t.TempDir()
	l := NewLazy(Config{Dir: dir}, nil, nil)
	cp := &persist.Checkpoint{Instance: persist.Instance{ID: persist.NewID(), Process: "{urn:p}P", State: persist.Waiting,
		Created: time.Now(), Updated: time.Now()}}
	if err := l.Commit(cp); err != nil {
		t.Fatal(err)
	}
	if l.Opened() == nil {
		t.Fatal("Commit did not open the store")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Open(); err == nil {
		t.Fatal("Open after Close succeeded")
	}
	// The instance is in the file.
	st, err := Open(Config{Dir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	in, _, err := st.Instance(cp.Instance.ID)
	if err != nil || in.Process != "{urn:p}P" {
		t.Fatalf("stored instance %+v, %v", in, err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	held, err := Open(Config{Dir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
		is   error
	}{
		{"unknown kind", Config{Kind: "sqlite", Dir: dir}, `--store "sqlite": want bbolt or etcd`, nil},
		{"etcd without endpoints", Config{Kind: Etcd, Endpoints: " , "}, "--store etcd needs --etcd-endpoints", nil},
		{"file held by another store", Config{Dir: dir}, "open instance store", persist.ErrLocked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := NewLazy(tc.cfg, nil, nil).Open()
			if err == nil {
				st.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("error %v, want %q (%v)", err, tc.want, tc.is)
			}
		})
	}
}
