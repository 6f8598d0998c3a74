package bundlezip

import (
	"archive/zip"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// entry is one archive entry: a folder when name ends with "/", a
// symlink when link is set.
type entry struct {
	name, body string
	link       bool
}

func archive(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.link {
			h.SetMode(fs.ModeSymlink | 0o777)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// files lists the regular files under dir (slash paths) with their bodies.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel)+"="+string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func TestExtract(t *testing.T) {
	big := strings.Repeat("x", 1000)
	tests := []struct {
		name    string
		entries []entry
		lim     Limits
		want    []string // files extracted, "path=body"
		wantErr string   // substring of the error (wrapping ErrArchive)
	}{
		{name: "deploy.xml at the root",
			entries: []entry{{name: "deploy.xml", body: "d"}, {name: "p.bpel", body: "b"}, {name: "wsdl/", body: ""}, {name: "wsdl/a.wsdl", body: "w"}},
			want:    []string{"deploy.xml=d", "p.bpel=b", "wsdl/a.wsdl=w"}},
		{name: "one top folder is stripped",
			entries: []entry{{name: "Hello/"}, {name: "Hello/deploy.xml", body: "d"}, {name: "Hello/x/p.bpel", body: "b"}},
			want:    []string{"deploy.xml=d", "x/p.bpel=b"}},
		{name: "top folder without its own entry",
			entries: []entry{{name: "H/deploy.xml", body: "d"}},
			want:    []string{"deploy.xml=d"}},
		{name: "zip-slip with ..",
			entries: []entry{{name: "deploy.xml"}, {name: "../evil", body: "x"}},
			wantErr: "not a plain relative path"},
		{name: "zip-slip nested ..",
			entries: []entry{{name: "deploy.xml"}, {name: "a/../../evil", body: "x"}},
			wantErr: "not a plain relative path"},
		{name: "absolute name",
			entries: []entry{{name: "deploy.xml"}, {name: "/etc/evil", body: "x"}},
			wantErr: "not a plain relative path"},
		{name: "backslash name",
			entries: []entry{{name: "deploy.xml"}, {name: `..\evil`, body: "x"}},
			wantErr: "not a plain relative path"},
		{name: "symlink",
			entries: []entry{{name: "deploy.xml"}, {name: "link", body: "/etc/passwd", link: true}},
			wantErr: "not a regular file"},
		{name: "task package at the root",
			entries: []entry{{name: "htconfig.xml", body: "c"}, {name: "T.ht", body: "t"}, {name: "T.wsdl", body: "w"}},
			want:    []string{"T.ht=t", "T.wsdl=w", "htconfig.xml=c"}},
		{name: "task package in one top folder",
			entries: []entry{{name: "Task/T.ht", body: "t"}, {name: "Task/T.wsdl", body: "w"}},
			want:    []string{"T.ht=t", "T.wsdl=w"}},
		{name: "no deploy.xml",
			entries: []entry{{name: "p.bpel"}},
			wantErr: "no deploy.xml"},
		{name: "no deploy.xml and no task definitions",
			entries: []entry{{name: "Task/T.wsdl"}, {name: "Task/.ht"}},
			wantErr: "no deploy.xml (a process bundle) nor .ht file or htconfig.xml (a task package)"},
		{name: "deploy.xml two folders down",
			entries: []entry{{name: "a/b/deploy.xml"}},
			wantErr: "no deploy.xml"},
		{name: "two top folders",
			entries: []entry{{name: "a/deploy.xml"}, {name: "b/deploy.xml"}},
			wantErr: "no deploy.xml"},
		{name: "top folder and a root file",
			entries: []entry{{name: "a/deploy.xml"}, {name: "readme"}},
			wantErr: "no deploy.xml"},
		{name: "too many entries",
			entries: []entry{{name: "deploy.xml"}, {name: "a"}, {name: "b"}},
			lim:     Limits{MaxEntries: 2},
			wantErr: "3 entries, at most 2"},
		{name: "too many bytes in one file",
			entries: []entry{{name: "deploy.xml", body: big}},
			lim:     Limits{MaxBytes: 999},
			wantErr: "more than 999 bytes"},
		{name: "too many bytes over several files",
			entries: []entry{{name: "deploy.xml", body: big}, {name: "b", body: big}},
			lim:     Limits{MaxBytes: 1500},
			wantErr: "more than 1500 bytes"},
		{name: "exactly the byte limit",
			entries: []entry{{name: "deploy.xml", body: big}},
			lim:     Limits{MaxBytes: 1000},
			want:    []string{"deploy.xml=" + big}},
		{name: "duplicate entry",
			entries: []entry{{name: "deploy.xml"}, {name: "deploy.xml"}},
			wantErr: "appears twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dst := filepath.Join(parent, "bundle")
			if err := os.Mkdir(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			err := Extract(archive(t, tc.entries...), dst, tc.lim)
			if tc.wantErr != "" {
				if err == nil || !errors.Is(err, ErrArchive) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one wrapping ErrArchive saying %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if got := files(t, dst); !slices.Equal(got, tc.want) {
				t.Errorf("extracted %q, want %q", got, tc.want)
			}
			// Nothing is ever written beside dst.
			ents, _ := os.ReadDir(parent)
			if len(ents) != 1 {
				t.Errorf("the parent folder holds %d entries, want only the bundle folder", len(ents))
			}
		})
	}
}

func TestExtractNotAZip(t *testing.T) {
	err := Extract([]byte("PK not really"), t.TempDir(), Limits{})
	if !errors.Is(err, ErrArchive) {
		t.Fatalf("err = %v, want ErrArchive", err)
	}
}

// FuzzExtract: whatever the archive, Extract does not panic and writes
// nothing outside its folder.
func FuzzExtract(f *testing.F) {
	f.Add(archive(f, entry{name: "deploy.xml", body: "<d/>"}, entry{name: "a/p.bpel", body: "x"}))
	f.Add(archive(f, entry{name: "B/deploy.xml", body: "<d/>"}, entry{name: "B/../x", body: "x"}))
	f.Add(archive(f, entry{name: "deploy.xml"}, entry{name: "l", body: "..", link: true}))
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dst := filepath.Join(parent, "b")
		if err := os.Mkdir(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		_ = Extract(data, dst, Limits{MaxEntries: 64, MaxBytes: 1 << 20})
		ents, err := os.ReadDir(parent)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 1 || ents[0].Name() != "b" {
			t.Fatalf("Extract wrote outside its folder: %v", ents)
		}
		_ = filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type()&fs.ModeSymlink != 0 {
				t.Fatalf("Extract made a symlink %s", p)
			}
			return nil
		})
	})
}
