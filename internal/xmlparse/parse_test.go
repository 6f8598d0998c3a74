package xmlparse

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/beevik/etree"
)

// serialize writes the top-level tokens of doc as etree does.
func serialize(doc *etree.Document) string {
	var b strings.Builder
	for _, c := range doc.Child {
		c.WriteTo(&b, &doc.WriteSettings)
	}
	return b.String()
}

// attrs returns <a> with n attributes, or n namespace declarations when
// decls, followed by extra.
func attrs(n int, decls bool, extra string) string {
	var b strings.Builder
	b.WriteString("<a")
	for i := range n {
		if decls {
			b.WriteString(" xmlns:p" + strconv.Itoa(i) + `="urn:` + strconv.Itoa(i) + `"`)
		} else {
			b.WriteString(" x" + strconv.Itoa(i) + `="v"`)
		}
	}
	b.WriteString(extra + "/>")
	return b.String()
}

func TestParseAccepts(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"xml declaration", `<?xml version="1.0" encoding="UTF-8"?><a/>`, `<?xml version="1.0" encoding="UTF-8"?><a/>`},
		{"byte order mark", "\xef\xbb\xbf<a/>", `<a/>`},
		{"predefined entities", `<a x="&lt;&gt;&amp;&apos;&quot;">&lt;&gt;&amp;&apos;&quot;</a>`, `<a x="&lt;>&amp;'&quot;">&lt;&gt;&amp;'"</a>`},
		{"character references", `<a x="&#65;&#x42;">&#x1F600;&#233;</a>`, "<a x=\"AB\">\U0001F600\u00e9</a>"},
		{"CDATA is text", `<a><![CDATA[<b> & ]] ]]></a>`, `<a>&lt;b&gt; &amp; ]] </a>`},
		{"line ends", "<a x='1\r\n2'>3\r\n4\r5</a>", "<a x=\"1&#xA;2\">3\n4\n5</a>"},
		{"carriage return by reference", "<a x='&#13;'>&#13;</a>", "<a x=\"&#xD;\">&#xD;</a>"},
		{"indentation dropped", "<a>\n  <b>1</b>\n  <c/>\n</a>", "<a><b>1</b><c/></a>"},
		{"lone whitespace kept", "<a> </a>", "<a> </a>"},
		{"mixed content kept", "<a>x <b/> y</a>", "<a>x <b/> y</a>"},
		{"comments and PIs inside", "<a><!-- c --><?pi some data?></a>", "<a><!-- c --><?pi some data?></a>"},
		{"]] and > in text", "<a>]] > ]</a>", "<a>]] &gt; ]</a>"},
		{"> and other quote in attribute", `<a x="'>" y='"'/>`, `<a x="'>" y="&quot;"/>`},
		{"prefixes bound", `<p:a xmlns:p="urn:p" xmlns="urn:d"><p:b p:x="1" x="2"/><c xml:lang="en"/></p:a>`, `<p:a xmlns:p="urn:p" xmlns="urn:d"><p:b p:x="1" x="2"/><c xml:lang="en"/></p:a>`},
		{"default namespace undeclared", `<a xmlns="urn:a"><b xmlns=""/></a>`, `<a xmlns="urn:a"><b xmlns=""/></a>`},
		{"xml prefix declared as itself", `<a xmlns:xml="http://www.w3.org/XML/1998/namespace"/>`, `<a xmlns:xml="http://www.w3.org/XML/1998/namespace"/>`},
		{"same local name, two namespaces", `<a xmlns:p="urn:1" xmlns:q="urn:2" p:x="1" q:x="2" x="3"/>`, `<a xmlns:p="urn:1" xmlns:q="urn:2" p:x="1" q:x="2" x="3"/>`},
		{"prefix rebound below", `<p:a xmlns:p="urn:1"><p:b xmlns:p="urn:2"/><p:c/></p:a>`, `<p:a xmlns:p="urn:1"><p:b xmlns:p="urn:2"/><p:c/></p:a>`},
		{"many attributes", attrs(20, false, ""), attrs(20, false, "")},
		{"many declarations", attrs(40, true, ` p39:y="1"`), attrs(40, true, ` p39:y="1"`)},
		{"non-ASCII names and text", "<\u00e9l\u00e8ve \u00e2ge='\u4e2d'>\u00fc</\u00e9l\u00e8ve>", "<\u00e9l\u00e8ve \u00e2ge=\"\u4e2d\">\u00fc</\u00e9l\u00e8ve>"},
		{"space in end tag", "<a></a >", "<a/>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Parse([]byte(tt.in), Options{})
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got := serialize(doc); got != tt.want {
				t.Errorf("Parse(%q):\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

// TestKeepWhitespace: with KeepWhitespace every text run is kept as read,
// as etree's own reader keeps it, so stored state reads back as written.
func TestKeepWhitespace(t *testing.T) {
	for _, in := range []string{
		"<a>\n  <b>1</b>\n  <c/>\n</a>",
		"<a> <b/> </a>",
		"<a>x <b/> y<!-- c -->\n</a>",
		"<p:a xmlns:p=\"urn:p\">\t<p:b x=\"1\">  </p:b>\n</p:a>",
	} {
		doc, err := Parse([]byte(in), Options{KeepWhitespace: true, Limits: NoLimits()})
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		ref := etree.NewDocument()
		if err := ref.ReadFromString(in); err != nil {
			t.Fatal(err)
		}
		if got, want := serialize(doc), serialize(ref); got != want {
			t.Errorf("Parse(%q) with KeepWhitespace:\n got %q\nwant %q (etree)", in, got, want)
		}
	}
	// Outside the document element whitespace is still not content.
	doc, err := Parse([]byte("\n<a/>\n"), Options{KeepWhitespace: true})
	if err != nil || serialize(doc) != "<a/>" {
		t.Errorf("whitespace around the document element: %q, %v", serialize(doc), err)
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"DOCTYPE", `<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>`, "DTD (DOCTYPE) not allowed"},
		{"DOCTYPE inside", `<a><!DOCTYPE a></a>`, "DTD (DOCTYPE) not allowed"},
		{"other markup declaration", `<a><!ELEMENT a ANY></a>`, "invalid markup"},
		{"XML declaration later", `<a><?xml version="1.0"?></a>`, "XML declaration not at the start"},
		{"XML version 1.1", `<?xml version="1.1"?><a/>`, "unsupported XML version"},
		{"undefined entity", `<a>&nbsp;</a>`, "undefined entity &nbsp;"},
		{"undefined entity in attribute", `<a x="&foo;"/>`, "undefined entity &foo;"},
		{"bare ampersand", `<a>fish & chips</a>`, "invalid character entity"},
		{"reference without semicolon", `<a>&lt</a>`, "invalid character entity"},
		{"character reference to NUL", `<a>&#0;</a>`, "not an XML character"},
		{"character reference to a surrogate", `<a>&#xD800;</a>`, "not an XML character"},
		{"character reference to U+FFFE", `<a>&#xFFFE;</a>`, "not an XML character"},
		{"character reference beyond Unicode", `<a>&#x110000;</a>`, "not an XML character"},
		{"character reference with bad digit", `<a>&#12a;</a>`, "invalid character reference"},
		{"empty character reference", `<a>&#x;</a>`, "invalid character reference"},
		{"mismatched tags", "<a>\n<b>\n</a>", "line 3: element <b> closed by </a>"},
		{"mismatched prefix", `<p:a xmlns:p="u" xmlns:q="u"></q:a>`, "element <p:a> closed by </q:a>"},
		{"unclosed", "<a><b/>", "<a> is not closed"},
		{"end tag without start", "<a/></a>", "unexpected end tag"},
		{"two document elements", "<a/><b/>", "more than one document element"},
		{"unbound element prefix", `<p:a/>`, "prefix p is not bound"},
		{"unbound attribute prefix", `<a p:x="1"/>`, "prefix p is not bound"},
		{"prefix out of scope", `<a><b xmlns:p="u"/><p:c/></a>`, "prefix p is not bound"},
		{"prefix undeclared", `<a xmlns:p=""/>`, "empty value"},
		{"xmlns prefix declared", `<a xmlns:xmlns="urn:x"/>`, "xmlns must not be declared"},
		{"xml prefix rebound", `<a xmlns:xml="urn:x"/>`, "prefix xml must not be bound"},
		{"xml namespace bound to another prefix", `<a xmlns:p="http://www.w3.org/XML/1998/namespace"/>`, "only the prefix xml"},
		{"xmlns namespace bound", `<a xmlns:p="http://www.w3.org/2000/xmlns/"/>`, "no prefix may be bound"},
		{"element with xmlns prefix", `<xmlns:a/>`, "reserved prefix xmlns"},
		{"duplicate attribute", `<a x="1" x="2"/>`, "attribute x appears twice"},
		{"duplicate attribute among many", attrs(20, false, ` x3="again"`), "attribute x3 appears twice"},
		{"duplicate expanded name", `<a xmlns:p="urn:1" xmlns:q="urn:1" p:x="1" q:x="2"/>`, "q:x repeats attribute {urn:1}x"},
		{"duplicate expanded name among many", attrs(20, true, ` p1:x="1" x1="2" y="3" z="4" w="5" v="6" u="7" t="8" s="9" xmlns:q="urn:1" q:x="2"`), "q:x repeats attribute {urn:1}x"},
		{"duplicate declaration", `<a xmlns:p="urn:1" xmlns:p="urn:2"/>`, `prefix "p" declared twice`},
		{"duplicate default declaration", `<a xmlns="urn:1" xmlns="urn:2"/>`, `prefix "" declared twice`},
		{"duplicate declaration among many", attrs(30, true, ` xmlns:p7="urn:x"`), `prefix "p7" declared twice`},
		{"name starting with a digit", `<1a/>`, "invalid name: starts with '1'"},
		{"name starting with a dash", `<a -x="1"/>`, "invalid name: starts with '-'"},
		{"local part starting with a digit", `<p:1a xmlns:p="u"/>`, "invalid name"},
		{"two colons", `<a:b:c/>`, "more than one colon"},
		{"leading colon", `<:a/>`, "invalid name"},
		{"trailing colon", `<a: />`, "invalid name"},
		{"invalid name character", "<a\u00d7b/>", "expected"},
		{"control character in text", "<a>\x01</a>", "illegal character code U+1"},
		{"control character in attribute", "<a x='\x0b'/>", "illegal character code U+B"},
		{"U+FFFE in text", "<a>\uFFFE</a>", "illegal character code U+FFFE"},
		{"control character in comment", "<a><!--\x02--></a>", "illegal character code U+2"},
		{"bad UTF-8 in text", "<a>\xff</a>", "invalid UTF-8"},
		{"bad UTF-8 in attribute", "<a x='\xc3'/>", "invalid UTF-8"},
		{"bad UTF-8 in name", "<a\xc3/>", "invalid UTF-8"},
		{"bad UTF-8 in comment", "<a><!--\xe8--></a>", "invalid UTF-8"},
		{"surrogate encoded in UTF-8", "<a>\xed\xa0\x80</a>", "invalid UTF-8"},
		{"< in attribute value", `<a x="1<2"/>`, "unescaped < in an attribute value"},
		{"< in attribute value after a reference", `<a x="&amp;<"/>`, "unescaped < in an attribute value"},
		{"]]> in text", `<a>x]]>y</a>`, `"]]>" not allowed in text`},
		{"]]> in text after a reference", `<a>&amp;]]></a>`, `"]]>" not allowed in text`},
		{"-- in comment", `<a><!-- a -- b --></a>`, `"--" not allowed in comments`},
		{"unterminated comment", `<a><!-- x`, "unterminated comment"},
		{"unterminated CDATA", `<a><![CDATA[x`, "unterminated CDATA"},
		{"CDATA outside", `<![CDATA[x]]><a/>`, "CDATA section outside"},
		{"unquoted attribute", `<a x=1/>`, "unquoted"},
		{"attribute without value", `<a x/>`, "without a value"},
		{"attributes without space", `<a x="1"y="2"/>`, "expected whitespace"},
		{"unterminated attribute value", `<a x="1`, "unexpected end of document"},
		{"bad empty-element tag", `<a/ >`, "expected />"},
		{"bad PI target", `<a><?1x?></a>`, "invalid processing instruction target"},
		{"lone <", `<a><</a>`, "expected a name"},
		{"truncated", `<a`, "unexpected end of document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in), Options{})
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) = %v, want a SyntaxError", tt.in, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%q) = %q, want it to say %q", tt.in, err, tt.want)
			}
		})
	}
}

