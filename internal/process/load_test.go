package process

import (
	"github.com/orchd/orchd/internal/process/compile"
)

// The runtime's tests compile bundles with the compiler (they may import
// it; the runtime itself never does) and wrap each plan in a version.

func loadBundle(dir string) ([]*Process, error) { return loadBundleWith(dir, compile.LoadOptions{}) }

func loadBundleWith(dir string, opts compile.LoadOptions) ([]*Process, error) {
	pls, err := compile.LoadBundleWith(dir, opts)
	if err != nil {
		return nil, err
	}
	return NewProcesses(pls), nil
}

func loadDirWith(dir string, opts compile.LoadOptions) ([]*Process, []*compile.BundleError, error) {
	pls, bad, err := compile.LoadDirWith(dir, opts)
	return NewProcesses(pls), bad, err
}
