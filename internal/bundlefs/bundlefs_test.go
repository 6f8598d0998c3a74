package bundlefs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// bundle makes a bundle folder beside a file outside it, with a regular
// file, a subfolder, and the links and special files the tests refuse.
func bundle(t *testing.T) (dir, outside string) {
	t.Helper()
	top := t.TempDir()
	dir = filepath.Join(top, "b")
	outside = filepath.Join(top, "outside.xsd")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(outside, []byte("MARKER"), 0o644))
	must(os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "deploy.xml"), []byte("<deploy/>"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "sub", "a.xsd"), []byte("<schema/>"), 0o644))
	must(os.Symlink(outside, filepath.Join(dir, "out.xsd")))
	must(os.Symlink("deploy.xml", filepath.Join(dir, "in.xml")))
	must(os.Symlink("/dev/zero", filepath.Join(dir, "zero.xsd")))
	must(os.Symlink("sub", filepath.Join(dir, "linkdir")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo.xsd"), 0o644))
	return dir, outside
}

func TestReadFile(t *testing.T) {
	dir, _ := bundle(t)
	for _, tc := range []struct {
		name, file string
		want       string // content, or "" for a refusal
		reason     string // in the error of a refusal
	}{
		{"regular", "deploy.xml", "<deploy/>", ""},
		{"in a subfolder", "sub/a.xsd", "<schema/>", ""},
		{"cleaned", "sub/../sub/./a.xsd", "<schema/>", ""},
		{"link outside", "out.xsd", "", "symbolic link"},
		{"link inside", "in.xml", "", "symbolic link"},
		{"link to /dev/zero", "zero.xsd", "", "symbolic link"},
		{"through a linked folder", "linkdir/a.xsd", "", "symbolic link"},
		{"fifo", "fifo.xsd", "", "named pipe"},
		{"folder", "sub", "", "folder"},
		{"parent", "../outside.xsd", "", "leaves the bundle"},
		{"absolute", "/etc/passwd", "", "leaves the bundle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ReadFile(dir, tc.file, Limits{})
			if tc.want != "" {
				if err != nil || string(b) != tc.want {
					t.Fatalf("ReadFile(%q) = %q, %v; want %q", tc.file, b, err, tc.want)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("ReadFile(%q) = %q, %v; want a refusal saying %q", tc.file, b, err, tc.reason)
			}
			if strings.Contains(string(b), "MARKER") {
				t.Fatalf("read the file outside")
			}
		})
	}
}

func TestReadFileMissing(t *testing.T) {
	dir, _ := bundle(t)
	if _, err := ReadFile(dir, "none.xsd", Limits{}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v, want ErrNotExist", err)
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, add string // the one special entry added to a clean bundle
		reason    string
	}{
		{"clean", "", ""},
		{"link outside", "out.xsd", "symbolic link"},
		{"link inside", "in.xml", "symbolic link"},
		{"link to /dev/zero", "zero.xsd", "symbolic link"},
		{"linked folder", "linkdir", "symbolic link"},
		{"fifo", "fifo.xsd", "named pipe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full, _ := bundle(t)
			// Keep only tc.add of the special entries.
			for _, n := range []string{"out.xsd", "in.xml", "zero.xsd", "linkdir", "fifo.xsd"} {
				if n != tc.add {
					if err := os.Remove(filepath.Join(full, n)); err != nil {
						t.Fatal(err)
					}
				}
			}
			err := Check(full, Limits{})
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			var fe *FileError
			if !errors.As(err, &fe) || fe.File != tc.add || !strings.Contains(fe.Reason, tc.reason) {
				t.Fatalf("Check = %v; want a refusal of %s saying %q", err, tc.add, tc.reason)
			}
		})
	}
}

func TestSizeBounds(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.xsd", "b.xsd", "c.xsd"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(strings.Repeat("x", 100)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		lim    Limits
		read   bool   // ReadFile of a.xsd succeeds
		reason string // Check's refusal, "" for none
	}{
		{"defaults", Limits{}, true, ""},
		{"at the bounds", Limits{MaxFile: 100, MaxBundle: 300}, true, ""},
		{"file over", Limits{MaxFile: 99}, false, "--bundle-file-max"},
		{"bundle over", Limits{MaxFile: 100, MaxBundle: 299}, true, "--bundle-max"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ReadFile(dir, "a.xsd", tc.lim)
			if tc.read != (err == nil) {
				t.Fatalf("ReadFile: %d bytes, %v", len(b), err)
			}
			if err != nil && (!errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "--bundle-file-max")) {
				t.Fatalf("ReadFile over the bound: %v", err)
			}
			err = Check(dir, tc.lim)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("Check = %v; want a refusal naming %s", err, tc.reason)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	l := Limits{}.WithDefaults()
	if l.MaxFile != DefaultMaxFile || l.MaxBundle != DefaultMaxBundle {
		t.Fatalf("defaults: %+v", l)
	}
}