// TestLimits: each limit accepts a document at the limit and refuses one
// just over it with a LimitError naming the limit and its value.
func TestLimits(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("<a>", n) + strings.Repeat("</a>", n) }
	elems := func(n int) string { return "<a>" + strings.Repeat("<b/>", n-1) + "</a>" }
	tests := []struct {
		limit    string
		lim      Limits
		at, over string
	}{
		{LimitDepth, Limits{MaxDepth: 3}, nest(3), nest(4)},
		{LimitAttrs, Limits{MaxAttrs: 3}, attrs(3, false, ` xmlns="urn:x"`), attrs(4, false, "")},
		{LimitNSDecls, Limits{MaxNSDecls: 3}, attrs(3, true, ` x="1"`), attrs(4, true, "")},
		{LimitElements, Limits{MaxElements: 4}, elems(4), elems(5)},
		{LimitValueBytes, Limits{MaxValueBytes: 5}, "<a>12345</a>", "<a>123456</a>"},
		{LimitValueBytes, Limits{MaxValueBytes: 5}, "<a>&lt;1</a>", "<a>&lt;12</a>"},
		{LimitValueBytes, Limits{MaxValueBytes: 5}, `<a x="12345"/>`, `<a x="123456"/>`},
		{LimitValueBytes, Limits{MaxValueBytes: 5}, `<a x="&gt;1"/>`, `<a x="&gt;12"/>`},
		{LimitValueBytes, Limits{MaxValueBytes: 5}, `<a><![CDATA[12345]]></a>`, `<a><![CDATA[123456]]></a>`},
		{LimitValueBytes, Limits{MaxValueBytes: 5}, `<a><!--12345--></a>`, `<a><!--123456--></a>`},
		{LimitNameBytes, Limits{MaxNameBytes: 5}, `<abcde/>`, `<abcdef/>`},
		{LimitNameBytes, Limits{MaxNameBytes: 5}, `<a bcdef="1"/>`, `<a bcdefg="1"/>`},
		{LimitNameBytes, Limits{MaxNameBytes: 7}, `<p:abcde xmlns:p="u"/>`, `<p:abcdef xmlns:p="u"/>`},
	}
	for _, tt := range tests {
		t.Run(tt.limit+"/"+tt.over, func(t *testing.T) {
			if _, err := Parse([]byte(tt.at), Options{Limits: tt.lim}); err != nil {
				t.Fatalf("at the limit: Parse(%q): %v", tt.at, err)
			}
			_, err := Parse([]byte(tt.over), Options{Limits: tt.lim})
			var le *LimitError
			if !errors.As(err, &le) {
				t.Fatalf("over the limit: Parse(%q) = %v, want a LimitError", tt.over, err)
			}
			want := tt.lim.WithDefaults()
			if le.Limit != tt.limit || le.Line != 1 {
				t.Errorf("Parse(%q) = %+v, want the %s limit on line 1", tt.over, le, tt.limit)
			}
			if !strings.Contains(err.Error(), tt.limit) || (le.Max != want.MaxDepth && le.Max != want.MaxAttrs &&
				le.Max != want.MaxNSDecls && le.Max != want.MaxElements && le.Max != want.MaxValueBytes && le.Max != want.MaxNameBytes) {
				t.Errorf("error %q does not name the limit and its value", err)
			}
		})
	}
}

