package conformance

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/odemock"
)

var (
	updatePassing = flag.Bool("update-passing", false, "run the whole corpus and rewrite testdata/passing.txt with the cases that pass")
	stagger       = flag.Duration("stagger", 2*time.Second, "delay between the launches of a bundle's cases (ODE: 2s; correlation tests depend on it)")
	caseTimeout   = flag.Duration("case-timeout", 60*time.Second, "bound on each exchange (ODE: 60s)")
	parallel      = flag.Int("bundles", 8, "bundles run at once, each in its own server")
	only          = flag.String("only", "", "run only the bundles whose folder contains this string")
)

const passingFile = "testdata/passing.txt"

// corpusRoot is the repository's copy of the ODE corpus,
// testdata/ode-corpus (ORCHD_CONFORMANCE_CORPUS overrides it). The corpus
// is part of the repository: a missing one is a failure, never a skip.
func corpusRoot(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("ORCHD_CONFORMANCE_CORPUS"); p != "" {
		return p
	}
	root, err := filepath.Abs(filepath.Join("..", "..", "testdata", "ode-corpus"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "tests.tsv")); err != nil {
		t.Fatalf("conformance: ODE corpus not found at %s (testdata/ode-corpus from the repository root; or set ORCHD_CONFORMANCE_CORPUS): %v", root, err)
	}
	return root
}

// run plans the corpus, keeps the bundles keep selects, runs them and
// prints one line per case plus the summary.
func run(t *testing.T, keep func(*Bundle) bool) ([]Result, int, int) {
	t.Helper()
	root := corpusRoot(t)
	bundles, err := Plan(root)
	if err != nil {
		t.Errorf("corpus: %v", err)
	}
	var sel []*Bundle
	for _, b := range bundles {
		if keep(b) && (*only == "" || strings.Contains(b.Dir, *only)) {
			sel = append(sel, b)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mocks, err := odemock.Start(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mocks.Close()
	// The REST cases call http://localhost:8085/test, written in their
	// processes; the runner's engines dial this server, on a port of its
	// own, for that address (another run may hold 8085).
	rest, err := odemock.StartREST(ctx, nil, "127.0.0.1:0")
	if err != nil {
		t.Fatalf("ODE's REST test server: %v", err)
	}
	defer rest.Close()
	restURL, err := url.Parse(rest.URL)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(Options{Root: root, Stagger: *stagger, Timeout: *caseTimeout, Parallel: *parallel, REST: restURL.Host}, mocks)
	if err != nil {
		t.Fatal(err)
	}
	results, deployed := r.Run(ctx, sel)
	for _, res := range results {
		fmt.Println(res.Line())
	}
	fmt.Printf("%s; bundles deployed %d/%d\n", Summarize(results), deployed, len(sel))
	return results, deployed, len(sel)
}

// TestConformanceAll runs the whole corpus and reports every case. Case
// failures do not fail it: the engine does not support everything yet.
func TestConformanceAll(t *testing.T) {
	if os.Getenv("ORCHD_CONFORMANCE") != "all" && !*updatePassing {
		t.Skip("set ORCHD_CONFORMANCE=all (make conformance) or pass -update-passing to run the whole ODE corpus")
	}
	results, _, _ := run(t, func(*Bundle) bool { return true })
	if *updatePassing {
		if *only != "" {
			t.Fatal("-update-passing needs a full run; drop -only")
		}
		ids := PassingIDs(results)
		body := "# Conformance cases that pass today (go test ./internal/conformance -run TestConformance -update-passing).\n" +
			"# TestConformanceRegression fails if one of them stops passing, or passes only leniently\n" +
			"# (a declared fault where the case has no response pattern) when it is not marked lenient.\n" + strings.Join(ids, "\n")
		if len(ids) > 0 {
			body += "\n"
		}
		if err := os.WriteFile(passingFile, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d case ids to %s", len(ids), passingFile)
	}
}

// TestConformanceRegression runs the bundles holding the cases listed in
// testdata/passing.txt (all of each such bundle's cases, since
// correlation cases need their companions) and fails if a listed case
// does not pass.
func TestConformanceRegression(t *testing.T) {
	if *updatePassing {
		t.Skip("-update-passing: TestConformanceAll rewrites the list")
	}
	want, lenient, err := readPassing(passingFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Skip("no case listed in " + passingFile)
	}
	bundleOf := func(id string) string { return id[:strings.LastIndexByte(id[:strings.IndexByte(id, '#')], '/')] }
	needed := map[string]bool{}
	for id := range want {
		needed[bundleOf(id)] = true
	}
	results, _, _ := run(t, func(b *Bundle) bool { return needed[b.Dir] })
	seen := map[string]bool{}
	for _, r := range results {
		if !want[r.Case.ID] {
			continue
		}
		seen[r.Case.ID] = true
		switch {
		case r.Outcome != Pass:
			t.Errorf("regression: %s", r.Line())
		case r.Lenient && !lenient[r.Case.ID]:
			t.Errorf("regression: %s (listed as passing strictly in %s)", r.Line(), passingFile)
		}
	}
	for id := range want {
		if !seen[id] && (*only == "" || strings.Contains(id, *only)) {
			t.Errorf("regression: %s is listed in %s but the corpus has no such case", id, passingFile)
		}
	}
}

// readPassing reads the list of passing cases: one id a line, followed by
// " lenient" for a case that passes only by ODE's completion-only rule
// (Result.Lenient). It returns all ids and the lenient ones.
func readPassing(path string) (ids, lenient map[string]bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	ids, lenient = map[string]bool{}, map[string]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		if len(f) > 2 || (len(f) == 2 && f[1] != lenientMark) || !strings.Contains(f[0], "#") || !strings.Contains(f[0], "/") {
			return nil, nil, fmt.Errorf("%s:%d: %q is not a case id (bundle/props#N), optionally followed by %q", path, n, l, lenientMark)
		}
		ids[f[0]] = true
		if len(f) == 2 {
			lenient[f[0]] = true
		}
	}
	return ids, lenient, sc.Err()
}

// TestRESTCasesDialTheirOwnServer runs the REST cases while 8085, the
// port their processes name, answers every request with 500 (or is held
// by another run): they pass only if the engines dial the run's own REST
// server, whatever holds 8085.
func TestRESTCasesDialTheirOwnServer(t *testing.T) {
	if ln, err := net.Listen("tcp", odemock.RESTAddr); err == nil {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "not the run's REST server", http.StatusInternalServerError)
		}), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
	} else {
		t.Logf("%s is held by another process: %v", odemock.RESTAddr, err)
	}
	results, _, _ := run(t, func(b *Bundle) bool { return strings.HasPrefix(b.Dir, "TestRest") })
	if len(results) < 7 {
		t.Fatalf("%d REST cases, want the corpus's 7", len(results))
	}
	for _, r := range results {
		if r.Outcome != Pass {
			t.Errorf("%s", r.Line())
		}
	}
}
