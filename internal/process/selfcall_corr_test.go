package process

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// TestInProcessCallCorrelated deploys a bundle of two processes
// (testdata/bundles/rt-call-correlated) whose caller calls the callee in
// process: first an operation that starts a callee instance initiating a
// correlation set (request-response start, or one-way begin), then next,
// which must find that instance by the set's value. Each way, in both
// modes (in-memory, and persistent on a bbolt store), the caller's client
// gets the callee's answer to next, naming both messages.
func TestInProcessCallCorrelated(t *testing.T) {
	for _, mode := range []string{"memory", "persistent"} {
		for _, start := range []string{"sync", "oneway"} {
			t.Run(mode+"/"+start, func(t *testing.T) {
				e, caller := deployCorrelatedCall(t, mode)
				defer e.Close()
				for i, id := range []string{"K1", "K2"} {
					r := dispatch(t, e, caller, testReq(id, "1", start))
					if r.err != nil || r.fault != nil || r.out == nil {
						t.Fatalf("call %d: err %v, fault %v, reply %v", i+1, r.err, r.fault, r.out)
					}
					if got, want := childText(r.out.Part("payload"), "a"), id+":1+2"; got != want {
						t.Fatalf("call %d: reply a=%q, want %q", i+1, got, want)
					}
				}
			})
		}
	}
}

// deployCorrelatedCall deploys rt-call-correlated in mode on a new
// engine and returns it with its Caller.
func deployCorrelatedCall(t *testing.T, mode string) (*Engine, *interp.Version) {
	t.Helper()
	e, procs := deployInMode(t, "testdata/bundles/rt-call-correlated", mode, Options{})
	for _, p := range procs {
		if p.Name.Local == "Caller" {
			return e, p
		}
	}
	t.Fatal("no Caller in the bundle")
	return nil, nil
}

// deployInMode deploys the bundle at src, its deploy.xml's {{in-memory}}
// set by mode ("memory", or "persistent" on a new bbolt store), on a new
// engine with opts.
func deployInMode(t *testing.T, src, mode string, opts Options) (*Engine, []*interp.Version) {
	t.Helper()
	dir := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range ents {
		b, err := os.ReadFile(filepath.Join(src, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(string(b), "{{in-memory}}", map[string]string{"memory": "true", "persistent": "false"}[mode])
		if err := os.WriteFile(filepath.Join(dir, de.Name()), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	procs, err := loadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	if mode == "persistent" {
		st, err := persist.Open(filepath.Join(t.TempDir(), "orchd.db"), persist.Options{MaxBatchDelay: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		opts.Store = st
	}
	e := NewEngine(opts)
	if err := e.Deploy(procs...); err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		if p.InMemory != (mode == "memory") {
			t.Fatalf("%s in-memory %v in mode %s", p.Name.Local, p.InMemory, mode)
		}
	}
	return e, procs
}
