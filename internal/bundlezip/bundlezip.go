package bundlezip

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrArchive is wrapped by every error about the archive itself (as
// opposed to a failure writing the folder).
var ErrArchive = errors.New("bad bundle archive")

// Limits bound an extraction. Zero values take the defaults.
type Limits struct {
	// MaxEntries is the most entries (files and folders) the archive may
	// hold (default 4096).
	MaxEntries int
	// MaxBytes is the most bytes extracted in all (default 64 MiB).
	MaxBytes int64
}

// Default limits.
const (
	DefaultMaxEntries = 4096
	DefaultMaxBytes   = 64 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	return l
}

// Extract writes the bundle in the zip archive data into dst, an existing
// empty folder, so that its deploy.xml (or a task package's htconfig.xml
// and .ht files) ends up at the top of dst. On an
// error dst may hold part of the archive: the caller removes it.
func Extract(data []byte, dst string, lim Limits) error {
	lim = lim.withDefaults()
	if err := checkDirectory(data, lim.MaxEntries); err != nil {
		return err
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrArchive, err)
	}
	if len(zr.File) > lim.MaxEntries {
		return fmt.Errorf("%w: %d entries, at most %d", ErrArchive, len(zr.File), lim.MaxEntries)
	}
	prefix, err := root(zr.File)
	if err != nil {
		return err
	}
	left := lim.MaxBytes
	for _, f := range zr.File {
		rel := strings.TrimPrefix(strings.TrimSuffix(f.Name, "/"), prefix)
		if rel == "" || rel+"/" == prefix {
			continue // the top folder itself
		}
		target := filepath.Join(dst, filepath.FromSlash(rel))
		mode := f.Mode()
		switch {
		case mode.IsDir():
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			continue
		case !mode.IsRegular():
			return fmt.Errorf("%w: %s is not a regular file (%s)", ErrArchive, f.Name, mode.Type())
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		n, err := extractFile(f, target, left, lim.MaxBytes)
		if err != nil {
			return err
		}
		left -= n
	}
	return nil
}

// extractFile writes f to target, reading at most left bytes (of max
// for the whole archive).
func extractFile(f *zip.File, target string, left, max int64) (int64, error) {
	rc, err := f.Open()
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %w", ErrArchive, f.Name, err)
	}
	defer rc.Close()
	// Owner only: a bundle may hold passwords and credentials files
	// (orchd:usernameToken refuses one others may read).
	out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return 0, fmt.Errorf("%w: %s appears twice", ErrArchive, f.Name)
	}
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, io.LimitReader(rc, left+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	switch {
	case n > left:
		return n, fmt.Errorf("%w: more than %d bytes uncompressed", ErrArchive, max)
	case err != nil && (errors.Is(err, zip.ErrChecksum) || errors.Is(err, zip.ErrFormat) || errors.Is(err, io.ErrUnexpectedEOF)):
		return n, fmt.Errorf("%w: %s: %w", ErrArchive, f.Name, err)
	case err != nil:
		return n, err
	}
	return n, nil
}

// Marks reports whether a file named base (no folder) marks the folder
// it is in as a bundle's: a process bundle's deploy.xml, or a WSO2 BPS
// task package's htconfig.xml or .ht files (a package of human tasks
// without a deploy.xml).
func Marks(base string) bool {
	return base == "deploy.xml" || base == "htconfig.xml" || (strings.HasSuffix(base, ".ht") && len(base) > len(".ht"))
}

// root checks every entry's name and returns the prefix to strip: ""
// when a marking file (Marks) is at the root, "top/" when it is in the
// one top folder.
func root(files []*zip.File) (string, error) {
	tops := map[string]bool{}
	atRoot := false
	for _, f := range files {
		name := strings.TrimSuffix(f.Name, "/")
		if strings.Contains(f.Name, `\`) || !fs.ValidPath(name) || name == "." {
			return "", fmt.Errorf("%w: entry name %q is not a plain relative path", ErrArchive, f.Name)
		}
		top, _, nested := strings.Cut(name, "/")
		if !nested && !f.Mode().IsDir() {
			if Marks(name) {
				atRoot = true
			}
			tops[""] = true // a file at the root
			continue
		}
		tops[top] = true
	}
	if atRoot {
		return "", nil
	}
	if len(tops) == 1 && !tops[""] {
		for top := range tops {
			for _, f := range files {
				if rest, ok := strings.CutPrefix(f.Name, top+"/"); ok && !f.Mode().IsDir() && !strings.Contains(rest, "/") && Marks(rest) {
					return top + "/", nil
				}
			}
		}
	}
	return "", fmt.Errorf("%w: no deploy.xml (a process bundle) nor .ht file or htconfig.xml (a task package) at the root or in one top folder", ErrArchive)
}
