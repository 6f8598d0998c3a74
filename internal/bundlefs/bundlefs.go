package bundlefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// Default bounds. DefaultMaxBundle is also the zip upload's bound on
// the bytes extracted (bundlezip.DefaultMaxBytes), so both paths of a
// deploy take the same figure.
const (
	DefaultMaxFile   = 16 << 20
	DefaultMaxBundle = 64 << 20
)

// ErrRefused is wrapped by every error about a bundle file that is not
// a regular file inside the bundle's folder or is over a bound.
var ErrRefused = errors.New("bundle file refused")

// Limits bound what is read of a bundle. Zero values take the defaults.
type Limits struct {
	// MaxFile is the most bytes of one file (--bundle-file-max).
	MaxFile int64
	// MaxBundle is the most bytes of all the files of a bundle
	// (--bundle-max), and of a zip upload once extracted.
	MaxBundle int64
}

// WithDefaults returns l with zero fields set to the defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxFile <= 0 {
		l.MaxFile = DefaultMaxFile
	}
	if l.MaxBundle <= 0 {
		l.MaxBundle = DefaultMaxBundle
	}
	return l
}

// FileError is a bundle file refused: File is its slash-separated path
// relative to the folder checked, Reason says why.
type FileError struct {
	File   string
	Reason string
}

func (e *FileError) Error() string { return e.File + ": " + e.Reason }

// Unwrap makes errors.Is(err, ErrRefused) hold.
func (e *FileError) Unwrap() error { return ErrRefused }

func refused(file, format string, a ...any) error {
	return &FileError{File: file, Reason: fmt.Sprintf(format, a...)}
}

// kind names a file mode that is not a regular file.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link (a bundle holds regular files only)"
	case m&fs.ModeDevice != 0:
		return "a device (a bundle holds regular files only)"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (a bundle holds regular files only)"
	case m&fs.ModeSocket != 0:
		return "a socket (a bundle holds regular files only)"
	case m.IsDir():
		return "a folder, not a file"
	}
	return "not a regular file (" + m.Type().String() + ")"
}

// Check walks the bundle folder dir without following links and refuses
// the first entry that is not a regular file or folder, a file over
// lim.MaxFile, or a bundle whose files sum over lim.MaxBundle. Dot
// entries are checked too: nothing in a bundle's folder may be a link.
func Check(dir string, lim Limits) error {
	lim = lim.WithDefaults()
	if fi, err := os.Lstat(dir); err != nil {
		return fmt.Errorf("bundle folder: %w", err)
	} else if !fi.IsDir() {
		return refused(filepath.Base(dir), "%s", kind(fi.Mode()))
	}
	var total int64
	return filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("bundle folder: %w", err)
		}
		if p == dir {
			return nil
		}
		rel, rerr := filepath.Rel(dir, p)
		if rerr != nil {
			return fmt.Errorf("bundle folder: %w", rerr)
		}
		rel = filepath.ToSlash(rel)
		if e.IsDir() {
			return nil
		}
		if !e.Type().IsRegular() {
			return refused(rel, "%s", kind(e.Type()))
		}
		fi, ierr := e.Info()
		if ierr != nil {
			return fmt.Errorf("bundle file %s: %w", rel, ierr)
		}
		if fi.Size() > lim.MaxFile {
			return refused(rel, "%d bytes, over the bound of %d for one bundle file (--bundle-file-max)", fi.Size(), lim.MaxFile)
		}
		total += fi.Size()
		if total > lim.MaxBundle {
			return refused(rel, "the bundle's files reach %d bytes, over the bound of %d for a bundle (--bundle-max)", total, lim.MaxBundle)
		}
		return nil
	})
}

// ReadFile reads name, a slash-separated path relative to the folder
// dir, as a regular file inside dir: absolute names, names leaving dir,
// a symbolic link at any step of the path, and anything but a regular
// file are refused, and so is a file over lim.MaxFile (measured while
// reading too, whatever its size claimed).
func ReadFile(dir, name string, lim Limits) ([]byte, error) {
	b, _, err := ReadFileInfo(dir, name, lim)
	return b, err
}

// ReadFileInfo is ReadFile also returning the file's information (its
// permissions, for a credentials file that must be private).
func ReadFileInfo(dir, name string, lim Limits) ([]byte, fs.FileInfo, error) {
	lim = lim.WithDefaults()
	clean := path.Clean(name)
	if path.IsAbs(clean) || !filepath.IsLocal(filepath.FromSlash(clean)) {
		return nil, nil, refused(name, "leaves the bundle's folder")
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("bundle folder: %w", err)
	}
	defer root.Close()
	// No step of the path may be a link, even one that stays inside.
	parts := strings.Split(clean, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		li, err := root.Lstat(filepath.FromSlash(p))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		last := i == len(parts)-1
		if li.Mode()&fs.ModeSymlink != 0 || (last && !li.Mode().IsRegular()) || (!last && !li.IsDir()) {
			return nil, nil, refused(p, "%s", kind(li.Mode()))
		}
	}
	// O_NONBLOCK: should a FIFO replace the file after the checks, the
	// open returns at once and Stat below refuses it.
	f, err := root.OpenFile(filepath.FromSlash(clean), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, refused(clean, "%s", kind(fi.Mode()))
	}
	if fi.Size() > lim.MaxFile {
		return nil, nil, refused(clean, "%d bytes, over the bound of %d for one bundle file (--bundle-file-max)", fi.Size(), lim.MaxFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, lim.MaxFile+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(b)) > lim.MaxFile {
		return nil, nil, refused(clean, "over the bound of %d bytes for one bundle file (--bundle-file-max)", lim.MaxFile)
	}
	return b, fi, nil
}
