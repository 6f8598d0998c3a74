package interp

import (
	"context"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
)

// TestVariablesAreDocuments: each variable, and each part of a message
// variable, is an XML document of its own (WS-BPEL 2.0 sections 8.2.2 and
// 8.2.6). From inside one, '/', '//', parent:: and ancestor:: end at its
// document node and the other axes stay in it, while expressions over
// several variables go on working. Every case runs through the general
// evaluator (internal/xpath1) and through the evaluator the compiler picks
// (the fast one where it takes the expression).
func TestVariablesAreDocuments(t *testing.T) {
	procs := loadFixture(t, "rt-docs")
	p := procs[0]
	in, r := docsInstance(t, p)
	in.Slot(r.LookupVar("note")).Child[0].(*etree.Element).SetText("hello")
	ns := map[string]string{"tns": nsTest}

	tests := []struct {
		name string
		// on: the variable ("a") or part ("in.payload") a <query> is
		// relative to; "" for an expression.
		on, src string
		want    string
		fast    bool // the compiler's evaluator is the fast one
	}{
		{name: "query //", on: "b", src: "//tns:id", want: "tns:id=B"},
		{name: "query // on a part", on: "in.payload", src: "//tns:id", want: "tns:id=P"},
		{name: "query //* counts one document", on: "a", src: "count(//*)", want: "4"},
		{name: "query / is the document node", on: "a", src: "count(/)", want: "1"},
		{name: "query / has no name", on: "a", src: "concat(name(/), ':', /)", want: ":A1a-text"},
		{name: "query /* is the document element", on: "a", src: "local-name(/*)", want: "req"},
		{name: "query /*", on: "a", src: "/*", want: "tns:req=A1a-text"},
		{name: "query absolute path", on: "a", src: "/tns:req/tns:id", want: "tns:id=A"},
		{name: "query absolute attribute", on: "a", src: "string(/tns:req/@n)", want: "1"},
		{name: "query absolute in a predicate", on: "a", src: "tns:id[/tns:req/@n = 1]", want: "tns:id=A"},
		{name: "query .. of the document element", on: "a", src: "count(..)", want: "1"},
		{name: "query ../.. ends", on: "a", src: "count(../..)", want: "0"},
		{name: "query ancestor-or-self", on: "a", src: "count(tns:id/ancestor-or-self::node())", want: "3"},
		{name: "query preceding stays", on: "b", src: "count(preceding::node())", want: "0"},
		{name: "query following stays", on: "a", src: "count(tns:n/following::*)", want: "1"},
		{name: "query relative", on: "a", src: "tns:id", want: "tns:id=A", fast: true},
		{name: "query with a variable", on: "a", src: "*[string-length(.) = string-length($b/tns:id)]", want: "tns:id=A,tns:n=1"},
		{name: "query absolute with a variable", on: "b", src: "count(//tns:id[. != $a/tns:id])", want: "1"},
		{name: "// in an expression sees no variable", src: "count(//tns:id)", want: "0"},
		{name: "/ in an expression", src: "count(/*)", want: "0"},
		{name: "$var//", src: "$b//tns:id", want: "tns:id=B"},
		{name: "$var/.. is the document node", src: "count($a/..)", want: "1"},
		{name: "$var/../.. ends", src: "count($a/../..)", want: "0"},
		{name: "parent:: of the document node", src: "count($a/../parent::node())", want: "0"},
		{name: "ancestor:: has no element", src: "count($a/tns:id/ancestor::*)", want: "1"},
		{name: "ancestor::node() ends at the document node", src: "count($a/tns:id/ancestor::node())", want: "2"},
		{name: "name of the document node", src: "concat(name($a/tns:id/../..), ':', $a/tns:id/../..)", want: ":A1a-text"},
		{name: "element part's ancestors", src: "count($in.payload/tns:id/ancestor::node())", want: "2"},
		{name: "type part is a document", src: "count($note.text/ancestor-or-self::node())", want: "2"},
		{name: "type variable is a document", src: "concat(count($t/tns:id/ancestor::node()), count($t/../..))", want: "20"},
		{name: "following:: stays in the variable", src: "count($a/tns:text/following::node())", want: "0"},
		{name: "preceding:: stays in the variable", src: "count($b/tns:id/preceding::node())", want: "0"},
		{name: "preceding-sibling:: of a document element", src: "count($a/preceding-sibling::node())", want: "0"},
		{name: "preceding-sibling:: of a type variable", src: "count($t/preceding-sibling::node())", want: "0"},
		{name: "preceding:: of a type variable", src: "count($t/preceding::node())", want: "0"},
		{name: "a union of two variables' nodes", src: "count($a/tns:id | $b/tns:id)", want: "2"},
		{name: "following-sibling:: of a type variable", src: "count($t/following-sibling::node())", want: "0"},
		{name: "following:: of a message variable", src: "count($in/following::node())", want: "0"},
		{name: "following-sibling:: of a type part", src: "count($note.text/following-sibling::node())", want: "0"},
		{name: "two variables in a predicate", src: "$b/tns:id[. != $a/tns:id]", want: "tns:id=B"},
		{name: "two variables compared", src: "$a/tns:n < $b/tns:n", want: "true", fast: true},
		{name: "a path", src: "$a/tns:text", want: "tns:text=a-text", fast: true},
		{name: "a part", src: "$in.payload/tns:id", want: "tns:id=P", fast: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := in.root
			if tt.on != "" {
				name, part, _ := strings.Cut(tt.on, ".")
				v := r.LookupVar(name)
				pi := -1
				if part != "" {
					pi = v.PartIndex(part)
				}
				ctx = expr.BaseNode(in.root, v, pi)
			}
			rw, err := expr.Rewrite(tt.src, r, nil, ns, true)
			if err != nil {
				t.Fatal(err)
			}
			x, err := expr.NewExpr(tt.src, rw, ns)
			if err != nil {
				t.Fatalf("%s (compiled as %s): %v", tt.src, rw, err)
			}
			if got := render(x.Eval(&in.docs, ctx)); got != tt.want {
				t.Errorf("general evaluator: %s (compiled as %s) = %q, want %q", tt.src, rw, got, tt.want)
			}
			x.Fast = expr.CompileSimplePath(tt.src, r, ns, tt.on != "")
			if x.Fast == nil && tt.on == "" {
				x.FastX = expr.CompileFast(tt.src, r, ns)
			}
			if fast := x.Fast != nil || x.FastX != nil; fast != tt.fast {
				t.Fatalf("fast evaluator takes %s: %v, want %v", tt.src, fast, tt.fast)
			}
			if got := render(x.Eval(&in.docs, ctx)); got != tt.want {
				t.Errorf("compiler's evaluator: %s = %q, want %q", tt.src, got, tt.want)
			}
		})
	}
}

