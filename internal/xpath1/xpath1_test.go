package xpath1

import (
	"math"
	"strings"
	"testing"

	"github.com/beevik/etree"
)

const testDoc = `<?xml version="1.0"?>
<po:order xmlns:po="urn:po" xmlns:x="urn:x" id="o1" xml:lang="en-GB">
  <po:item n="1"><po:sku>A</po:sku><po:qty>2</po:qty></po:item>
  <po:item n="2"><po:sku>B</po:sku><po:qty> 3 </po:qty></po:item>
  <po:item n="3"><po:sku>C</po:sku><po:qty>x</po:qty><x:note>n</x:note></po:item>
  <item>plain</item>
  <!-- c --><?pi data?>
</po:order>`

func testTree(t testing.TB) Node {
	t.Helper()
	doc := etree.NewDocument()
	if err := doc.ReadFromString(testDoc); err != nil {
		t.Fatal(err)
	}
	return Node{Tok: &doc.Element, Attr: -1, Doc: DocOf}
}

// render is a value as the tests compare it: a node-set as its nodes'
// names and string-values, anything else as string().
func render(v Value) string {
	set, ok := v.(NodeSet)
	if !ok {
		return String(v)
	}
	var s []string
	for _, n := range set {
		name := n.Name()
		switch n.Kind() {
		case RootKind:
			name = "/"
		case AttributeKind:
			name = "@" + name
		case TextKind:
			name = "text()"
		case NamespaceKind:
			name = "ns:" + name
		}
		s = append(s, name+"="+strings.TrimSpace(n.StringValue()))
	}
	return strings.Join(s, ",")
}

func evalRendered(t *testing.T, src string, ctx Node) string {
	t.Helper()
	x, err := Compile(src, Options{Namespaces: map[string]string{"po": "urn:po", "x": "urn:x", "": "urn:default"}})
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	v, err := x.Eval(Plain{}, ctx, nil)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return render(v)
}

