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

// insertCopies are the copies of the rt-insert-missing fixture's assign
// "copies", which each case replaces with its own (on one line).
const insertCopies = `        <copy insertMissingToData="yes"><from>$in.payload/tns:id</from><to>$out.payload/tns:a/tns:b/tns:c</to></copy>
        <copy ode:insertMissingToData="yes"><from>$in.payload/tns:text</from><to variable="out" part="payload"><query>tns:a/tns:x[$i]/@o:flag</query></to></copy>
`

// insertBundle is rt-insert-missing with copies in place of insertCopies
// (unchanged when copies is empty), and the line the copies start on.
func insertBundle(t *testing.T, copies string) (string, int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(bundlesDir, "rt-insert-missing", "Test.bpel"))
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Count(string(b[:strings.Index(string(b), insertCopies)]), "\n") + 1
	if copies == "" {
		return filepath.Join(bundlesDir, "rt-insert-missing"), line
	}
	return editedBundle(t, "rt-insert-missing", map[string][]string{"Test.bpel": {insertCopies, copies + "\n"}}), line
}

// The fixture starts out.payload as <resp><a><x>1</x><y>2</y></a></resp>
// and $i as the request's n; a selectionFailure is caught and sets y.
func TestInsertMissingToData(t *testing.T) {
	const (
		x1   = `<{urn:test}x>1</>`
		y2   = `<{urn:test}y>2</>`
		ySel = `<{urn:test}y>selectionFailure</>`
	)
	resp := func(aContent, after string) string {
		return `<{urn:test}resp><{urn:test}a>` + aContent + `</>` + after + `</>`
	}
	bc := `<{urn:test}b><{urn:test}c>A-1</></>`
	tests := []struct {
		name   string
		copies string // "" for the fixture's own
		n      string
		want   string
	}{
		{name: "missing b and c, then the next x[$i] with an attribute", n: "2",
			want: resp(x1+`<{urn:test}x {urn:other}flag="hello"></>`+y2+bc, "")},
		{name: "x[$i] exists: only its attribute is created", n: "1",
			want: resp(`<{urn:test}x {urn:other}flag="hello">1</>`+y2+bc, "")},
		{name: "x[3] with one x is a selectionFailure, nothing created (the assign's first copy is undone)", n: "3",
			want: resp(x1+ySel, "")},
		{name: "x[0] names no position", n: "0",
			want: resp(x1+ySel, "")},
		{name: "without the attribute: selectionFailure as before",
			copies: `<copy><from>$in.payload/tns:id</from><to>$out.payload/tns:a/tns:b/tns:c</to></copy>`,
			want:   resp(x1+ySel, "")},
		{name: "insertMissingToData=no",
			copies: `<copy insertMissingToData="no"><from>$in.payload/tns:id</from><to>$out.payload/tns:a/tns:b</to></copy>`,
			want:   resp(x1+ySel, "")},
		{name: "attribute of an existing element",
			copies: `<copy insertMissingToData="yes"><from>$in.payload/tns:id</from><to>$out.payload/tns:a/@code</to></copy>`,
			want:   `<{urn:test}resp><{urn:test}a code="A-1">` + x1 + y2 + `</></>`},
		{name: "positional literal: the next one goes after the last x",
			copies: `<copy insertMissingToData="yes"><from>'v'</from><to>$out.payload/tns:a/tns:x[2]</to></copy>`,
			want:   resp(x1+`<{urn:test}x>v</>`+y2, "")},
		{name: "uninitialized element variable: its root from the declaration",
			copies: `<copy insertMissingToData="yes"><from>$in.payload/tns:id</from><to>$doc/tns:a/@code</to></copy><copy><from>$doc</from><to variable="out" part="payload"/></copy>`,
			want:   `<{urn:test}resp><{urn:test}a code="A-1"></></>`},
		{name: "uninitialized element variable, query form",
			copies: `<copy insertMissingToData="yes"><from>$in.payload/tns:id</from><to variable="doc"><query>@o:flag</query></to></copy><copy><from>$doc</from><to variable="out" part="payload"/></copy>`,
			want:   `<{urn:test}resp {urn:other}flag="A-1"></>`},
		{name: "namespaced steps with the document's prefix",
			copies: `<copy insertMissingToData="yes"><from>$in.payload/tns:id</from><to>$out.payload/o:extra/o:deep</to></copy>`,
			want:   resp(x1+y2, `<{urn:other}extra><{urn:other}deep>A-1</></>`)},
		{name: "the document's prefix is bound otherwise in the variable",
			copies: `<copy><from><literal><tns:resp xmlns:o="urn:third"><o:m/></tns:resp></literal></from><to variable="out" part="payload"/></copy>` +
				`<copy insertMissingToData="yes"><from>$in.payload/tns:id</from><to>$out.payload/o:extra/@o:k</to></copy>`,
			want: `<{urn:test}resp><{urn:third}m></><{urn:other}extra {urn:other}k="A-1"></></>`},
		{name: "default namespace in the variable; an unqualified step",
			copies: `<copy><from><literal><resp xmlns="urn:test"><a/></resp></literal></from><to variable="out" part="payload"/></copy>` +
				`<copy insertMissingToData="yes"><from>'q'</from><to>$out.payload/tns:a/tns:b</to></copy>` +
				`<copy insertMissingToData="yes"><from>'u'</from><to>$out.payload/tns:a/plain</to></copy>`,
			want: `<{urn:test}resp><{urn:test}a><{urn:test}b>q</><{}plain>u</></></>`},
		{name: "child:: axis and text()",
			copies: `<copy insertMissingToData="yes"><from>$in.payload/tns:id</from><to>$out.payload/child::tns:a/child::tns:t/text()</to></copy>`,
			want:   resp(x1+y2+`<{urn:test}t>A-1</>`, "")},
		{name: "a step matching two elements is ambiguous (the x the first copy made is undone)",
			copies: `<copy insertMissingToData="yes"><from>'v'</from><to>$out.payload/tns:a/tns:x[2]</to></copy>` +
				`<copy insertMissingToData="yes"><from>'w'</from><to>$out.payload/tns:a/tns:x/tns:k</to></copy>`,
			want: resp(x1+ySel, "")},
		{name: "position 2 below a new element: nothing created",
			copies: `<copy insertMissingToData="yes"><from>'v'</from><to>$out.payload/tns:a/tns:new/tns:z[2]</to></copy>`,
			want:   resp(x1+ySel, "")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := insertBundle(t, tc.copies)
			procs, err := loadBundle(dir)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			e := NewEngine(Options{})
			if err := e.Deploy(procs...); err != nil {
				t.Fatal(err)
			}
			n := tc.n
			if n == "" {
				n = "1"
			}
			r := dispatch(t, e, procs[0], testReq("A-1", n, "hello"))
			if r.err != nil || r.fault != nil {
				t.Fatalf("err %v, fault %v", r.err, r.fault)
			}
			out := r.out.Parts["payload"]
			if got := canon(out); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			checkSelfContained(t, out)
		})
	}
}

