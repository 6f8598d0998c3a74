package soap

import (
	"bytes"
	"testing"

	"github.com/beevik/etree"
)

// TestWriteElementAsEtree: writeElement writes what etree's WriteTo
// writes, for every document element of the repository's XML and for text
// and attribute values etree escapes or replaces.
func TestWriteElementAsEtree(t *testing.T) {
	check := func(name string, e *etree.Element) {
		t.Helper()
		var want, got bytes.Buffer
		e.WriteTo(&want, &writeSettings)
		writeElement(&got, e)
		if got.String() != want.String() {
			t.Errorf("%s:\n got %.300q\nwant %.300q", name, got.String(), want.String())
		}
	}
	for path, data := range xmlCorpus(t) {
		doc, err := parseTree(data, Limits{})
		if err != nil || doc.Root() == nil {
			continue
		}
		check(path, doc.Root())
	}
	e := etree.NewElement("a")
	e.Space = "p"
	for _, s := range []string{"", "plain", `<&>'"`, "tab\tnl\ncr\r", "ctl\x01\x1f", "bad\xffutf8\xc3", "\uFFFE\uFFFF", "\U0001F600 \u00e9", "\xed\xa0\x80"} {
		e.Child = nil
		e.Attr = nil
		e.CreateAttr("x:v", s)
		e.CreateText(s)
		e.CreateCData(s + "]]>")
		e.CreateComment("c")
		e.CreateProcInst("pi", "d")
		check(s, e)
	}
}

// TestWriteElementReadsBack: text and attribute values holding a carriage
// return, tab or line feed read back (through the parser, which
// normalizes raw line ends) as they were.
func TestWriteElementReadsBack(t *testing.T) {
	for _, s := range []string{"cr\r", "crlf\r\n", "tab\tnl\n", "\r\r\n\n"} {
		e := etree.NewElement("a")
		e.CreateAttr("v", s)
		e.CreateText(s)
		var b bytes.Buffer
		writeElement(&b, e)
		doc, err := parseTree(b.Bytes(), Limits{})
		if err != nil {
			t.Fatalf("%q: %v", b.String(), err)
		}
		r := doc.Root()
		if got := r.SelectAttrValue("v", ""); got != s {
			t.Errorf("%q: attribute read back as %q", s, got)
		}
		if got := r.Text(); got != s {
			t.Errorf("%q: text read back as %q", s, got)
		}
	}
}
