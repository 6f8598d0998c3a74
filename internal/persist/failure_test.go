package persist

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// openWithin runs Open and fails the test if it panics or takes longer than
// limit.
func openWithin(t *testing.T, path string, opts Options, limit time.Duration) (*Store, error) {
	t.Helper()
	type result struct {
		st  *Store
		err error
		p   any
	}
	ch := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			r.p = recover()
			ch <- r
		}()
		r.st, r.err = Open(path, opts)
	}()
	select {
	case r := <-ch:
		if r.p != nil {
			t.Fatalf("Open panicked: %v", r.p)
		}
		return r.st, r.err
	case <-time.After(limit):
		t.Fatalf("Open did not return within %v", limit)
	}
	return nil, nil
}

func TestLockedSameProcess(t *testing.T) {
	ts := newTestStore(t, Options{NoSync: true})
	start := time.Now()
	st, err := openWithin(t, ts.path, Options{LockTimeout: 200 * time.Millisecond}, 30*time.Second)
	if err == nil {
		st.Close()
		t.Fatal("second Open of a locked file succeeded")
	}
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	want := "data file " + ts.path + " is locked by another process (another orchd?)"
	if err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	// It tried for its LockTimeout before giving up, less bbolt's 50ms
	// retry interval (an order, not a speed: openWithin bounds a hang).
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("gave up after %v, before its 200ms LockTimeout (less bbolt's 50ms retry)", d)
	}
}

func TestLockedOtherProcess(t *testing.T) {
	ts := newTestStore(t, Options{NoSync: true})
	ts.mustCommit(&Checkpoint{Instance: inst("a", Running)})

	// A minute bounds a hang; the child must try for its LockTimeout.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=open", childPathEnv+"="+ts.path)
	start := time.Now()
	out, err := cmd.Output()
	elapsed := time.Since(start)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("child: %v, output %q; want exit status 3", err, out)
	}
	if !strings.Contains(string(out), "is locked by another process (another orchd?)") {
		t.Errorf("child said %q", out)
	}
	// The default LockTimeout is 1s: the child gave up no earlier, less
	// bbolt's 50ms retry interval.
	if elapsed < 950*time.Millisecond {
		t.Errorf("child exited after %v, before the default 1s LockTimeout (less bbolt's 50ms retry)", elapsed)
	}
	t.Logf("second process gave up after %v: %s", elapsed, bytes.TrimSpace(out))

	// And once we let go, the other process gets in.
	ts.Close()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=open", childPathEnv+"="+ts.path)
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "opened") {
		t.Errorf("child after Close: %v, %q", err, out)
	}
}

func TestSchemaTooNew(t *testing.T) {
	ts := newTestStore(t, Options{NoSync: true})
	ts.mustCommit(&Checkpoint{Instance: inst("a", Running)})
	ts.Close()

	db, err := bolt.Open(ts.path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucketMeta)).Put([]byte(schemaKey), binary.BigEndian.AppendUint64(nil, SchemaVersion+1))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(ts.path)

	_, err = openWithin(t, ts.path, Options{}, 5*time.Second)
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("Open = %v, want ErrSchemaTooNew", err)
	}
	if want := "data file schema version 2 is newer than this orchd supports (1)"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if fi2, _ := os.Stat(ts.path); !fi2.ModTime().Equal(fi.ModTime()) || fi2.Size() != fi.Size() {
		t.Error("Open modified a file it refused")
	}
	// Put version 1 back so the cleanup check passes.
	db, _ = bolt.Open(ts.path, 0o600, nil)
	_ = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucketMeta)).Put([]byte(schemaKey), binary.BigEndian.AppendUint64(nil, SchemaVersion))
	})
	db.Close()
}

// fillStore writes enough instances that the file has many leaf pages.
func fillStore(t *testing.T, path string) {
	t.Helper()
	st, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		var cps []*Checkpoint
		for j := range 20 {
			id := NewID()
			cps = append(cps, &Checkpoint{
				Instance:  inst(id, Waiting),
				Vars:      map[int][]byte{0: bytes.Repeat([]byte{byte(i)}, 300), 1: []byte("MARKER-" + id)},
				AddRoutes: []Route{{Key: "route-" + id}},
				AddTimers: []Timer{{Due: time.Now().Add(time.Duration(j) * time.Hour), Tag: "t"}},
			})
		}
		if err := st.Commit(cps...); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCorrupt(t *testing.T) {
	garbage := func(n int) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			b := make([]byte, n)
			r := rand.NewChaCha8([32]byte{byte(n)})
			_, _ = r.Read(b)
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	// smash overwrites the page holding the first occurrence of marker
	// (found in a valid file) with what fill writes.
	smash := func(marker string, header bool) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			fillStore(t, path)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			i := bytes.Index(data, []byte(marker))
			ps := os.Getpagesize()
			if i < 2*ps {
				t.Fatalf("marker %q at %d, not in a data page", marker, i)
			}
			page := i / ps * ps
			if header {
				// A page header with an impossible type and count.
				for j := range 16 {
					data[page+j] = 0xA5
				}
			} else {
				r := rand.NewChaCha8([32]byte{7})
				_, _ = r.Read(data[page : page+ps])
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"garbage 100B", garbage(100)},
		{"garbage 64KiB", garbage(64 << 10)},
		{"zeros", func(t *testing.T, path string) { _ = os.WriteFile(path, make([]byte, 32<<10), 0o600) }},
		{"text", func(t *testing.T, path string) { _ = os.WriteFile(path, []byte("not a database\n"), 0o600) }},
		{"vars leaf header", smash("MARKER-", true)},
		{"vars leaf random", smash("MARKER-", false)},
		{"routes leaf header", smash("route-", true)},
		{"instances leaf random", smash("{urn:po}PurchaseOrder", false)},
		{"truncated", func(t *testing.T, path string) {
			fillStore(t, path)
			fi, _ := os.Stat(path)
			_ = os.Truncate(path, fi.Size()/2)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "orchd.db")
			tc.damage(t, path)
			st, err := openWithin(t, path, Options{}, 10*time.Second)
			if err == nil {
				st.Close()
				t.Fatal("Open of a damaged file succeeded")
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open = %v, want ErrCorrupt", err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("message %q does not name the file", err)
			}
			t.Log(err)
		})
	}
}
