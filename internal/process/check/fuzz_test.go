package check

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/orchd/orchd/internal/process/wsdl"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// FuzzCheck runs static analysis over arbitrary process documents, with
// the fixtures' definitions (testdata/common.wsdl) imported: no input may
// make it panic, and every finding names a rule, a line and an element.
func FuzzCheck(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.bpel")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	w := wsdl.NewSet("testdata", &xmldoc.Errors{})
	w.LoadWSDL("common.wsdl", xmldoc.Pos{File: "fuzz"})
	w.ResolveMessages()
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := xmldoc.Parse("F.bpel", data)
		if err != nil || d.Root.Tag != "process" {
			return
		}
		for _, fd := range Check(d, w) {
			if fd.Rule == "" || fd.Pos.Line == 0 || fd.Element == "" {
				t.Fatalf("finding without rule, line or element: %#v", fd)
			}
		}
	})
}