// TestSpec: expressions and the answers XPath 1.0 gives, section by
// section.
func TestSpec(t *testing.T) {
	root := testTree(t)
	tests := []struct{ src, want string }{
		// 3.4 comparisons.
		{"'' = false()", "true"},
		{"'a' = true()", "true"},
		{"5 < /po:order/po:item/po:qty", "false"},
		{"1 < /po:order/po:item/po:qty", "true"},
		{"/po:order/po:item/po:qty > 2.5", "true"},
		{"/po:order/po:item/po:qty = 3", "true"},
		{"/po:order/po:item/po:qty = '3'", "false"},
		{"/po:order/po:item/po:qty != 'x'", "true"},
		{"/po:order/po:nothing = /po:order/po:nothing", "false"},
		{"/po:order/po:nothing != ''", "false"},
		{"/po:order/po:nothing = false()", "true"},
		{"true() > false()", "true"},
		{"'2' > '10'", "false"},
		{"0 div 0 = 0 div 0", "false"},
		{"/po:order/po:item/@n = /po:order/po:item/po:qty", "true"},
		// 3.5 numbers, 4.4.
		{"1 div 0", "Infinity"},
		{"-1 div 0", "-Infinity"},
		{"0 div 0", "NaN"},
		{"-0", "0"},
		{"1 div -0", "-Infinity"},
		{"1 div round(-0.5)", "-Infinity"},
		{"1 div round(-0.2)", "-Infinity"},
		{"round(-1.5)", "-1"},
		{"round(2.5)", "3"},
		{"round(0 div 0)", "NaN"},
		{"round(0.49999999999999994)", "0"},
		{"7 mod -3", "1"},
		{"-7 mod 3", "-1"},
		{"1e3", ""}, // refused below
		{"number('1e3')", "NaN"},
		{"number('+1')", "NaN"},
		{"number('Infinity')", "NaN"},
		{"number(' -.5 ')", "-0.5"},
		{"number('5.')", "5"},
		{"number('\u00a05')", "NaN"},
		{"1000000 * 1000000 * 1000000 * 100", "100000000000000000000"},
		{"0.1 + 0.2", "0.30000000000000004"},
		{"sum(/po:order/po:item/po:qty)", "NaN"},
		{"sum(/po:order/po:item[po:qty != 'x']/po:qty)", "5"},
		{"floor(-0.5)", "-1"},
		{"ceiling(-0.5)", "0"},
		// 4.2 strings.
		{"substring('12345', 1.5, 2.6)", "234"},
		{"substring('12345', 0, 3)", "12"},
		{"substring('12345', 0 div 0, 3)", ""},
		{"substring('12345', -42, 1 div 0)", "12345"},
		{"substring('12345', -1 div 0, 1 div 0)", ""},
		{"substring-before('1999/04/01', '/')", "1999"},
		{"substring-after('1999/04/01', '/')", "04/01"},
		{"translate('bar', 'abc', 'ABC')", "BAr"},
		{"translate('--aaa--', 'abc-', 'ABC')", "AAA"},
		{"normalize-space('  a \t b\n ')", "a b"},
		{"string-length('héllo')", "5"},
		{"concat('a', 1, true())", "a1true"},
		{"string(1 = 1)", "true"},
		{"starts-with('abc', '')", "true"},
		// 2.3 names: an unprefixed name is in no namespace.
		{"count(/po:order/item)", "1"},
		{"count(/po:order/*)", "4"},
		{"count(/po:order/po:*)", "3"},
		{"count(//x:*)", "1"},
		{"count(/po:order/po:item/@*)", "3"},
		// Axes.
		{"/po:order/po:item[2]/preceding-sibling::po:item/@n", "@n=1"},
		{"/po:order/po:item[2]/following-sibling::*[1]/@n", "@n=3"},
		{"/po:order/po:item[3]/preceding-sibling::*[1]/@n", "@n=2"},
		{"name(/po:order/po:item[3]/ancestor::*)", "po:order"},
		{"count(/po:order/po:item[3]/po:sku/ancestor::*)", "2"},
		{"Infinity + 1", "NaN"},
		{"count(/po:order/po:item[1]/po:sku/ancestor-or-self::node())", "4"},
		{"name(/po:order/po:item[1]/po:sku/ancestor::*[1])", "po:item"},
		{"count(/po:order/po:item[2]/following::*)", "5"},
		{"count(/po:order/po:item[2]/preceding::*)", "3"},
		{"/po:order/po:item[2]/po:sku/preceding::po:sku", "po:sku=A"},
		{"(/po:order/po:item[2]/preceding::po:sku)[1]", "po:sku=A"},
		{"count(/po:order/po:item[1]/@n/following::po:qty)", "3"},
		{"count(/po:order/descendant::po:qty)", "3"},
		{"count(/po:order/descendant-or-self::*)", "12"},
		{"/po:order/po:item[1]/po:sku/parent::*/@n", "@n=1"},
		{"/po:order/po:item[1]/self::po:item/@n", "@n=1"},
		{"count(/po:order/namespace::*)", "3"},
		{"/po:order/namespace::po", "ns:po=urn:po"},
		{"count(/po:order/comment())", "1"},
		{"/po:order/processing-instruction('pi')", "pi=data"},
		{"count(/po:order/processing-instruction('no'))", "0"},
		{"count(/po:order/text())", "6"},
		{"count(/)", "1"},
		{"name(/*)", "po:order"},
		{"local-name(/po:order/@xml:lang)", "lang"},
		{"namespace-uri(/po:order/po:item)", "urn:po"},
		{"namespace-uri(/po:order/@xml:lang)", "http://www.w3.org/XML/1998/namespace"},
		// Predicates: proximity positions in axis order.
		{"/po:order/po:item[last()]/@n", "@n=3"},
		{"/po:order/po:item[position() = 2]/@n", "@n=2"},
		{"/po:order/po:item[po:qty > 1][1]/@n", "@n=1"},
		{"/po:order/po:item[po:qty][2]/@n", "@n=2"},
		{"/po:order/po:item[2]/preceding-sibling::*[last()]/@n", "@n=1"},
		{"/po:order/po:item[3]/ancestor-or-self::*[1]/@n", "@n=3"},
		{"(/po:order/po:item/po:sku)[2]", "po:sku=B"},
		{"(//po:sku | //po:qty)[3]", "po:sku=B"},
		{"//po:item[1]/po:sku | //po:item[1]", "po:item=A2,po:sku=A"},
		{"count(//po:sku | //po:sku)", "3"},
		{"/po:order/po:item[@n = 2]/po:sku", "po:sku=B"},
		{"//po:item[not(po:qty > 2)]/@n", "@n=1,@n=3"},
		{"//po:item[x:note]/@n", "@n=3"},
		// '//x' folded into descendant::x only without predicates;
		// document order and duplicates after steps from many nodes.
		{"count(//po:item[1])", "1"},
		{"count(//po:sku[1])", "3"},
		{"(//po:sku)[1]", "po:sku=A"},
		{"/descendant::po:sku[2]", "po:sku=B"},
		{"count(//po:qty/..)", "3"},
		{"//po:sku/../@n", "@n=1,@n=2,@n=3"},
		{"count(//po:item//node())", "14"},
		{"count(//*//*)", "11"},
		{"(//po:item/ancestor-or-self::*/@n)[last()]", "@n=3"},
		{"//po:item[2]/following::*/preceding-sibling::po:item/@n", "@n=1,@n=2,@n=3"},
		// Functions of the context.
		{"lang('en')", "false"},
		{"boolean(/po:order/po:item[lang('en')])", "true"},
		{"boolean(/po:order/po:item[lang('EN-gb')])", "true"},
		{"boolean(/po:order/po:item[lang('fr')])", "false"},
		{"count(id('o1'))", "0"},
		{"string(/po:order/po:item[2]/po:qty)", " 3 "},
		{"number(/po:order/po:item[2]/po:qty)", "3"},
		{"/po:order/po:item[1]/po:sku/text()", "text()=A"},
		{"//po:sku[. = 'B']", "po:sku=B"},
		{"//po:item[string-length() > 3]/@n", "@n=2"},
		{"//po:qty[normalize-space() = '3']", "po:qty=3"},
		{"//po:sku[string() = 'C']", "po:sku=C"},
		{"//po:qty[number() = 2]", "po:qty=2"},
	}
	for _, tt := range tests {
		if tt.src == "1e3" {
			continue
		}
		if got := evalRendered(t, tt.src, root); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.src, got, tt.want)
		}
	}
}

