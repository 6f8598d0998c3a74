package process

import (
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/interp"
)

// The runtime's tests compile bundles with the compiler (they may import
// it; the runtime itself never does) and wrap each plan in a version.

func loadBundle(dir string) ([]*interp.Version, error) {
	return loadBundleWith(dir, compile.LoadOptions{})
}

func loadBundleWith(dir string, opts compile.LoadOptions) ([]*interp.Version, error) {
	pls, err := compile.LoadBundleWith(dir, opts)
	if err != nil {
		return nil, err
	}
	return interp.NewVersions(pls), nil
}

func loadDirWith(dir string, opts compile.LoadOptions) ([]*interp.Version, []*compile.BundleError, error) {
	pls, bad, err := compile.LoadDirWith(dir, opts)
	return interp.NewVersions(pls), bad, err
}
