package process

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/exchange"

	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

const bundlesDir = "testdata/bundles"

// copyDir copies the regular files of src (recursively) into dst.
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLoadBundleFixtures(t *testing.T) {
	tests := []struct {
		bundle string
		// good bundles
		procs []string // process local names, in deploy.xml order
		// bad bundles: every substring must appear in the error
		errs           []string
		notSupported   bool // errors.Is(err, ErrNotSupported)
		syntax         bool // the error is (or holds) a *xmldoc.SyntaxError
		wantErrorCount int  // when > 0, len(Errors.List)
	}{
		{bundle: "good-minimal", procs: []string{"Test"}},
		// ODE accepted a prefixed port name in deploy.xml.
		{bundle: "good-prefixed-port", procs: []string{"Test"}},
		// ODE's legacy deploy.xml namespace.
		{bundle: "good-legacy-ns", procs: []string{"Test"}},
		{bundle: "good-persistent-false", procs: []string{"Test"}},
		{bundle: "good-persistent-absent", procs: []string{"Test"}},
		{bundle: "rt-call", procs: []string{"Caller", "Callee"}},

		// <compensate> outside a fault, compensation or termination handler.
		{bundle: "bad-compensate", errs: []string{"Bad.bpel:24", "<compensate>", "SA00008: <compensate> may only be used in a fault, compensation or termination handler"}, wantErrorCount: 1},
		{bundle: "bad-extvar", errs: []string{"Bad.bpel:24", "<variable>", "not supported yet: external variables"}, notSupported: true, wantErrorCount: 1},
		{bundle: "bad-pick", errs: []string{"Bad.bpel:24", "<pick> needs at least one <onMessage>"}, wantErrorCount: 1},
		// Once refused, now compiled: scope, forEach, repeatUntil.
		{bundle: "bad-scope", procs: []string{"Test"}},
		{bundle: "bad-foreach", procs: []string{"Test"}},
		{bundle: "bad-repeatuntil", procs: []string{"Test"}},
		{bundle: "bad-undeclared-var", errs: []string{"Bad.bpel:26", "undeclared variable $nope"}, wantErrorCount: 1},
		{bundle: "bad-unknown-plink", errs: []string{"Bad.bpel:24", `unknown partnerLink "ghost"`}, wantErrorCount: 1},
		{bundle: "bad-unknown-op", errs: []string{"Bad.bpel:24", `operation "dance"`, `partnerLink "partner"`}, wantErrorCount: 1},
		// Unquoted attribute value: a syntax error on line 24.
		{bundle: "bad-malformed", errs: []string{"Bad.bpel:24", "malformed XML"}, syntax: true},
		// <if> ... </iff>: the mismatched end tag is on line 27.
		{bundle: "bad-mismatched-tag", errs: []string{"Bad.bpel:27", "malformed XML"}, syntax: true},
		{bundle: "bad-no-bpel", errs: []string{"deploy.xml:4", "no .bpel file", "{urn:test:process}Other"}, wantErrorCount: 1},
		{bundle: "bad-missing-import", errs: []string{"Bad.bpel:8", "nothere.wsdl"}, wantErrorCount: 1},
		// Three problems in one file: all three reported.
		{bundle: "bad-multi", errs: []string{
			"Bad.bpel:26", "undeclared variable $nope",
			"Bad.bpel:30", "SA00008: <compensate> may only be used in a fault",
			"Bad.bpel:33", `unknown partnerLink "ghost"`,
		}, wantErrorCount: 3},
	}
	for _, tc := range tests {
		t.Run(tc.bundle, func(t *testing.T) {
			procs, err := loadBundle(filepath.Join(bundlesDir, tc.bundle))
			if tc.errs == nil {
				if err != nil {
					t.Fatalf("LoadBundle: %v", err)
				}
				var names []string
				for _, p := range procs {
					names = append(names, p.Name.Local)
					if p.Name.Space != "urn:test:process" {
						t.Errorf("process %s: namespace %q", p.Name.Local, p.Name.Space)
					}
					if p.Bundle != tc.bundle {
						t.Errorf("process %s: bundle %q, want %q", p.Name.Local, p.Bundle, tc.bundle)
					}
					if wantMem := !strings.Contains(tc.bundle, "persistent"); p.InMemory != wantMem {
						t.Errorf("process %s: InMemory = %v, want %v", p.Name.Local, p.InMemory, wantMem)
					}
					if len(p.Endpoints) != 1 {
						t.Fatalf("process %s: %d endpoints, want 1", p.Name.Local, len(p.Endpoints))
					}
				}
				if strings.Join(names, ",") != strings.Join(tc.procs, ",") {
					t.Errorf("processes %v, want %v", names, tc.procs)
				}
				if tc.bundle != "rt-call" {
					ep := procs[0].Endpoints[0]
					if ep.Port != "TestPort" || ep.Service != (exchange.QName{Space: "urn:test", Local: "TestService"}) || ep.Path != "/test" {
						t.Errorf("endpoint %s port %q path %q, want {urn:test}TestService TestPort /test", ep.Service, ep.Port, ep.Path)
					}
					if len(ep.Operations) != 1 || ep.Operations[0].Name != "run" {
						t.Errorf("endpoint operations %v, want [run]", ep.Operations)
					}
				}
				return
			}
			if err == nil {
				t.Fatalf("LoadBundle succeeded, want an error with %q", tc.errs)
			}
			if procs != nil {
				t.Errorf("LoadBundle returned processes %v with an error", procs)
			}
			msg := err.Error()
			for _, want := range tc.errs {
				if !strings.Contains(msg, want) {
					t.Errorf("error does not contain %q:\n%s", want, msg)
				}
			}
			if got := errors.Is(err, xmldoc.ErrNotSupported); got != tc.notSupported {
				t.Errorf("errors.Is(err, ErrNotSupported) = %v, want %v\n%s", got, tc.notSupported, msg)
			}
			if compile.IsNotSupported(err) != tc.notSupported {
				t.Errorf("IsNotSupported = %v, want %v", !tc.notSupported, tc.notSupported)
			}
			var se *xmldoc.SyntaxError
			if got := errors.As(err, &se); got != tc.syntax {
				t.Errorf("errors.As(*xmldoc.SyntaxError) = %v, want %v", got, tc.syntax)
			} else if got && se.Pos.Line == 0 {
				t.Errorf("syntax error without a line: %v", se)
			}
			var list *xmldoc.Errors
			if tc.wantErrorCount > 0 && errors.As(err, &list) && len(list.List) != tc.wantErrorCount {
				t.Errorf("%d errors, want %d:\n%s", len(list.List), tc.wantErrorCount, msg)
			}
		})
	}
}