// TestRefused: expressions outside the grammar or with a static error,
// and the offset the error names.
func TestRefused(t *testing.T) {
	ns := map[string]string{"po": "urn:po"}
	tests := []struct {
		src  string
		pos  int
		want string
	}{
		{"1e3", 1, `expected an operator, found "e3"`},
		{"+1", 0, "expected an expression"},
		{"'abc", 0, "unterminated string literal"},
		{"count(1)", 6, "argument 1 of count() must be a node-set, not a number"},
		{"'a'/b", 0, "must be a node-set, not a string"},
		{"1 | 2", 0, "an operand of '|' must be a node-set"},
		{"nosuch(1)", 0, "unknown function nosuch()"},
		{"q:f()", 0, `undeclared namespace prefix "q"`},
		{"$v", 0, "undeclared variable $v"},
		{"concat('a')", 0, "concat() takes 2 or more arguments, not 1"},
		{"po:a[", 5, "expected an expression"},
		{"foo::a", 0, `unknown axis "foo"`},
		{"a b", 2, `expected an operator, found "b"`},
		{"child::", 7, "expected a node test"},
		{strings.Repeat("(", MaxDepth+1) + "1" + strings.Repeat(")", MaxDepth+1), MaxDepth, "nested deeper"},
		{"#", 0, "unexpected character '#'"},
		{"1 = ", 4, "expected an expression"},
		{"f(1,)", 4, "expected an expression"},
	}
	for _, tt := range tests {
		_, err := Compile(tt.src, Options{Namespaces: ns})
		e, ok := err.(*Error)
		if !ok {
			t.Errorf("%s: error %v, want an *Error", tt.src, err)
			continue
		}
		if e.Pos != tt.pos || !strings.Contains(e.Msg, tt.want) {
			t.Errorf("%s: %v (offset %d), want %q at offset %d", tt.src, e, e.Pos, tt.want, tt.pos)
		}
	}
}

