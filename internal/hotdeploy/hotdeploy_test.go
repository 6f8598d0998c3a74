package hotdeploy

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/echotest"
	"github.com/orchd/orchd/internal/instancestore"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process"
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/soap"
)

// The deployer's tests run it over a real engine and a real SOAP front
// door on loopback, with bundles written into a temporary deploy
// directory (internal/echotest, whose process answers "TAG-<id>"). Polls are
// called by the test, not timed.

// rig is a deployer with its engine, front door and HTTP server.
type rig struct {
	d      *Deployer
	engine *process.Engine
	dir    string
	url    string
}

// newRig starts a deployer of a fresh deploy directory; data, when not
// empty, is the data directory, with a bbolt store in it.
func newRig(t *testing.T, data string) *rig {
	t.Helper()
	return newRigWith(t, data, compile.LoadOptions{})
}

// newRigWith is newRig compiling bundles with load.
func newRigWith(t *testing.T, data string, load compile.LoadOptions) *rig {
	t.Helper()
	var opts process.Options
	if data != "" {
		st, err := persist.Open(filepath.Join(data, "orchd.db"), persist.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		opts.Store = st
	}
	engine := process.NewEngine(opts)
	t.Cleanup(engine.Close)
	front := soap.NewServer(soap.ServerOptions{})
	srv := httptest.NewServer(front)
	t.Cleanup(srv.Close)
	r := &rig{engine: engine, dir: t.TempDir(), url: srv.URL}
	d, err := New(Options{Dir: r.dir, Data: data, Engine: engine, Front: front, Load: load})
	if err != nil {
		t.Fatal(err)
	}
	r.d = d
	return r
}

// settle writes bundle echo answering tag and polls until it is
// deployed (twice: the first poll sees the folder change).
func (r *rig) settle(t *testing.T, tag string, inMemory bool) {
	t.Helper()
	echotest.Write(t, r.dir, "echo", tag, inMemory)
	r.d.Poll()
	r.d.Poll()
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestPollDeploysRedeploysUndeploys(t *testing.T) {
	r := newRig(t, "")
	echotest.Write(t, r.dir, "echo", "one", true)
	r.d.Poll() // first sight: the folder may still be changing
	if exists(filepath.Join(r.dir, "echo.deployed")) || len(r.engine.Processes()) != 0 {
		t.Fatal("deployed at the first poll that saw the folder")
	}
	r.d.Poll()
	if !exists(filepath.Join(r.dir, "echo.deployed")) {
		t.Fatal("no marker after the second poll")
	}
	if got := echotest.Call(t, r.url, "a"); got != "one-a" {
		t.Fatalf("answer %q, want one-a", got)
	}
	if ps := r.engine.Processes(); len(ps) != 1 || ps[0].Number != 1 {
		t.Fatalf("processes %v, want version 1", ps)
	}

	echotest.Write(t, r.dir, "echo", "second", true)
	r.d.Poll()
	if got := echotest.Call(t, r.url, "b"); got != "one-b" {
		t.Fatalf("answer %q while the change settles, want one-b", got)
	}
	r.d.Poll()
	if got := echotest.Call(t, r.url, "c"); got != "second-c" {
		t.Fatalf("answer %q after the redeploy, want second-c", got)
	}
	if ps := r.engine.Processes(); len(ps) != 1 || ps[0].Number != 2 {
		t.Fatalf("processes %v, want version 2", ps)
	}

	// Deleting the marker redeploys the same files as a new version.
	if err := os.Remove(filepath.Join(r.dir, "echo.deployed")); err != nil {
		t.Fatal(err)
	}
	r.d.Poll()
	if ps := r.engine.Processes(); len(ps) != 1 || ps[0].Number != 3 {
		t.Fatalf("processes %v after the marker was deleted, want version 3", ps)
	}

	if err := os.RemoveAll(filepath.Join(r.dir, "echo")); err != nil {
		t.Fatal(err)
	}
	r.d.Poll()
	if len(r.engine.Processes()) != 0 || exists(filepath.Join(r.dir, "echo.deployed")) {
		t.Fatalf("still deployed after the folder was removed: %v", r.engine.Processes())
	}
	if got := echotest.Call(t, r.url, "d"); !strings.HasPrefix(got, "404") {
		t.Fatalf("answer %q after the undeploy, want a 404", got)
	}
}

func TestBrokenRedeployKeepsServingVersion(t *testing.T) {
	r := newRig(t, "")
	r.settle(t, "one", true)
	bpel := filepath.Join(r.dir, "echo", "echo.bpel")
	if err := os.WriteFile(bpel, []byte(`<process name="Echo"><sequence>`), 0o644); err != nil {
		t.Fatal(err)
	}
	r.d.Poll()
	r.d.Poll()
	if got := echotest.Call(t, r.url, "a"); got != "one-a" {
		t.Fatalf("answer %q after a broken redeploy, want the serving version's one-a", got)
	}
	bs, err := r.d.Bundles()
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || bs[0].State != "failed" || bs[0].Version != 1 || len(bs[0].Errors) == 0 || !strings.Contains(bs[0].Errors[0], "echo.bpel") {
		t.Fatalf("bundles %+v, want echo failed at version 1 with a problem naming echo.bpel", bs)
	}
}

// zipOf zips the bundle folder dir.
func zipOf(t *testing.T, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDeployZipAndUndeploy(t *testing.T) {
	r := newRig(t, "")
	stage := t.TempDir()
	echotest.Write(t, stage, "echo", "zipped", true)
	good := zipOf(t, filepath.Join(stage, "echo"))
	for _, tc := range []struct {
		name, bundle string
		zip          []byte
	}{
		{"a path", "../echo", good},
		{"a dot folder", ".echo", good},
		{"a marker name", "echo.deployed", good},
		{"not a zip", "echo", []byte("PK but not really")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := r.d.DeployZip(tc.bundle, tc.zip); !errors.Is(err, mgmt.ErrInvalid) {
				t.Fatalf("DeployZip(%q) = %v, want ErrInvalid", tc.bundle, err)
			}
		})
	}
	if ents, _ := os.ReadDir(r.dir); len(ents) != 0 {
		t.Fatalf("refused uploads left %d entries in the deploy directory", len(ents))
	}
	b, err := r.d.DeployZip("echo", good)
	if err != nil {
		t.Fatal(err)
	}
	if b.State != "deployed" || b.Version != 1 || len(b.Processes) != 1 {
		t.Fatalf("bundle %+v, want echo deployed at version 1", b)
	}
	if got := echotest.Call(t, r.url, "z"); got != "zipped-z" {
		t.Fatalf("answer %q, want zipped-z", got)
	}
	if err := r.d.Undeploy("echo"); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(r.dir, "echo")) || len(r.engine.Processes()) != 0 {
		t.Fatal("the bundle's folder or process is left after Undeploy")
	}
	if err := r.d.Undeploy("echo"); !errors.Is(err, mgmt.ErrNotFound) {
		t.Fatalf("second Undeploy = %v, want ErrNotFound", err)
	}
}

func TestSetActiveSwitchesServedVersion(t *testing.T) {
	r := newRig(t, "")
	r.settle(t, "one", true)
	r.settle(t, "second", true)
	ctx := context.Background()
	// Version 1 served no instance: the poll dropped it.
	if err := r.d.SetActive(ctx, "Echo", 1, true); !errors.Is(err, mgmt.ErrNotFound) {
		t.Fatalf("SetActive of the dropped version 1 = %v, want ErrNotFound", err)
	}
	if err := r.d.SetActive(ctx, "Echo", 2, false); err != nil {
		t.Fatal(err)
	}
	if got := echotest.Call(t, r.url, "a"); !strings.HasPrefix(got, "404") {
		t.Fatalf("answer %q with every version retired, want a 404", got)
	}
	if err := r.d.SetActive(ctx, "Echo", 2, true); err != nil {
		t.Fatal(err)
	}
	if got := echotest.Call(t, r.url, "b"); got != "second-b" {
		t.Fatalf("answer %q after activating version 2 again, want second-b", got)
	}
	if err := r.d.SetActive(ctx, "Echo", 9, true); !errors.Is(err, mgmt.ErrNotFound) {
		t.Fatalf("SetActive of version 9 = %v, want ErrNotFound", err)
	}
}

func TestPersistentVersionArchivedAndKeptAcrossRestart(t *testing.T) {
	data := t.TempDir()
	r := newRig(t, data)
	r.settle(t, "one", false)
	if got := echotest.Call(t, r.url, "a"); got != "one-a" {
		t.Fatalf("answer %q, want one-a", got)
	}
	if !exists(filepath.Join(data, versionsDir, "1-echo", "echo.bpel")) {
		t.Fatal("version 1 of a persistent bundle is not archived")
	}
	if !HasArchive(data) {
		t.Fatal("HasArchive = false with an archived version")
	}
	next, err := os.ReadFile(filepath.Join(data, versionsDir, "next"))
	if err != nil || strings.TrimSpace(string(next)) != "2" {
		t.Fatalf("version counter %q, %v; want 2", next, err)
	}

	// A restart over the same files: the archived version keeps its
	// number, the counter stays.
	r.engine.Close()
	procs, err := loadBundle(filepath.Join(r.dir, "echo"), compile.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := persist.Open(filepath.Join(t.TempDir(), "orchd.db"), persist.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e2 := process.NewEngine(process.Options{Store: st})
	defer e2.Close()
	d2, err := New(Options{Dir: r.dir, Data: data, Engine: e2, Front: soap.NewServer(soap.ServerOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := d2.Start(procs, nil); err != nil {
		t.Fatal(err)
	}
	if procs[0].Number != 1 {
		t.Fatalf("version %d after the restart, want the archived 1", procs[0].Number)
	}
}

func TestNewRefusesBadCounter(t *testing.T) {
	data := t.TempDir()
	if err := os.MkdirAll(filepath.Join(data, versionsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, versionsDir, "next"), []byte("zero\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := New(Options{Dir: t.TempDir(), Data: data, Engine: process.NewEngine(process.Options{})})
	if err == nil || !strings.Contains(err.Error(), "not a positive number") {
		t.Fatalf("New = %v, want the counter refused", err)
	}
}

// newLazyRig is newRig over an engine whose store opens when the first
// persistent process is deployed (OpenStore), as orchd serve's; fail,
// when set, is the error OpenStore answers instead.
func newLazyRig(t *testing.T, data string, fail error) (*rig, *instancestore.Lazy) {
	t.Helper()
	lazy := instancestore.NewLazy(instancestore.Config{Dir: data}, nil, nil)
	t.Cleanup(func() { _ = lazy.Close() })
	engine := process.NewEngine(process.Options{Store: lazy})
	t.Cleanup(engine.Close)
	front := soap.NewServer(soap.ServerOptions{})
	srv := httptest.NewServer(front)
	t.Cleanup(srv.Close)
	r := &rig{engine: engine, dir: t.TempDir(), url: srv.URL}
	open := func() (string, error) {
		if fail != nil {
			return "", fail
		}
		_, err := lazy.Open()
		return data, err
	}
	d, err := New(Options{Dir: r.dir, Engine: engine, Front: front, OpenStore: open})
	if err != nil {
		t.Fatal(err)
	}
	r.d = d
	return r, lazy
}

func TestFirstPersistentDeployOpensStore(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	r, lazy := newLazyRig(t, data, nil)
	r.settle(t, "one", true)
	if got := echotest.Call(t, r.url, "a"); got != "one-a" {
		t.Fatalf("answer %q, want one-a", got)
	}
	if lazy.Opened() != nil || exists(data) {
		t.Fatal("an in-memory deploy opened the store or made the data directory")
	}
	r.settle(t, "two", false)
	if got := echotest.Call(t, r.url, "b"); got != "two-b" {
		t.Fatalf("answer %q from the persistent version, want two-b", got)
	}
	if lazy.Opened() == nil || !exists(filepath.Join(data, instancestore.File)) {
		t.Fatal("the persistent deploy did not open the store")
	}
	// From now on versions are counted and archived in data.
	if !exists(filepath.Join(data, versionsDir, "2-echo", "echo.bpel")) {
		t.Fatal("the persistent version 2 is not archived")
	}
	if next, err := os.ReadFile(filepath.Join(data, versionsDir, "next")); err != nil || strings.TrimSpace(string(next)) != "3" {
		t.Fatalf("version counter %q, %v; want 3", next, err)
	}
}

func TestStoreThatWillNotOpenFailsTheDeploy(t *testing.T) {
	r, _ := newLazyRig(t, t.TempDir(), errors.New("the data file is held by another orchd"))
	r.settle(t, "one", true)
	r.settle(t, "two", false)
	if got := echotest.Call(t, r.url, "a"); got != "one-a" {
		t.Fatalf("answer %q, want the serving in-memory version's one-a", got)
	}
	bs, err := r.d.Bundles()
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || bs[0].State != "failed" || len(bs[0].Errors) == 0 || !strings.Contains(bs[0].Errors[0], "persistent process Echo: the data file is held") {
		t.Fatalf("bundles %+v, want echo failed naming the persistent process and the store's error", bs)
	}
}