// Every bundle under testdata/bundles that is not named bad-* must load.
func TestFixtureBundlesLoad(t *testing.T) {
	entries, err := os.ReadDir(bundlesDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range entries {
		if !ent.IsDir() || strings.HasPrefix(ent.Name(), "bad-") {
			continue
		}
		if _, err := loadBundle(filepath.Join(bundlesDir, ent.Name())); err != nil {
			t.Errorf("%s: %v", ent.Name(), err)
		}
	}
}

func TestLoadDirGoodAndBad(t *testing.T) {
	dir := t.TempDir()
	copyDir(t, filepath.Join(bundlesDir, "good-minimal"), filepath.Join(dir, "good"))
	copyDir(t, filepath.Join(bundlesDir, "bad-extvar"), filepath.Join(dir, "bad"))
	// A folder without deploy.xml and a plain file are not bundles.
	if err := os.Mkdir(filepath.Join(dir, "not-a-bundle"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	procs, bad, err := loadDirWith(dir, compile.LoadOptions{})
	if err != nil {
		t.Fatalf("LoadDir: %v", err)
	}
	if len(procs) != 1 || procs[0].Name != (exchange.QName{Space: "urn:test:process", Local: "Test"}) || procs[0].Bundle != "good" {
		t.Errorf("processes %v, want the one of bundle good", procs)
	}
	if len(bad) != 1 {
		t.Fatalf("%d bundle errors, want 1: %v", len(bad), bad)
	}
	be := bad[0]
	if be.Dir != filepath.Join(dir, "bad") {
		t.Errorf("BundleError.Dir = %q, want %q", be.Dir, filepath.Join(dir, "bad"))
	}
	var target *compile.BundleError
	if !errors.As(error(be), &target) || !errors.Is(be, xmldoc.ErrNotSupported) {
		t.Errorf("BundleError does not unwrap to ErrNotSupported: %v", be)
	}
	for _, want := range []string{filepath.Join(dir, "bad"), "Bad.bpel:24", "not supported yet: external variables"} {
		if !strings.Contains(be.Error(), want) {
			t.Errorf("BundleError %q does not contain %q", be.Error(), want)
		}
	}
}

func TestLoadDirMissing(t *testing.T) {
	if _, _, err := loadDirWith(filepath.Join(t.TempDir(), "nope"), compile.LoadOptions{}); err == nil {
		t.Fatal("LoadDir of a missing directory succeeded")
	}
}

// A persistent process needs a store: an engine without one refuses it
// with a message saying why, and keeps serving the others.
func TestDeployPersistentWithoutStore(t *testing.T) {
	for _, b := range []string{"good-persistent-false", "good-persistent-absent"} {
		procs, err := loadBundle(filepath.Join(bundlesDir, b))
		if err != nil {
			t.Fatal(err)
		}
		if procs[0].InMemory {
			t.Fatalf("%s: loaded as in-memory", b)
		}
		e := NewEngine(Options{})
		err = e.Deploy(procs...)
		if err == nil || !strings.Contains(err.Error(), "persistent") || !strings.Contains(err.Error(), "no data store") {
			t.Errorf("%s: Deploy without a store: %v", b, err)
		}
		if len(e.Processes()) != 0 {
			t.Errorf("%s: persistent process deployed without a store", b)
		}
	}
}

// A binding that declares no style (ODE's test bundles bind operations
// with no soap:binding at all) serves operations whose messages have
// type-typed parts as rpc, in the portType's namespace, so operations
// sharing one message are told apart by their wrapper.
func TestImpliedBindingStyle(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "ode-corpus", "TestCorrelation")
	procs, err := loadBundleWith(dir, compile.LoadOptions{SharedFolders: []string{"ProbeService"}})
	if err != nil {
		t.Fatal(err)
	}
	var seen int
	for _, ep := range procs[0].Endpoints {
		for _, op := range ep.Operations {
			seen++
			if op.Style != exchange.RPC || op.Namespace != "http://ode/bpel/unit-test/testCorrelation.wsdl" {
				t.Errorf("operation %s: style %v namespace %q, want rpc in the portType's namespace", op.Name, op.Style, op.Namespace)
			}
		}
	}
	if seen != 2 {
		t.Errorf("%d operations served, want request and continue", seen)
	}
}
