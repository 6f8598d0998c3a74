package process

import (
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/interp"
)

// The runtime's tests compile bundles with the compiler (they may import
// it; the runtime itself never does) and wrap each plan in a version.

func loadBundle(dir string) ([]*interp.Process, error) {
	return loadBundleWith(dir, compile.LoadOptions{})
}

func loadBundleWith(dir string, opts compile.LoadOptions) ([]*interp.Process, error) {
	pls, err := compile.LoadBundleWith(dir, opts)
	if err != nil {
		return nil, err
	}
	return interp.NewProcesses(pls), nil
}

func loadDirWith(dir string, opts compile.LoadOptions) ([]*interp.Process, []*compile.BundleError, error) {
	pls, bad, err := compile.LoadDirWith(dir, opts)
	return interp.NewProcesses(pls), bad, err
}