// TestFormatNumber: string() of numbers (section 4.2).
func TestFormatNumber(t *testing.T) {
	for f, want := range map[float64]string{
		math.NaN(): "NaN", math.Inf(1): "Infinity", math.Inf(-1): "-Infinity", math.Copysign(0, -1): "0", 0: "0",
		1: "1", -42: "-42", 0.5: "0.5", -0.25: "-0.25", 1e20: "100000000000000000000", 1e-7: "0.0000001",
		123456789012345680: "123456789012345680", 1.5e15: "1500000000000000", 0.1: "0.1",
	} {
		if got := FormatNumber(f); got != want {
			t.Errorf("FormatNumber(%v) = %q, want %q", f, got, want)
		}
	}
}

// TestNumber: number() of strings (section 4.4).
func TestNumber(t *testing.T) {
	nan := math.NaN()
	for s, want := range map[string]float64{
		"0": 0, "007": 7, " 42\n": 42, "123456789012345": 123456789012345, "1234567890123456": 1234567890123456,
		"99999999999999999999": 1e20, "-5": -5, "5.": 5, ".5": 0.5, "-0.25": -0.25, "\t-1.5\r": -1.5,
		"": nan, " ": nan, "4 2": nan, "+5": nan, "1e3": nan, "Infinity": nan, "-": nan, ".": nan, "1.2.3": nan,
		"0x10": nan, "５": nan, "\u00a05": nan, "5\v": nan, "--5": nan, "-.": nan, "1_000": nan,
	} {
		if got := Number(s); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("Number(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestExtensions: variables and extension functions bound through
// Options, and the dynamic errors they may cause.
func TestExtensions(t *testing.T) {
	root := testTree(t)
	vars := map[string]Value{"n": 2.0, "s": "x", "items": nil}
	opts := Options{
		Namespaces: map[string]string{"po": "urn:po", "e": "urn:ext"},
		Variables: func(space, local string) (Variable, error) {
			if _, ok := vars[local]; !ok || space != "" {
				return nil, nil
			}
			return varFunc(func(c *Context) (Value, error) {
				if local == "items" {
					x, _ := Compile("/po:order/po:item", Options{Namespaces: map[string]string{"po": "urn:po"}})
					return x.Eval(c.Tree, c.Node, nil)
				}
				return vars[local], nil
			}), nil
		},
		Functions: func(space, local string, arity int) (*Func, error) {
			switch {
			case space == "urn:ext" && local == "twice" && arity == 1:
				return &Func{Result: NumberType, Call: func(c *Context, args []Value) (Value, error) { return 2 * Num(args[0]), nil }}, nil
			case space == "urn:ext" && local == "any" && arity == 0:
				return &Func{Call: func(c *Context, args []Value) (Value, error) { return "s", nil }}, nil
			}
			return nil, nil
		},
	}
	for src, want := range map[string]string{
		"e:twice($n)": "4", "$items[$n]/@n": "@n=2", "count($items)": "3", "$items[e:twice(1)]/@n": "@n=2",
		"$s": "x", "concat($s, $n)": "x2",
	} {
		x, err := Compile(src, opts)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		v, err := x.Eval(Plain{}, root, nil)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := render(v); got != want {
			t.Errorf("%s = %q, want %q", src, got, want)
		}
	}
	for src, want := range map[string]string{
		"$s/po:a":   `an expression before '/' must be a node-set, not a string at offset 0 of "$s/po:a"`,
		"count($n)": `the argument of count() must be a node-set, not a number at offset 6 of "count($n)"`,
		"$s[1]":     `a predicate applies to a node-set, not a string at offset 0 of "$s[1]"`,
		"e:any()/x": `an expression before '/' must be a node-set, not a string at offset 0 of "e:any()/x"`,
	} {
		x, err := Compile(src, opts)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if _, err := x.Eval(Plain{}, root, nil); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %s", src, err, want)
		}
	}
	if _, err := Compile("e:twice(1)/x", opts); err == nil || !strings.Contains(err.Error(), "an expression before '/' must be a node-set, not a number") {
		t.Errorf("e:twice(1)/x: %v", err)
	}
	if _, err := Compile("e:nosuch()", opts); err == nil || !strings.Contains(err.Error(), "unknown function e:nosuch() (namespace urn:ext)") {
		t.Errorf("e:nosuch(): %v", err)
	}
}

type varFunc func(c *Context) (Value, error)

func (f varFunc) Value(c *Context) (Value, error) { return f(c) }

// FuzzParse: the parser never panics; what it compiles evaluates without
// panicking over the test document, and parsing the same source twice
// gives the same answer.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"/po:order/po:item[po:qty > 1][last()]/@n", "count(//po:sku | //po:qty)", "1 + -2 * 3 div 4 mod 5",
		"substring('héllo', 0 div 0)", "ancestor-or-self::node()[not(..)]", "preceding::*[1] | following::text()",
		"$v", "f(1, 'a', \"b\")", "processing-instruction('x')", "namespace::*", "a//b/../@c", "(1)[1]", "- - 1",
		"lang('en') and id('x') or 1 != 2", "1e3", "* * *", "div div div", "a:*", ".5 + 5.",
		"//po:item/..", "//*/ancestor::*", "//text()/preceding-sibling::*", "//po:sku/following::node()",
		"(//po:qty | //po:sku)/..", "//@*/..", "//po:item/namespace::*/..", "/*/*/*/..//po:sku",
	} {
		f.Add(s)
	}
	root := testTree(f)
	ns := map[string]string{"po": "urn:po", "a": "urn:a"}
	f.Fuzz(func(t *testing.T, src string) {
		x, err := Compile(src, Options{Namespaces: ns})
		_, perr := Parse(src)
		if err == nil && perr != nil {
			t.Fatalf("%q compiles but does not parse: %v", src, perr)
		}
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("%q: error %T %v, want *Error", src, err, err)
			}
			return
		}
		v1, err1 := x.Eval(Plain{}, root, nil)
		v2, err2 := x.Eval(Plain{}, root, nil)
		if (err1 == nil) != (err2 == nil) || err1 == nil && render(v1) != render(v2) {
			t.Fatalf("%q: two evaluations differ: %v %v / %v %v", src, v1, err1, v2, err2)
		}
		// A node-set is in document order without duplicates.
		if set, ok := v1.(NodeSet); ok {
			sorted := sortNodes(append(NodeSet(nil), set...))
			if len(sorted) != len(set) {
				t.Fatalf("%q: %d nodes, %d of them distinct", src, len(set), len(sorted))
			}
			for i := range set {
				if set[i] != sorted[i] {
					t.Fatalf("%q: node %d out of document order: %s", src, i, render(set))
				}
			}
		}
	})
}

// TestLongExpressions: operator chains and paths are parsed in loops, not
// by recursion, so a 100,000-term sum compiles and evaluates; nesting is
// bounded by MaxDepth.
func TestLongExpressions(t *testing.T) {
	root := testTree(t)
	for src, want := range map[string]string{
		strings.Repeat("1+", 100000) + "1":                                      "100001",
		strings.Repeat("1 or ", 100000) + "1":                                   "true",
		"count(/*" + strings.Repeat("/.", 50000) + ")":                          "1",
		strings.Repeat("-", MaxDepth-1) + "1":                                   "-1",
		strings.Repeat("(", MaxDepth-1) + "2" + strings.Repeat(")", MaxDepth-1): "2",
	} {
		if got := evalRendered(t, src, root); got != want {
			t.Errorf("%.40s...: %q, want %q", src, got, want)
		}
	}
	if _, err := Compile(strings.Repeat("-", MaxDepth+1)+"1", Options{}); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("%d minus signs: %v, want the nesting limit", MaxDepth+1, err)
	}
}