// TestDefaultLimits: the zero Limits are the defaults, negative is none.
func TestDefaultLimits(t *testing.T) {
	if _, err := Parse([]byte(attrs(DefaultMaxAttrs, false, "")), Options{}); err != nil {
		t.Errorf("%d attributes: %v", DefaultMaxAttrs, err)
	}
	_, err := Parse([]byte(attrs(DefaultMaxAttrs+1, false, "")), Options{})
	if want := "over the attributes per element limit of 1000"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%d attributes: %v, want %q", DefaultMaxAttrs+1, err, want)
	}
	if _, err := Parse([]byte(attrs(DefaultMaxAttrs+1, false, "")), Options{Limits: Limits{MaxAttrs: -1}}); err != nil {
		t.Errorf("no attribute limit: %v", err)
	}
	none := Limits{MaxDepth: -1, MaxAttrs: -1, MaxNSDecls: -1, MaxElements: -1, MaxValueBytes: -1, MaxNameBytes: -1, MaxHeaderBytes: -1}
	if _, err := Parse([]byte(attrs(200, true, ` x="1"`)), Options{Limits: none}); err != nil {
		t.Errorf("no limits: %v", err)
	}
}

// TestLargeInput: an input too large to share one string (each string
// copied, names interned) parses the same.
func TestLargeInput(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<p:a xmlns:p="urn:p">`)
	for b.Len() <= shareMax {
		b.WriteString(`<p:item n="1&amp;2">text &lt; <![CDATA[x]]></p:item>`)
	}
	b.WriteString(`</p:a>`)
	doc, err := Parse([]byte(b.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	items := doc.Root().ChildElements()
	if len(items) < 100 || items[0].SelectAttrValue("n", "") != "1&2" || items[len(items)-1].Text() != "text < x" {
		t.Fatalf("%d items, first %v", len(items), items[0])
	}
	if items[0].NamespaceURI() != "urn:p" || items[0].Attr[0].Element() != items[0] {
		t.Errorf("item namespace %q, attribute not linked to its element", items[0].NamespaceURI())
	}
}

// TestEndElement: the callback sees each element's depth and size, and
// its error stops the parse.
func TestEndElement(t *testing.T) {
	in := `<a><bb x="1">t</bb><c/></a>`
	var got []string
	_, err := Parse([]byte(in), Options{EndElement: func(e *etree.Element, depth, size int) error {
		got = append(got, e.Tag+":"+strconv.Itoa(depth)+":"+strconv.Itoa(size))
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "bb:2:16 c:2:4 a:1:27"; strings.Join(got, " ") != want {
		t.Errorf("got %v, want %s", got, want)
	}
	stop := errors.New("stop")
	if _, err := Parse([]byte(in), Options{EndElement: func(*etree.Element, int, int) error { return stop }}); err != stop { //nolint:errorlint // returned as is
		t.Errorf("err = %v, want the callback's", err)
	}
}

// TestTreeLinks: parents, indexes and attribute links are those etree's
// own methods rely on.
func TestTreeLinks(t *testing.T) {
	doc, err := Parse([]byte(`<p:a xmlns:p="urn:p"><p:b p:x="1"/>t<!--c--><c/></p:a>`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := doc.Root()
	if a.Parent() != &doc.Element {
		t.Error("root not linked to the document")
	}
	for i, c := range a.Child {
		if c.Parent() != a || c.Index() != i {
			t.Errorf("child %d: parent %v index %d", i, c.Parent(), c.Index())
		}
	}
	b := a.SelectElement("b")
	if got := b.Attr[0].NamespaceURI(); got != "urn:p" {
		t.Errorf("attribute namespace %q", got)
	}
	// The tree can be changed as etree trees are.
	b.CreateElement("new")
	a.RemoveChildAt(0)
	a.AddChild(etree.NewElement("end"))
	var s strings.Builder
	a.WriteTo(&s, &etree.WriteSettings{})
	if want := `<p:a xmlns:p="urn:p">t<!--c--><c/><end/></p:a>`; s.String() != want {
		t.Errorf("got %s, want %s", s.String(), want)
	}
}

func BenchmarkParsePO(b *testing.B) {
	data := []byte(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:po="urn:example:po">
  <soapenv:Header/>
  <soapenv:Body>
    <po:purchaseOrder>
      <po:poId>PO-000123</po:poId>
      <po:customer><po:id>C-42</po:id><po:name>ACME &amp; Sons</po:name></po:customer>
      <po:items>
        <po:item sku="A-1" qty="2" price="10.50"/>
        <po:item sku="B-7" qty="1" price="301.48"/>
      </po:items>
    </po:purchaseOrder>
  </soapenv:Body>
</soapenv:Envelope>`)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// topText reports whether doc has text outside its document element,
// which Parse keeps for its callers to refuse (soap, xmldoc and reference
// do): a U+FEFF starting it would read back as a byte-order mark.
func topText(doc *etree.Document) bool {
	for _, c := range doc.Child {
		if _, ok := c.(*etree.CharData); ok {
			return true
		}
	}
	return false
}

