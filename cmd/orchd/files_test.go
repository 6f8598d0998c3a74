package main

import (
	"os"

	"github.com/orchd/orchd/internal/ctl"
	"github.com/orchd/orchd/internal/instancestore"
)

// copyFile copies the file src to dst (the hot deploy tests stage a
// bundle and copy it into the deploy directory file by file).
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

// zipBundle zips a bundle folder as orchd ctl deploy does.
var zipBundle = ctl.ZipBundle

// dataFile is the bbolt store's file name in --data.
const dataFile = instancestore.File
