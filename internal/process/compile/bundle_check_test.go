package compile

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/odecorpus"
	"github.com/orchd/orchd/internal/process/check"
)

// validBundles are the bundles that deploy today: deploy/, the guide's
// (docs/first-bundle), the test bundles of this package and of cmd/orchd, and the ODE corpus's bundles
// with a passing case that is not a refusal (internal/conformance's
// testdata/passing.txt) and those of odecorpus.SpecWaivers, with the shared
// folders ODE's bundles import from.
func validBundles(t *testing.T) (dirs []string, shared map[string][]string) {
	t.Helper()
	shared = map[string][]string{}
	for _, root := range []string{"../../../deploy", "../../../docs/first-bundle", "../testdata/bundles", "../../../cmd/orchd/testdata", "../../echotest"} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && d.Name() == "compat" {
				// Bundles written for ODE that break the rules it did not
				// enforce: they deploy with --compat ode (TestCompatODE).
				return filepath.SkipDir
			}
			if err != nil || d.Name() != "deploy.xml" {
				return nil
			}
			dir := filepath.Dir(p)
			if !strings.HasPrefix(filepath.Base(dir), "bad-") {
				dirs = append(dirs, dir)
			}
			return nil
		})
	}
	corpus := "../../../testdata/ode-corpus"
	f, err := os.Open("../../conformance/testdata/passing.txt")
	if err != nil {
		t.Fatalf("passing cases: %v", err)
	}
	defer f.Close()
	if _, err := os.Stat(corpus); err != nil {
		t.Fatalf("ODE corpus: %v", err)
	}
	seen := map[string]bool{}
	for b := range odecorpus.SpecWaivers() {
		seen[b] = true
		dir := filepath.Join(corpus, b)
		dirs = append(dirs, dir)
		shared[dir] = []string{"ProbeService", "FaultService"}
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") || strings.HasSuffix(line, "#refused") {
			continue
		}
		b := line[:strings.LastIndex(line, "/")]
		if !seen[b] {
			seen[b] = true
			dir := filepath.Join(corpus, filepath.FromSlash(b))
			dirs = append(dirs, dir)
			shared[dir] = []string{"ProbeService", "FaultService"}
		}
	}
	sort.Strings(dirs)
	return dirs, shared
}

// TestStaticCheckValidCorpora: static analysis finds nothing in a bundle
// that deploys (no false positives).
func TestStaticCheckValidCorpora(t *testing.T) {
	dirs, shared := validBundles(t)
	if len(dirs) < 20 {
		t.Fatalf("found %d valid bundles, want the repository's and the corpus's", len(dirs))
	}
	waivers := odecorpus.SpecWaivers()
	for _, dir := range dirs {
		_, err := LoadBundleWith(dir, LoadOptions{SharedFolders: shared[dir]})
		rules, disagrees := waivers[filepath.Base(dir)]
		found := map[string]bool{}
		for _, e := range flatten(err) {
			var f *check.Finding
			if !errors.As(e, &f) {
				continue
			}
			if disagrees && slices.Contains(rules, f.Rule) {
				found[f.Rule] = true
				continue
			}
			t.Errorf("%s: %v", dir, f)
		}
		for _, r := range rules {
			if !found[r] {
				t.Errorf("%s: no %s finding; take it from odecorpus.SpecWaivers and docs/static-analysis.md (and its cases back to passing.txt when it has no other)", dir, r)
			}
		}
	}
}

// flatten lists the errors err joins.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if m, ok := err.(interface{ Unwrap() []error }); ok {
		return m.Unwrap()
	}
	return []error{err}
}

// BenchmarkLoadDeploy loads deploy/ as orchd serve does, static analysis
// included (compare BenchmarkCheckDeploy in internal/process/check, the
// analysis alone).
func BenchmarkLoadDeploy(b *testing.B) {
	for i := 0; i < b.N; i++ {
		procs, bad, err := LoadDirWith("../../../deploy", LoadOptions{})
		if err != nil || len(bad) > 0 || len(procs) == 0 {
			b.Fatalf("deploy/: %v %v", err, bad)
		}
	}
}
