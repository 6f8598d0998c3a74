package process

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

// TestDeployLimits: a bundle file with 100,000 attributes on one element
// (the WSDL, the BPEL, deploy.xml) is refused at deploy with an error
// naming the file, the line and the limit, before etree (quadratic in
// attributes) reads it.
func TestDeployLimits(t *testing.T) {
	var b strings.Builder
	for i := range 100_000 {
		b.WriteString(" a" + strconv.FormatInt(int64(i), 36) + `="v"`)
	}
	attrs := b.String()
	tests := []struct {
		file, marker string
	}{
		{"test.wsdl", "<wsdl:definitions "},
		{"Test.bpel", "<process "},
		{"deploy.xml", "<deploy "},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(bundlesDir, "good-minimal")
			ents, err := os.ReadDir(src)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				data, err := os.ReadFile(filepath.Join(src, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if e.Name() == tc.file {
					if !strings.Contains(string(data), tc.marker) {
						t.Fatalf("%s has no %q", tc.file, tc.marker)
					}
					data = []byte(strings.Replace(string(data), tc.marker, tc.marker+attrs+" ", 1))
				}
				if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err = loadBundle(dir)
			var le *xmldoc.LimitError
			if !errors.As(err, &le) || le.Pos.File != tc.file || le.Pos.Line == 0 {
				t.Fatalf("LoadBundle = %v, want the attributes limit in %s", err, tc.file)
			}
			if !strings.Contains(err.Error(), tc.file+":") || !strings.Contains(err.Error(), "1000 attributes per element") {
				t.Errorf("error %q does not name the file, the line and the limit", err)
			}
		})
	}
}
