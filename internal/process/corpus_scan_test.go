package process

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// TestCorpusScan loads every bundle of the ODE conformance corpus and logs
// each one's errors. It runs only when ORCHD_ODE_CORPUS names the corpus
// folder (../shared/conformance/ode from the repository root).
func TestCorpusScan(t *testing.T) {
	dir := os.Getenv("ORCHD_ODE_CORPUS")
	if dir == "" {
		t.Skip("ORCHD_ODE_CORPUS not set")
	}
	var bundles []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "deploy.xml" {
			bundles = append(bundles, filepath.Dir(p))
		}
		return nil
	})
	sort.Strings(bundles)
	ok := 0
	for _, b := range bundles {
		rel, _ := filepath.Rel(dir, b)
		if _, err := LoadBundle(b); err != nil {
			t.Logf("FAIL %s:\n%v", rel, err)
			continue
		}
		ok++
		t.Logf("OK   %s", rel)
	}
	t.Logf("%d of %d bundles load", ok, len(bundles))
}
