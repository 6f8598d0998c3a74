package compile

import (
	"testing"

	"github.com/orchd/orchd/internal/process/expr"
)

func TestExtensionKnown(t *testing.T) {
	c := &compiler{}
	if d, m := c.extensionKnown("urn:x"); d || m {
		t.Errorf("no <extensions>: extensionKnown = %v, %v", d, m)
	}
	c.exts = map[string]bool{"urn:yes": true, "urn:no": false}
	for ns, want := range map[string][2]bool{"urn:yes": {true, true}, "urn:no": {true, false}, "urn:other": {false, false}} {
		if d, m := c.extensionKnown(ns); d != want[0] || m != want[1] {
			t.Errorf("extensionKnown(%s) = %v, %v, want %v", ns, d, m, want)
		}
	}
}

// FuzzCompileInsertPath: the insertMissingToData path parser never panics,
// and what it accepts has only steps it can create, attributes and text()
// last.
func FuzzCompileInsertPath(f *testing.F) {
	for _, s := range []string{"tns:a/tns:b/tns:c", "a[2]/@x", "child::a/attribute::o:k", "a[$i]/text()",
		"a//b", "a[@k='/']", "a | b", "../a", "/a", "a/*", "a/node()", "a[1][2]", "@k/a", "a/", "a[$s]", "'"} {
		f.Add(s)
	}
	c := &compiler{scopes: []map[string]*expr.Var{{
		"i": {Name: "i", Simple: "number", Slot: 1},
		"s": {Name: "s", Simple: "string", Slot: 2},
	}}}
	ns := map[string]string{"tns": "urn:test", "o": "urn:other"}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := compileInsertPath(src, c, ns)
		if err != nil {
			return
		}
		for i, st := range p.Steps {
			if (st.Attr || st.Text) && i != len(p.Steps)-1 {
				t.Fatalf("%q: step %d (%+v) is not last", src, i, st)
			}
			if !st.Text && (!expr.ValidNCName(st.Local) || st.Local == "*") {
				t.Fatalf("%q: step %d has no name to create: %+v", src, i, st)
			}
			if st.Index < 0 || (st.IndexVar != nil && st.IndexVar.Simple != "number") {
				t.Fatalf("%q: step %d: bad position %+v", src, i, st)
			}
			if st.Prefix != "" && ns[st.Prefix] != st.Space {
				t.Fatalf("%q: step %d: prefix %q is not %q", src, i, st.Prefix, st.Space)
			}
		}
	})
}
