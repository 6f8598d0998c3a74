package compile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bundle folder linked into the deploy directory, or a bundle holding
// a link, is refused naming the link; the others load.
func TestLoadDirRefusesLinks(t *testing.T) {
	deploy, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "deploy.xml"), []byte("<deploy/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(deploy, "linked")); err != nil {
		t.Fatal(err)
	}
	holder := filepath.Join(deploy, "holder")
	if err := os.MkdirAll(holder, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(holder, "deploy.xml"), []byte("<deploy/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(holder, "zero.xsd")); err != nil {
		t.Fatal(err)
	}
	_, bad, err := LoadDirWith(deploy, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, b := range bad {
		got[filepath.Base(b.Dir)] = b.Err.Error()
	}
	for name, want := range map[string]string{"linked": "linked: a symbolic link", "holder": "zero.xsd: a symbolic link"} {
		if !strings.Contains(got[name], want) {
			t.Errorf("bundle %s: %q, want %q", name, got[name], want)
		}
	}
}
