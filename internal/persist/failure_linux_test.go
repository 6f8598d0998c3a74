//go:build linux

package persist

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// requireFullDiskEnv, when set (.ci/run sets it where a tmpfs can be
// mounted), makes a full-disk test that cannot mount its tmpfs fail
// instead of skipping.
const requireFullDiskEnv = "ORCHD_REQUIRE_FULLDISK"

// TestCommitDiskFull fills a real (tmpfs) filesystem and checks that Commit
// fails and that nothing of it becomes visible, before and after reopening.
// Mounting needs root (CAP_SYS_ADMIN); TestCommitFileSizeLimit covers the
// same path without privileges.
func TestCommitDiskFull(t *testing.T) {
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=512k"); err != nil {
		if os.Getenv(requireFullDiskEnv) != "" {
			t.Fatalf("cannot mount a small tmpfs, and %s is set: %v", requireFullDiskEnv, err)
		}
		t.Skipf("cannot mount a small tmpfs (%v; it needs CAP_SYS_ADMIN; set %s to fail instead); TestCommitFileSizeLimit covers write errors", err, requireFullDiskEnv)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, 0); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	path := filepath.Join(mnt, "orchd.db")
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { st.Close() }() // st is reassigned below
	base := &Checkpoint{Instance: inst("A", Waiting), Vars: map[int][]byte{0: []byte("v0")}, AddRoutes: []Route{{Key: "kA"}}}
	if err := st.Commit(base); err != nil {
		t.Fatal(err)
	}

	filler, err := os.Create(filepath.Join(mnt, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte{'x'}, 4096)
	for {
		if _, err := filler.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling: %v", err)
			}
			break
		}
	}
	filler.Close()

	big := &Checkpoint{
		Instance:  inst("B", Waiting),
		Vars:      map[int][]byte{0: bytes.Repeat([]byte("y"), 256<<10)},
		AddRoutes: []Route{{Key: "kB"}},
	}
	upd := &Checkpoint{Instance: inst("A", Completed), Vars: map[int][]byte{0: nil}, RemoveRoutes: []Route{{Key: "kA"}}}
	err = st.Commit(upd, big)
	if err == nil {
		t.Fatal("Commit on a full filesystem succeeded")
	}
	t.Logf("Commit on a full filesystem: %v", err)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("error %v does not wrap ENOSPC", err)
	}
	checkBaseline := func(st *Store, when string) {
		got, vars, err := st.Instance("A")
		if err != nil || got.State != Waiting || string(vars[0]) != "v0" {
			t.Errorf("%s: A = %v, %v, %v; want the state before the failed commit", when, got, vars, err)
		}
		if _, _, err := st.Instance("B"); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: B visible: %v", when, err)
		}
		if id, ok, _ := st.Route("kA"); !ok || id != "A" {
			t.Errorf("%s: route kA = %q %v", when, id, ok)
		}
	}
	checkBaseline(st, "same store")
	// The store keeps working for what fits.
	if err := st.Commit(&Checkpoint{Instance: inst("C", Running)}); err != nil {
		t.Logf("small commit on the full filesystem also failed: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	st, err = Open(path, Options{})
	if err != nil {
		t.Fatalf("reopen on the full filesystem: %v", err)
	}
	checkBaseline(st, "reopened")
	st.Close()
	_ = os.Remove(filepath.Join(mnt, "filler"))
	checkFile(t, path)
	st, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkBaseline(st, "space freed")
	if err := st.Commit(upd, big); err != nil {
		t.Errorf("Commit after freeing space: %v", err)
	}
}

// TestCommitFileSizeLimit produces a real write error without privileges: a
// second process lowers RLIMIT_FSIZE to the data file's size, so growing the
// file fails with EFBIG, and commits a checkpoint that needs more room.
func TestCommitFileSizeLimit(t *testing.T) {
	ts := newTestStore(t, Options{})
	ts.mustCommit(&Checkpoint{Instance: inst("A", Waiting), Vars: map[int][]byte{0: []byte("v0")}, AddRoutes: []Route{{Key: "kA"}}})
	ts.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=fsize", childPathEnv+"="+ts.path)
	out, err := cmd.CombinedOutput()
	t.Logf("child: %s", bytes.TrimSpace(out))
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	if !strings.Contains(string(out), "file too large") {
		t.Errorf("child's commit did not fail with EFBIG")
	}
	ts.reopen()
	got, vars, err := ts.Instance("A")
	if err != nil || got.State != Waiting || string(vars[0]) != "v0" {
		t.Errorf("A = %v, %v, %v; want the state before the failed commit", got, vars, err)
	}
	if _, _, err := ts.Instance("B"); !errors.Is(err, ErrNotFound) {
		t.Errorf("B visible: %v", err)
	}
	if id, ok, _ := ts.Route("kA"); !ok || id != "A" {
		t.Errorf("route kA = %q %v", id, ok)
	}
}

// fileSizeLimitChild is the second process of TestCommitFileSizeLimit.
func fileSizeLimitChild(path string) int {
	signal.Ignore(syscall.SIGXFSZ) // get EFBIG instead of being killed
	st, err := Open(path, Options{})
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	defer st.Close()
	fi, err := os.Stat(path)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	lim := uint64(fi.Size())
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
		fmt.Println("setrlimit:", err)
		return 1
	}
	err = st.Commit(
		&Checkpoint{Instance: inst("A", Completed), Vars: map[int][]byte{0: nil}, RemoveRoutes: []Route{{Key: "kA"}}},
		&Checkpoint{Instance: inst("B", Waiting), Vars: map[int][]byte{0: bytes.Repeat([]byte("y"), 1<<20)}},
	)
	if err == nil {
		fmt.Println("commit beyond RLIMIT_FSIZE succeeded")
		return 1
	}
	// bbolt formats (does not wrap) the truncate error: match the text.
	fmt.Println("commit failed as expected:", err)
	got, _, err := st.Instance("A")
	if err != nil || got.State != Waiting {
		fmt.Println("A after the failed commit:", got, err)
		return 1
	}
	return 0
}