// FuzzParse: the parser does not panic, and a document it accepts (with
// no text outside its document element, which callers refuse) serializes
// (as etree writes it) to one it accepts again with the same
// serialization.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`<?xml version="1.0"?><p:a xmlns:p="urn:p" p:x="1&amp;2" y='"'>t&lt;&#x41;<![CDATA[c]]><!--c--><?pi d?><b/></p:a>`,
		"<a>\r\n <b> x </b>\n</a>",
		`<a xmlns="urn:a"><b xmlns=""/></a>`,
		`<a xmlns:p="u" xmlns:q="u" p:x="1" q:x="2"/>`,
		`<!DOCTYPE a><a/>`,
		`<a>&#xD800;</a>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Parse(data, Options{Limits: Limits{MaxDepth: 200}})
		if err != nil || topText(doc) {
			return
		}
		out := serialize(doc)
		again, err := Parse([]byte(out), Options{Limits: Limits{MaxDepth: 200}})
		if err != nil {
			t.Fatalf("%q parsed, its serialization %q does not: %v", data, out, err)
		}
		if s := serialize(again); s != out {
			t.Fatalf("serialization not stable:\n%s\n%s", out, s)
		}
		// Stored state's mode keeps every text run: what it reads back
		// from its own serialization is that serialization.
		keep := Options{Limits: NoLimits(), KeepWhitespace: true}
		kdoc, err := Parse(data, keep)
		if err != nil {
			t.Fatalf("%q parsed with limits, not with KeepWhitespace and none: %v", data, err)
		}
		kout := serialize(kdoc)
		kagain, err := Parse([]byte(kout), keep)
		if err != nil || serialize(kagain) != kout {
			t.Fatalf("KeepWhitespace serialization %q not stable: %v", kout, err)
		}
	})
}
