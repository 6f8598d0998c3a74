package check

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/process/wsdl"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// load reads the process file name of dir and the WSDLs it imports, as
// the bundle loader does (internal/process/compile/bundle.go) before it compiles.
func load(t testing.TB, dir, name string) (*xmldoc.Document, *wsdl.Set, *xmldoc.Errors) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	d, err := xmldoc.Parse(name, data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	errs := &xmldoc.Errors{}
	w := wsdl.NewSet(dir, errs)
	for _, imp := range d.Root.SelectElements("import") {
		if imp.SelectAttrValue("importType", "") == xmldoc.ImportWSDL {
			w.LoadWSDL(imp.SelectAttrValue("location", ""), d.Pos(imp))
		}
	}
	w.ResolveMessages()
	return d, w, errs
}

// want is the rule and line a fixture expects, one "<!-- want SA... -->"
// comment at the end of the offending line (in the fixture's .bpel or
// its own .wsdl).
var wantMarker = regexp.MustCompile(`<!-- want ((?:SA\d{5} ?)+)-->`)

func wanted(t *testing.T, dir, stem string) []string {
	t.Helper()
	var out []string
	files, _ := filepath.Glob(filepath.Join(dir, stem+".*"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if m := wantMarker.FindStringSubmatch(line); m != nil {
				for _, r := range strings.Fields(m[1]) {
					out = append(out, fmt.Sprintf("%s:%d %s", filepath.Base(f), i+1, r))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestFixtures: each testdata/SAnnnnn-*.bpel breaks its rule (and only
// it) where its markers say; valid.bpel breaks none.
func TestFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/*.bpel")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		stem := strings.TrimSuffix(name, ".bpel")
		t.Run(stem, func(t *testing.T) {
			d, w, errs := load(t, "testdata", name)
			if err := errs.Err(); err != nil {
				t.Fatalf("fixture does not load: %v", err)
			}
			var got []string
			for _, fd := range Check(d, w) {
				if fd.Pos.Line == 0 || fd.Element == "" || fd.Msg == "" {
					t.Errorf("finding without position, element or message: %v", fd)
				}
				got = append(got, fmt.Sprintf("%s:%d %s", fd.Pos.File, fd.Pos.Line, fd.Rule))
			}
			sort.Strings(got)
			want := wanted(t, "testdata", stem)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("findings:\n%s\nwant:\n%s\n(all: %v)", strings.Join(got, "\n"), strings.Join(want, "\n"), Check(d, w))
			}
			if rule := strings.SplitN(stem, "-", 2)[0]; stem != "valid" && !slices.ContainsFunc(want, func(w string) bool { return strings.HasSuffix(w, " "+rule) }) {
				t.Errorf("fixture %s is not named after a rule it wants (%v)", stem, want)
			}
		})
	}
}

// TestEveryRuleHasAFixture: every rule of the table has a fixture named
// after it that expects it, and every fixture names a rule of the table.
func TestEveryRuleHasAFixture(t *testing.T) {
	ids := map[string]bool{}
	for i, r := range Rules() {
		if ids[r.ID] {
			t.Errorf("rule %s is in the table twice", r.ID)
		}
		ids[r.ID] = true
		if i > 0 && Rules()[i-1].ID >= r.ID {
			t.Errorf("rule %s is out of order", r.ID)
		}
		files, _ := filepath.Glob(filepath.Join("testdata", r.ID+"-*.bpel"))
		if len(files) == 0 {
			t.Errorf("rule %s has no fixture testdata/%s-*.bpel", r.ID, r.ID)
		}
		for _, f := range files {
			stem := strings.TrimSuffix(filepath.Base(f), ".bpel")
			found := false
			for _, w := range wanted(t, "testdata", stem) {
				found = found || strings.HasSuffix(w, " "+r.ID)
			}
			if !found {
				t.Errorf("fixture %s expects no %s finding", f, r.ID)
			}
		}
	}
	files, _ := filepath.Glob("testdata/SA*.bpel")
	for _, f := range files {
		if id := filepath.Base(f)[:7]; !ids[id] {
			t.Errorf("fixture %s is for %s, which the table does not check", f, id)
		}
	}
}

// TestDocsTable: docs/static-analysis.md has a row for every rule number
// from SA00001 to SA00095, and says "checked" exactly for the rules of
// the table.
func TestDocsTable(t *testing.T) {
	data, err := os.ReadFile("../../../docs/static-analysis.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (SA\d{5}) \| [^|]* \| ([a-z ]+?)[ |:]`)
	rows := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		rows[m[1]] = m[2]
	}
	ids := map[string]bool{}
	for _, r := range Rules() {
		ids[r.ID] = true
	}
	for i := 1; i <= 95; i++ {
		id := fmt.Sprintf("SA%05d", i)
		status, ok := rows[id]
		switch {
		case !ok:
			t.Errorf("docs/static-analysis.md has no row for %s", id)
		case ids[id] != (status == "checked"):
			t.Errorf("docs/static-analysis.md says %s is %q; the table %s it", id, status, map[bool]string{true: "checks", false: "does not check"}[ids[id]])
		}
	}
}

// BenchmarkCheckDeploy is static analysis alone over the processes of
// deploy/ (parsed and their WSDLs loaded once, outside the loop).
func BenchmarkCheckDeploy(b *testing.B) {
	files, _ := filepath.Glob("../../../deploy/*/*.bpel")
	if len(files) == 0 {
		b.Fatal("no processes in deploy/")
	}
	type proc struct {
		d *xmldoc.Document
		w *wsdl.Set
	}
	var procs []proc
	for _, f := range files {
		d, w, _ := load(b, filepath.Dir(f), filepath.Base(f))
		procs = append(procs, proc{d, w})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range procs {
			if fs := Check(p.d, p.w); len(fs) > 0 {
				b.Fatalf("findings in deploy/: %v", fs)
			}
		}
	}
}
