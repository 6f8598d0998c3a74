package xpath2

import (
	"errors"
	"strings"
	"testing"

	"github.com/beevik/etree"
)

// evalXQ compiles src as XQuery and renders its result: atomic values as
// their strings, elements and documents as XML, other nodes by kind.
func evalXQ(t testing.TB, src string, ctx Item) (string, error) {
	t.Helper()
	sc := &StaticContext{Namespaces: map[string]string{"po": "urn:example:po", "t": "urn:t"}}
	e, err := CompileXQuery(src, sc)
	if err != nil {
		return "", err
	}
	r, err := e.Evaluate(&DynamicContext{Item: ctx,
		Variables: func(ns, local string) (Sequence, bool) { return Sequence{Int(7)}, local == "seven" }})
	if err != nil {
		return "", err
	}
	parts := make([]string, len(r))
	for i, it := range r {
		parts[i] = renderItem(t, it)
	}
	return strings.Join(parts, " "), nil
}

func renderItem(t testing.TB, it Item) string {
	n, ok := it.(Node)
	if !ok {
		return it.(Atomic).String()
	}
	tok, attr, ok := EtreeToken(n)
	if !ok {
		t.Fatalf("node %T is not etree-backed", n)
	}
	switch n.Kind() {
	case AttributeNode:
		a := tok.(*etree.Element).Attr[attr]
		return "@" + a.FullKey() + "=" + a.Value
	case TextNode:
		return "text(" + n.StringValue() + ")"
	case DocumentNode:
		d := etree.NewDocument()
		for _, c := range tok.(*etree.Element).Child {
			d.AddChild(copyToken(c))
		}
		s, _ := d.WriteToString()
		return "doc(" + s + ")"
	}
	d := etree.NewDocument()
	d.AddChild(copyToken(tok))
	s, err := d.WriteToString()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func copyToken(tok etree.Token) etree.Token {
	switch x := tok.(type) {
	case *etree.Element:
		return x.Copy()
	case *etree.CharData:
		return etree.NewText(x.Data)
	case *etree.Comment:
		return etree.NewComment(x.Data)
	case *etree.ProcInst:
		return etree.NewProcInst(x.Target, x.Inst)
	}
	return nil
}

// TestXQueryGrammar covers the productions XQuery 1.0 adds to XPath 2.0:
// FLWOR, typeswitch, direct and computed constructors, the prolog.
func TestXQueryGrammar(t *testing.T) {
	doc := orderDoc(t)
	tests := []struct {
		name, expr, want, code string
	}{
		// FLWOR
		{"for", "for $i in (1, 2) return $i * 10", "10 20", ""},
		{"let", "let $a := 2, $b := $a + 1 return $a * $b", "6", ""},
		{"for let where", "for $i in 1 to 6 let $sq := $i * $i where $sq mod 2 = 0 return $sq", "4 16 36", ""},
		{"positional", "for $x at $p in ('a', 'b', 'c') return concat($p, $x)", "1a 2b 3c", ""},
		{"order by", "for $x in (3, 1, 2) order by $x return $x", "1 2 3", ""},
		{"order by descending", "for $x in (3, 1, 2) order by $x descending return $x", "3 2 1", ""},
		{"stable order by two keys", "for $i in //po:item order by xs:integer($i/@qty) > 1, $i/@sku descending return string($i/@sku)", "B C A", ""},
		{"order by empty greatest", "for $x in ((), 2, 1) order by $x empty greatest return $x", "1 2", ""},
		{"order by empty least", "for $x in (2, 1) order by (if ($x = 2) then () else $x) empty least return $x", "2 1", ""},
		{"order by mixed types", "for $x in (1, 'a') order by $x return $x", "", "XPTY0004"},
		{"for typed", "for $x as xs:integer in (1, 2) return $x", "1 2", ""},
		{"for typed mismatch", "for $x as xs:string in (1, 2) return $x", "", "XPTY0004"},
		{"let typed", "let $x as xs:integer+ := (1, 2) return count($x)", "2", ""},
		{"positional same name", "for $x at $x in (1) return $x", "", "XQST0089"},
		{"let needs :=", "let $x in 1 return $x", "", "XPST0003"},
		{"flwor scope ends", "(for $x in 1 return $x, $x)", "", "XPST0008"},
		{"nested flwor", "for $a in (1, 2) return for $b in (10, 20) where $b > $a * 10 return $a + $b", "21", ""},
		// typeswitch
		{"typeswitch string", `typeswitch ("x") case $a as xs:string return "test" default return "default"`, "test", ""},
		{"typeswitch default", `typeswitch (1) case $a as xs:string return "test" default return "default"`, "default", ""},
		{"typeswitch binds", `typeswitch (5) case $n as xs:integer return $n + 1 default $d return $d`, "6", ""},
		{"typeswitch default var", `typeswitch (2.5) case xs:integer return 0 default $d return $d * 2`, "5", ""},
		{"typeswitch node kinds", `typeswitch (//po:note/text()) case $a as text() return "text" case element() return "el" default return "x"`, "text", ""},
		{"typeswitch occurrence", `typeswitch ((1, 2)) case xs:integer return "one" case xs:integer+ return "many" default return "none"`, "many", ""},
		{"typeswitch needs a case", `typeswitch (1) default return 2`, "", "XPST0003"},
		// direct constructors
		{"empty element", `<a/>`, `<a/>`, ""},
		{"element with text", `<a>hello</a>`, `<a>hello</a>`, ""},
		{"enclosed expression", `<a>{1 + 1}</a>`, `<a>2</a>`, ""},
		{"adjacent atomics are spaced", `<a>{1, 2, "x"}</a>`, `<a>1 2 x</a>`, ""},
		{"separate enclosures are not", `<a>{1}{2}</a>`, `<a>12</a>`, ""},
		{"text merging", `<a>x{"y"}z</a>`, `<a>xyz</a>`, ""},
		{"boundary whitespace stripped", "<a>\n  <b/>\n  {1}  </a>", `<a><b/>1</a>`, ""},
		{"non-boundary whitespace kept", `<a> x </a>`, `<a> x </a>`, ""},
		{"char ref whitespace kept", `<a>&#x20;</a>`, `<a> </a>`, ""},
		{"cdata kept", `<a><![CDATA[ <&> ]]></a>`, `<a> &lt;&amp;&gt; </a>`, ""},
		{"entity refs", `<a>&lt;&amp;&quot;</a>`, `<a>&lt;&amp;&quot;</a>`, ""},
		{"brace escapes", `<a>{{x}}</a>`, `<a>{x}</a>`, ""},
		{"attributes", `<a x="1" y="{1 + 1}z" z='it''s'/>`, `<a x="1" y="2z" z="it&apos;s"/>`, ""},
		{"attribute list value", `<a x="{(1, 2)}"/>`, `<a x="1 2"/>`, ""},
		{"attribute from content", `<a>{attribute b {"v"}}</a>`, `<a b="v"/>`, ""},
		{"attribute after content", `<a>x{attribute b {"v"}}</a>`, "", "XQTY0024"},
		{"duplicate attribute", `<a x="1" x="2"/>`, "", "XQST0040"},
		{"duplicate attribute from content", `<a x="1">{attribute x {2}}</a>`, "", "XQDY0025"},
		{"namespace declaration", `<p:a xmlns:p="urn:p"><p:b/></p:a>`, `<p:a xmlns:p="urn:p"><p:b/></p:a>`, ""},
		{"default namespace", `<a xmlns="urn:d"><b/></a>/*:b/namespace-uri()`, `urn:d`, ""},
		{"prefix from the static context", `<t:a/>`, `<t:a xmlns:t="urn:t"/>`, ""},
		{"undeclared prefix", `<q:a/>`, "", "XPST0081"},
		{"namespace value must be literal", `<a xmlns:p="{1}"/>`, "", "XQST0022"},
		{"repeated namespace declaration", `<a xmlns:p="urn:1" xmlns:p="urn:2"/>`, "", "XQST0071"},
		{"xmlns prefix", `<a xmlns:xmlns="urn:1"/>`, "", "XQST0070"},
		{"mismatched end tag", `<a></b>`, "", "XPST0003"},
		{"unclosed element", `<a>`, "", "XPST0003"},
		{"lone close brace", `<a>}</a>`, "", "XPST0003"},
		{"nested constructors", `<a><b>{for $i in 1 to 2 return <c n="{$i}"/>}</b></a>`, `<a><b><c n="1"/><c n="2"/></b></a>`, ""},
		{"copied nodes", `<x>{//po:item[1]}</x>`, `<x><po:item xmlns:po="urn:example:po" sku="A" qty="2" price="10.50"/></x>`, ""},
		{"copied attribute", `<x>{//po:item[2]/@sku}</x>`, `<x sku="B"/>`, ""},
		{"copied text merges", `<x>a{//po:note/text()}b</x>`, `<x>arush b</x>`, ""},
		{"copy is a new node", `let $i := //po:item[1] return <x>{$i}</x>/*[1] is $i`, "false", ""},
		{"constructed tree is navigable", `<a><b>1</b><b>2</b></a>/b[2] + 1`, "3", ""},
		{"constructed parent", `count(<a><b/></a>/b/..)`, "1", ""},
		{"constructed element has no parent", `empty(<a/>/..)`, "true", ""},
		{"less-than still compares", `1 < 2`, "true", ""},
		{"less-than after a name", `count(//po:item) < 4`, "true", ""},
		{"constructor after return", `for $i in 1 to 2 return <i>{$i}</i>`, `<i>1</i> <i>2</i>`, ""},
		{"if with constructors", `if (1 = 1) then <y/> else <n/>`, `<y/>`, ""},
		{"comment constructor", `<!--note-->`, `<!--note-->`, ""},
		{"pi constructor", `<?tgt some data?>`, `<?tgt some data?>`, ""},
		{"bad comment", `<!-- a -- b -->`, "", "XPST0003"},
		{"string literal with refs", `"a&amp;b&#65;"`, "a&bA", ""},
		// computed constructors
		{"computed element", `element e {1, 2}`, `<e>1 2</e>`, ""},
		{"computed element name", `element {concat("e", 1)} {"x"}`, `<e1>x</e1>`, ""},
		{"computed element prefixed name", `element {"t:e"} {}`, `<t:e xmlns:t="urn:t"/>`, ""},
		{"computed element bad name", `element {"1x"} {}`, "", "XQDY0074"},
		{"computed element unknown prefix", `element {"zz:e"} {}`, "", "XQDY0074"},
		{"computed element QName", `element {QName("urn:q", "q:e")} {}`, `<q:e xmlns:q="urn:q"/>`, ""},
		{"computed attribute", `attribute a {"v", 1}`, `@a=v 1`, ""},
		{"computed attribute has no parent", `empty((attribute a {1})/..)`, "true", ""},
		{"computed namespaced attribute", `<e>{attribute t:a {1}}</e>`, `<e xmlns:t="urn:t" t:a="1"/>`, ""},
		{"xmlns attribute", `attribute xmlns {1}`, "", "XQDY0044"},
		{"computed text", `text {"a", 1}`, `text(a 1)`, ""},
		{"computed empty text", `count(text {()})`, "0", ""},
		{"computed document", `document {<a/>, <b/>}`, `doc(<a/><b/>)`, ""},
		{"document root", `document {<a><b/></a>}/a/b/name()`, "b", ""},
		{"attribute in document", `document {attribute a {1}}`, "", "XPTY0004"},
		{"computed comment", `comment {"x"}`, `<!--x-->`, ""},
		{"computed comment with --", `comment {"a--b"}`, "", "XQDY0072"},
		{"computed pi", `processing-instruction p {"  d"}`, `<?p d?>`, ""},
		{"computed pi named", `processing-instruction {"p2"} {"d"}`, `<?p2 d?>`, ""},
		{"computed pi xml", `processing-instruction xml {"d"}`, "", "XQDY0064"},
		{"copied document content", `<x>{document {<a/>, "t"}}</x>`, `<x><a/>t</x>`, ""},
		{"element name test still works", `count(//element(po:item))`, "3", ""},
		{"text step still works", `string(//po:note/text())`, "rush ", ""},
		{"ordered", `ordered {(1, 2)}`, "1 2", ""},
		{"unordered", `unordered {3}`, "3", ""},
		// prolog
		{"declare namespace", `declare namespace z = "urn:z"; <z:a/>/namespace-uri()`, "urn:z", ""},
		{"declare default element namespace", `declare default element namespace "urn:d"; <a/>/namespace-uri()`, "urn:d", ""},
		{"declare external variable", `declare variable $seven external; $seven + 1`, "8", ""},
		{"xquery version", `xquery version "1.0"; 1`, "1", ""},
		{"xquery version 3", `xquery version "3.0"; 1`, "", "XQST0031"},
		{"declare function refused", `declare function local:f() { 1 }; 1`, "", "XPST0003"},
		{"xml prefix redeclared", `declare namespace xml = "urn:x"; 1`, "", "XQST0070"},
		// the XPath 2.0 grammar is still there
		{"xpath still works", `sum(//po:item/@qty)`, "7", ""},
		{"external variable", `$seven * 2`, "14", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := evalXQ(t, tt.expr, doc)
			if tt.code != "" {
				var xe *Error
				if !errors.As(err, &xe) || xe.Code != tt.code {
					t.Fatalf("%s = %q, %v; want error %s", tt.expr, got, err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tt.expr, err)
			}
			if got != tt.want {
				t.Errorf("%s = %s; want %s", tt.expr, got, tt.want)
			}
		})
	}
}

// TestXQueryNotXPath checks that the XQuery additions stay out of the
// XPath 2.0 grammar.
func TestXQueryNotXPath(t *testing.T) {
	for _, src := range []string{`<a/>`, `let $x := 1 return $x`, `element e {1}`, `typeswitch (1) case xs:integer return 1 default return 2`} {
		if _, err := Compile(src, nil); err == nil {
			t.Errorf("Compile(%q) succeeded; XPath 2.0 has no such expression", src)
		}
	}
}

// TestXQueryConstructedIndependence checks that each evaluation builds
// new trees (an expression is shared by concurrent evaluations).
func TestXQueryConstructedIndependence(t *testing.T) {
	e, err := CompileXQuery(`<a>{$seven}</a>`, nil)
	if err != nil {
		t.Fatal(err)
	}
	dc := &DynamicContext{Variables: func(ns, local string) (Sequence, bool) { return Sequence{Int(7)}, true }}
	r1, err1 := e.Evaluate(dc)
	r2, err2 := e.Evaluate(dc)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	t1, _, _ := EtreeToken(r1[0].(Node))
	t2, _, _ := EtreeToken(r2[0].(Node))
	if t1 == t2 {
		t.Fatal("two evaluations returned the same element")
	}
	t1.(*etree.Element).SetText("changed")
	if got := r2[0].(Node).StringValue(); got != "7" {
		t.Fatalf("second result = %q, want 7", got)
	}
}

func FuzzParseXQuery(f *testing.F) {
	for _, s := range []string{
		`<a x="{1}">t{for $i at $p in 1 to 3 order by $i descending return <b>{$p}</b>}</a>`,
		`typeswitch ($x) case $a as xs:string return "t" default return "d"`,
		`declare namespace p = "urn:p"; element p:e {attribute a {1}, text {2}, comment {3}}`,
		`<!--c--><?p d?>`, `document {<a><![CDATA[x]]>&amp;&#33;</a>}`, `let $a := 1 where $a return $a`,
		`<a>{{}}</a>`, `<a xmlns="urn:d"><b/></a>`, `1 < 2`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := CompileXQuery(src, nil)
		if err != nil {
			var xe *Error
			if !errors.As(err, &xe) {
				t.Fatalf("CompileXQuery(%q): error %T is not an *Error: %v", src, err, err)
			}
			return
		}
		if e.String() != src {
			t.Fatalf("String() = %q, want %q", e.String(), src)
		}
	})
}