// A copy with insertMissingToData whose path has steps orchd cannot create
// is refused at deploy, naming the file, line, element and construct.
func TestInsertMissingToDataRefused(t *testing.T) {
	const from = `<from>$in.payload/tns:id</from>`
	tests := []struct {
		name, copies string
		errs         []string
	}{
		{"descendant", `<copy insertMissingToData="yes">` + from + `<to variable="out" part="payload"><query>tns:a//tns:c</query></to></copy>`,
			[]string{"<query>", "// (descendant steps)"}},
		{"predicate", `<copy insertMissingToData="yes">` + from + `<to>$out.payload/tns:a[@k='1']/tns:b</to></copy>`,
			[]string{"<to>", `predicate [@k='1']`}},
		{"arithmetic position", `<copy insertMissingToData="yes">` + from + `<to>$out.payload/tns:a[$i + 1]</to></copy>`,
			[]string{"<to>", `predicate [$i + 1]`}},
		{"union", `<copy insertMissingToData="yes">` + from + `<to variable="out" part="payload"><query>tns:a | tns:b</query></to></copy>`,
			[]string{"<query>", "a union (|)"}},
		{"node test", `<copy insertMissingToData="yes">` + from + `<to>$out.payload/tns:a/node()</to></copy>`,
			[]string{"<to>", "a function call or node test"}},
		{"wildcard", `<copy insertMissingToData="yes">` + from + `<to>$out.payload/tns:a/*</to></copy>`,
			[]string{"<to>", "a wildcard"}},
		{"parent", `<copy insertMissingToData="yes">` + from + `<to variable="out" part="payload"><query>tns:a/../tns:b</query></to></copy>`,
			[]string{"<query>", ". and .."}},
		{"axis", `<copy insertMissingToData="yes">` + from + `<to variable="out" part="payload"><query>descendant::tns:a</query></to></copy>`,
			[]string{"<query>", "the descendant:: axis"}},
		{"absolute", `<copy insertMissingToData="yes">` + from + `<to variable="out" part="payload"><query>/tns:resp/tns:a</query></to></copy>`,
			[]string{"<query>", "an absolute path"}},
		{"attribute not last", `<copy insertMissingToData="yes">` + from + `<to variable="out" part="payload"><query>@k/tns:a</query></to></copy>`,
			[]string{"<query>", "must be the last"}},
		{"property", `<copy insertMissingToData="yes">` + from + `<to variable="in" property="tns:orderId"/></copy>`,
			[]string{"<to>", "variable property"}},
		{"unknown namespace", `<copy xmlns:q="urn:q" q:insertMissingToData="yes">` + from + `<to>$out.payload/tns:a</to></copy>`,
			[]string{"<copy>", `q:insertMissingToData is in namespace "urn:q"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, line := insertBundle(t, tc.copies)
			_, err := loadBundle(dir)
			if err == nil {
				t.Fatal("the bundle loaded; want it refused")
			}
			var errs *xmldoc.Errors
			if !errors.As(err, &errs) || len(errs.List) != 1 {
				t.Fatalf("want one error, got %v", err)
			}
			msg := err.Error()
			for _, want := range append([]string{"Test.bpel:" + strconv.Itoa(line) + ":"}, tc.errs...) {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not name %q", msg, want)
				}
			}
		})
	}
}
