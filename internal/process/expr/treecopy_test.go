package expr

import (
	"strings"
	"testing"

	"github.com/beevik/etree"
)

func TestCopyTreeMatchesEtreeCopy(t *testing.T) {
	tests := []struct{ name, xml string }{
		{"empty leaf", `<a/>`},
		{"text leaf", `<p:a xmlns:p="urn:p">x &amp; y</p:a>`},
		{"whitespace leaf", "<a>  \n </a>"},
		{"cdata leaf", `<a><![CDATA[<raw>]]></a>`},
		{"attributes", `<a x="1" p:y="2" xmlns:p="urn:p"><b z="3"/></a>`},
		{"mixed content", `<a>t1<b>t2</b>t3<!--c--><?pi x?><c><d>deep</d><e/></c>t4</a>`},
		{"items", `<items xmlns="urn:po"> <item><sku>A</sku><qty>2</qty></item> <item><sku>B</sku><qty>1</qty></item> </items>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := etree.NewDocument()
			if err := doc.ReadFromString(tc.xml); err != nil {
				t.Fatal(err)
			}
			orig := doc.Root()
			want := serialize(t, orig.Copy())
			cp := CopyTree(orig)
			if got := serialize(t, cp); got != want {
				t.Fatalf("copyTree = %s, want %s", got, want)
			}
			if cp.Parent() != nil {
				t.Fatalf("copy has a parent")
			}
			checkTokens(t, cp, orig)
			// The copy is independent: changing it leaves the original
			// as it was, and growing one of its lists does not write
			// over a neighbour's.
			before := serialize(t, orig)
			grow(cp)
			if got := serialize(t, orig); got != before {
				t.Fatalf("changing the copy changed the original: %s, was %s", got, before)
			}
			want2 := etree.NewDocument()
			w := orig.Copy()
			grow(w)
			want2.SetRoot(w)
			if got := serialize(t, cp); got != serialize(t, w) {
				t.Fatalf("grown copy = %s, want %s", got, serialize(t, w))
			}
		})
	}
}

// grow adds an attribute, a child and a text node to every element of e,
// depth first, children before their parent.
func grow(e *etree.Element) {
	for _, c := range e.ChildElements() {
		grow(c)
	}
	e.CreateAttr("added", e.Tag)
	e.CreateElement("new")
	e.CreateText("tail")
}

// checkTokens checks that cp mirrors orig token by token, with parents,
// indexes and text flags right.
func checkTokens(t *testing.T, cp, orig *etree.Element) {
	t.Helper()
	if len(cp.Child) != len(orig.Child) {
		t.Fatalf("%s: %d children, want %d", orig.Tag, len(cp.Child), len(orig.Child))
	}
	for i, ch := range cp.Child {
		if ch.Parent() != cp || ch.Index() != i {
			t.Fatalf("%s child %d: parent %p index %d, want %p %d", orig.Tag, i, ch.Parent(), ch.Index(), cp, i)
		}
		switch c := ch.(type) {
		case *etree.Element:
			if c == orig.Child[i] {
				t.Fatalf("%s child %d is shared, not copied", orig.Tag, i)
			}
			checkTokens(t, c, orig.Child[i].(*etree.Element))
		case *etree.CharData:
			o := orig.Child[i].(*etree.CharData)
			if c == o || c.IsCData() != o.IsCData() || c.IsWhitespace() != o.IsWhitespace() {
				t.Fatalf("%s child %d: text %q cdata %v whitespace %v, want %q %v %v (shared %v)",
					orig.Tag, i, c.Data, c.IsCData(), c.IsWhitespace(), o.Data, o.IsCData(), o.IsWhitespace(), c == o)
			}
		}
	}
}

func serialize(t *testing.T, e *etree.Element) string {
	t.Helper()
	doc := etree.NewDocument()
	doc.AddChild(e.Copy())
	s, err := doc.WriteToString()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCopyChildrenOfGrowsBox(t *testing.T) {
	doc := etree.NewDocument()
	if err := doc.ReadFromString(`<src>a<b>1</b>c<d/><!--skipped--></src>`); err != nil {
		t.Fatal(err)
	}
	box := etree.NewElement("box")
	box.CreateElement("kept")
	var seen []string
	CopyChildrenOf(box, doc.Root(), func(cp, orig *etree.Element) {
		if cp == orig || cp.Tag != orig.Tag {
			t.Errorf("each(%p %s, %p %s)", cp, cp.Tag, orig, orig.Tag)
		}
		seen = append(seen, cp.Tag)
	})
	if got, want := serialize(t, box), `<box><kept/>a<b>1</b>c<d/></box>`; got != want {
		t.Fatalf("box = %s, want %s", got, want)
	}
	if len(seen) != 2 {
		t.Fatalf("each saw %v, want b and d", seen)
	}
	for i, ch := range box.Child {
		if ch.Parent() != box || ch.Index() != i {
			t.Fatalf("child %d: parent/index wrong", i)
		}
	}
}

func TestSetText(t *testing.T) {
	tests := []struct{ xml, text, want string }{
		{`<a/>`, "x", `<a>x</a>`},
		{`<a/>`, "", `<a/>`},
		{`<a>old</a>`, "new", `<a>new</a>`},
		{`<a>old</a>`, "", `<a/>`},
		{`<a>old</a>`, " \n", "<a> \n</a>"},
		{`<a><![CDATA[old]]></a>`, "x<y", `<a>x&lt;y</a>`},
		{`<a><b/>tail</a>`, "x", `<a>x</a>`},
		{`<a><!--c--></a>`, "x", `<a>x</a>`},
		{`<a x="1"><b>1</b><b>2</b></a>`, "x", `<a x="1">x</a>`},
	}
	for _, tc := range tests {
		doc := etree.NewDocument()
		if err := doc.ReadFromString(tc.xml); err != nil {
			t.Fatal(err)
		}
		e := doc.Root()
		SetText(e, tc.text)
		if got := serialize(t, e); got != tc.want {
			t.Errorf("setText(%s, %q) = %s, want %s", tc.xml, tc.text, got, tc.want)
		}
		if tc.text == "" {
			continue
		}
		cd, ok := e.Child[0].(*etree.CharData)
		if len(e.Child) != 1 || !ok || cd.Parent() != e || cd.Index() != 0 || cd.IsCData() || cd.IsWhitespace() != (strings.TrimSpace(tc.text) == "") {
			t.Errorf("setText(%s, %q): children %#v", tc.xml, tc.text, e.Child)
		}
		// The element still grows like any other.
		e.CreateElement("more")
		if got, want := serialize(t, e), strings.TrimSuffix(tc.want, "</a>")+"<more/></a>"; got != want {
			t.Errorf("setText(%s, %q) then a child = %s, want %s", tc.xml, tc.text, got, want)
		}
	}
}

// TestCopyTreeRoom checks the capacity copies keep: one slot for an empty
// element that had room (a part wrapper waiting for its element), never an
// emptied element's old capacity.
func TestCopyTreeRoom(t *testing.T) {
	root := etree.NewElement("root")
	wrapper := root.CreateElement("wrapper")
	wrapper.Child = make([]etree.Token, 0, 1)
	emptied := root.CreateElement("emptied")
	for range 100 {
		emptied.CreateElement("x")
	}
	ClearChildren(emptied)
	full := root.CreateElement("full")
	full.CreateText("a")
	full.CreateElement("b")
	cp := CopyTree(root)
	for i, want := range []int{1, 1, 2} {
		if got := cap(cp.Child[i].(*etree.Element).Child); got != want {
			t.Errorf("%s: child list capacity %d, want %d", cp.Child[i].(*etree.Element).Tag, got, want)
		}
	}
	if got := cap(cp.Child); got != 3 {
		t.Errorf("root: child list capacity %d, want 3", got)
	}
}