// docsInstance is an instance of p (rt-docs or rt-xpath2) with $in =
// tns:req P, $a = tns:req A (with @n = 1), $b = tns:req B and $t = tns:id T.
func docsInstance(t testing.TB, p *Version) (*Instance, varResolver) {
	t.Helper()
	in := NewInstance(testHost{}, p, context.Background())
	r := varResolver{p}
	in.StoreMessage(r.LookupVar("in"), poMessageOf(testReq(t, "P", "3", "x")))
	aEl := testReq(t, "A", "1", "a-text")
	aEl.CreateAttr("n", "1")
	in.Slot(r.LookupVar("a")).AddChild(aEl)
	in.Slot(r.LookupVar("b")).AddChild(testReq(t, "B", "2", "b-text"))
	tid := in.Slot(r.LookupVar("t")).CreateElement("tns:id")
	tid.CreateAttr("xmlns:tns", nsTest)
	tid.SetText("T")
	return in, r
}

// TestRewriteAbsolutePaths: a '/' that starts a location path (XPath 1.0
// section 3.7: no operand before it) compiles to the context node's
// document node; a step separator, a '/' in a literal and the compiler's
// own $var paths stay as they are.
func TestRewriteAbsolutePaths(t *testing.T) {
	procs := loadFixture(t, "rt-docs")
	r := varResolver{procs[0]}
	const d = expr.DocRootPath
	tests := []struct{ src, want string }{
		{"/", d},
		{" / ", " " + d + " "},
		{"/tns:req", d + "/tns:req"},
		{"//tns:id", d + "//tns:id"},
		{"/*", d + "/*"},
		{"/@n", d + "/@n"},
		{"count(/)", "count(" + d + ")"},
		{"count(/ )", "count(" + d + " )"},
		{"a/b//c", "a/b//c"},
		{"./a | /b", "./a | " + d + "/b"},
		{"../a", "../a"},
		{"a[/b = 1]/c", "a[" + d + "/b = 1]/c"},
		{"f(/a, //b)", "f(" + d + "/a, " + d + "//b)"},
		{"2 * /a", "2 * " + d + "/a"},
		{"* / 2", "* / 2"},
		{"tns:* / 2", "tns:* / 2"},
		{"a div /b", "a div " + d + "/b"},
		{"a and //b or /c", "a and " + d + "//b or " + d + "/c"},
		{"div/mod", "div/mod"},
		{"'/x' = /x", "'/x' = " + d + "/x"},
		{"(a)/b", "(a)/b"},
		{"a[1]/b", "a[1]/b"},
		{"1.5 - /a", "1.5 - " + d + "/a"},
		{"child::a/b", "child::a/b"},
		{"text()/x", "text()/x"},
		{"$a/tns:id", "/v3/*/tns:id"},
		{"$in.payload//tns:id", "/v1/payload/*//tns:id"},
		{"$b/x[. = /y]", "/v4/*/x[. = " + d + "/y]"},
	}
	for _, tt := range tests {
		got, err := expr.Rewrite(tt.src, r, nil, map[string]string{"tns": nsTest}, true)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		if got != tt.want {
			t.Errorf("rewrite(%q) = %q, want %q", tt.src, got, tt.want)
		}
	}
}

// FuzzRewrite: without variables, the rewrite only turns a '/' that
// starts a path into docRootPath (followed by the '/' when a step
// follows), so turning those back gives the source. (Whether the result
// compiles is for the tables above.)
func FuzzRewrite(f *testing.F) {
	for _, s := range []string{"/", "//a", "a/b", "2 * /a", "* / 2", "a[/b]", "'/'", "count(/)", "a div /b", "tns:*/x", "/ /"} {
		f.Add(s)
	}
	ns := map[string]string{"tns": nsTest}
	f.Fuzz(func(t *testing.T, src string) {
		if strings.Contains(src, "$") || strings.Contains(src, expr.DocRootPath) {
			return
		}
		rw, err := expr.Rewrite(src, varResolver{&Version{Plan: &plan.Plan{}}}, nil, ns, true)
		if err != nil {
			return
		}
		back := strings.ReplaceAll(strings.ReplaceAll(rw, expr.DocRootPath+"/", "/"), expr.DocRootPath, "/")
		if back != src {
			t.Fatalf("rewrite(%q) = %q: more changed than a leading '/'", src, rw)
		}
	})
}
