package xmldoc

import (
	"errors"
	"strings"
	"testing"

	"github.com/beevik/etree"
)

func TestParseLines(t *testing.T) {
	src := "<?xml version=\"1.0\"?>\n" + // 1
		"<!-- comment\n" + // 2
		"  spanning lines -->\n" + // 3
		"<a xmlns=\"urn:a\"\n" + // 4
		"   x=\"1\">\n" + // 5
		"  <b/><c>\n" + // 6
		"    <d\n" + // 7
		"/>text</c>\n" + // 8
		"  <![CDATA[\n<e/>\n]]>\n" + // 9-11
		"  <e/>\n" + // 12
		"</a>\n"
	d, err := Parse("t.xml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"a": 4, "b": 6, "c": 6, "d": 7, "e": 12}
	var walk func(e *etree.Element)
	walk = func(e *etree.Element) {
		if got := d.Pos(e); got.Line != want[e.Tag] || got.File != "t.xml" {
			t.Errorf("<%s> at %s, want t.xml:%d", e.Tag, got, want[e.Tag])
		}
		delete(want, e.Tag)
		for _, c := range e.ChildElements() {
			walk(c)
		}
	}
	walk(d.Root)
	if len(want) != 0 {
		t.Errorf("elements not seen: %v", want)
	}
	if got := d.Pos(etree.NewElement("other")); got.Line != 0 || got.String() != "t.xml" {
		t.Errorf("foreign element at %s", got)
	}
}

// Documents that are not well-formed XML must be rejected with a
// *SyntaxError naming the line of the problem.
func TestParseNotWellFormed(t *testing.T) {
	tests := []struct {
		name string
		src  string
		line int
	}{
		{"unquoted attribute", "<a>\n<b x=1/>\n</a>", 2},
		{"mismatched end tag", "<a>\n  <b>\n  </c>\n</a>", 3},
		{"unclosed element", "<a>\n  <b>\n</a>", 3},
		{"unclosed root", "<a>\n  <b/>\n", 3},
		{"two root elements", "<a/>\n<b/>\n", 2},
		{"text after root", "<a/>\ntext\n", 2},
		{"empty", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Parse("t.xml", []byte(tc.src))
			if err == nil {
				t.Fatalf("Parse(%q) succeeded (root <%s>)", tc.src, d.Root.Tag)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T) is not a *SyntaxError", err, err)
			}
			if se.Pos.File != "t.xml" || se.Pos.Line != tc.line {
				t.Errorf("error at %s, want t.xml:%d: %v", se.Pos, tc.line, err)
			}
			if tc.line > 0 && !strings.HasPrefix(err.Error(), se.Pos.String()+": malformed XML") {
				t.Errorf("error %q", err)
			}
		})
	}
}

func TestResolveQName(t *testing.T) {
	d, err := Parse("t.xml", []byte(`<a xmlns="urn:d" xmlns:p="urn:p"><b xmlns:p="urn:q"/></a>`))
	if err != nil {
		t.Fatal(err)
	}
	b := d.Root.ChildElements()[0]
	tests := []struct {
		qn, space, local string
		useDefault, err  bool
	}{
		{qn: "p:x", space: "urn:q", local: "x"},
		{qn: "x", space: "urn:d", local: "x", useDefault: true},
		{qn: "x", space: "", local: "x"},
		{qn: "z:x", err: true},
		{qn: "p:", err: true},
		{qn: "", err: true},
	}
	for _, tc := range tests {
		sp, l, err := ResolveQName(b, tc.qn, tc.useDefault)
		if (err != nil) != tc.err || sp != tc.space || l != tc.local {
			t.Errorf("ResolveQName(%q, %v) = %q, %q, %v", tc.qn, tc.useDefault, sp, l, err)
		}
	}
	ns := Namespaces(b)
	if ns["p"] != "urn:q" || ns[""] != "urn:d" || ns["xml"] != "http://www.w3.org/XML/1998/namespace" {
		t.Errorf("Namespaces = %v", ns)
	}
}

// A UTF-8 byte order mark before the XML declaration or the root element
// is skipped, as ODE's parsers did (several corpus files start with one).
func TestParseBOM(t *testing.T) {
	tests := []struct {
		name string
		src  string
		line int // of the root element
	}{
		{"bom and declaration", "\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a/>", 2},
		{"bom and root", "\xEF\xBB\xBF<a/>", 1},
		{"no bom", "<?xml version=\"1.0\"?>\n\n<a/>", 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Parse("t.xml", []byte(tc.src))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if d.Root.Tag != "a" || d.Pos(d.Root).Line != tc.line {
				t.Errorf("root <%s> at %s, want <a> at line %d", d.Root.Tag, d.Pos(d.Root), tc.line)
			}
		})
	}
}
