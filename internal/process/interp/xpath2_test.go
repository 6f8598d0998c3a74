package interp

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/deploy"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// xp2Fixture is an instance of the rt-xpath2 process with its variables
// filled, and what XPath 2.0 is compiled against: its declarations in the
// scope of an element declaring tns, ode, bpel and dd.
type xp2Fixture struct {
	in *Instance
	p  *Version
	dp *deploy.Process
	at *etree.Element
	r  varResolver
}

func newXP2Fixture(t *testing.T) *xp2Fixture {
	t.Helper()
	procs := loadFixture(t, "rt-xpath2")
	p := procs[0]
	in, r := docsInstance(t, p)
	in.Slot(r.LookupVar("note")).Child[0].(*etree.Element).SetText("hello")
	in.Slot(r.LookupVar("i")).SetText(" 41 ")
	in.Slot(r.LookupVar("d")).SetText("2024-02-28T10:00:00Z")
	in.Slot(r.LookupVar("flag")).SetText("false")

	root := etree.NewElement("process")
	root.CreateAttr("xmlns:tns", nsTest)
	root.CreateAttr("xmlns:ode", xmldoc.NSODEFunctions)
	root.CreateAttr("xmlns:bpel", xmldoc.NSBPEL)
	root.CreateAttr("xmlns:dd", xmldoc.NSDD)
	at := root.CreateElement("from")
	vars := map[string]*expr.Var{}
	for _, v := range p.Vars {
		vars[v.Name] = v
	}
	dp := &deploy.Process{Properties: map[exchange.QName]*etree.Element{}}
	g := etree.NewElement("property")
	g.SetText("hello")
	dp.Properties[exchange.QName{Space: xmldoc.NSDD, Local: "greeting"}] = g
	ep := etree.NewElement("property")
	ref := ep.CreateElement("tns:ref")
	ref.CreateAttr("xmlns:tns", nsTest)
	ref.CreateElement("tns:addr").SetText("http://example.com/x")
	dp.Properties[exchange.QName{Space: xmldoc.NSDD, Local: "epr"}] = ep
	return &xp2Fixture{in: in, p: p, dp: dp, at: at, r: r}
}

// eval compiles src as XPath 2.0 (a query on the variable or part "on",
// else an expression) and evaluates it the way the runtime does.
func (f *xp2Fixture) eval(t *testing.T, on, src string) (any, error) {
	t.Helper()
	x, err := compile.XPath2(f.p.Plan, f.dp, f.at, src, on != "")
	if err != nil {
		return nil, err
	}
	ctx := f.in.root
	if on != "" {
		name, part, _ := strings.Cut(on, ".")
		v := f.r.LookupVar(name)
		pi := -1
		if part != "" {
			pi = v.PartIndex(part)
		}
		ctx = expr.BaseNode(f.in.root, v, pi)
	}
	return f.in.Eval(x, ctx, xmldoc.Pos{})
}

// render2 renders an XPath 2.0 result: nodes as render does, an element
// an ODE function built as its XML, an atomic value as its string.
func render2(v any) string {
	var buf [1]expr.Node
	if nodes, ok := expr.NodesIn(v, &buf); ok && len(nodes) == 1 {
		if e, ok := nodes[0].Tok.(*etree.Element); ok && nodes[0].Attr < 0 && e.Parent() == nil {
			d := etree.NewDocument()
			d.SetRoot(e.Copy())
			s, _ := d.WriteToString()
			return s
		}
	}
	return render(v)
}

// TestXPath2Expressions: XPath 2.0 over the variable tree: every variable
// and part is a document of its own, simple-typed variables and parts are
// their typed values, and the functions and types XPath 1.0 lacks work.
func TestXPath2Expressions(t *testing.T) {
	f := newXP2Fixture(t)
	tests := []struct {
		name, on, src, want string
	}{
		{"element variable", "", "$a/tns:id", "tns:id=A"},
		{"$var/.. is the document node", "", "count($a/..)", "1"},
		{"$var/../.. ends", "", "count($a/../..)", "0"},
		{"ancestors end at the document node", "", "count($a/tns:id/ancestor::node())", "2"},
		{"root() is the variable's document", "", "root($a/tns:id) is $a/..", "true"},
		{"root() differs between variables", "", "root($a/tns:id) is root($b/tns:id)", "false"},
		{"// in an expression sees no variable", "", "count(//tns:id)", "0"},
		{"element part's ancestors", "", "count($in.payload/tns:id/ancestor::node())", "2"},
		{"message variable's parts", "", "count($in/*)", "1"},
		{"type variable is a document", "", "count($t/tns:id/ancestor::node())", "2"},
		{"following:: stays in the variable", "", "count($a/tns:text/following::node())", "0"},
		{"query //", "b", "//tns:id", "tns:id=B"},
		{"query absolute path", "a", "/tns:req/tns:id", "tns:id=A"},
		{"query .. of the document element", "a", "count(../..)", "0"},
		{"query with a variable", "a", "tns:id[. lt $b/tns:id]", "tns:id=A"},
		{"typed int", "", "$i + 1", "42"},
		{"typed int is xs:int", "", "$i instance of xs:int", "true"},
		{"int in a predicate is positional", "", "($a/*)[$i - 40]", "tns:id=A"},
		{"typed string part", "", "$note.text instance of xs:string", "true"},
		{"typed boolean", "", "if ($flag) then 'yes' else 'no'", "no"},
		{"dateTime arithmetic", "", "$d + xs:dayTimeDuration('P1D')", "2024-02-29T10:00:00Z"},
		{"dateTime difference", "", "xs:dateTime('2024-03-01T00:00:00Z') - $d", "P1DT14H"},
		{"tokenize and string-join", "", "string-join(tokenize('a,b,c', ','), '-')", "a-b-c"},
		{"for expression", "", "string-join(for $x in 1 to 3 return string($x * 2), ' ')", "2 4 6"},
		{"decimal arithmetic is exact", "", "0.1 + 0.2", "0.3"},
		{"strings compare as strings", "", "'10' lt '9'", "true"},
		{"uninitialized simple variable is empty", "", "count($unset)", "0"},
		{"process QName", "", "local-name-from-QName($ode:processQName)", "Test"},
		{"pid", "", "string-length($ode:pid) > 0", "true"},
		{"currentEventDateTime", "", "$ode:currentEventDateTime instance of xs:dateTime and current-dateTime() - $ode:currentEventDateTime lt xs:dayTimeDuration('PT1M')", "true"},
		{"process-property text", "", "ode:process-property('dd:greeting')", "=hello"},
		{"process-property element", "", "string(ode:process-property('epr')/tns:addr)", "http://example.com/x"},
		{"process-property absent", "", "count(ode:process-property('dd:nothing'))", "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := f.eval(t, tt.on, tt.src)
			if err != nil {
				t.Fatalf("%s: %v", tt.src, err)
			}
			if got := render2(v); got != tt.want {
				t.Errorf("%s = %q, want %q", tt.src, got, tt.want)
			}
		})
	}
}

// TestXPath2Errors: syntax errors are refused at compile time with the
// W3C code; dynamic errors become bpel:subLanguageExecutionFault, and a
// condition without an effective boolean value too.
func TestXPath2Errors(t *testing.T) {
	f := newXP2Fixture(t)
	compileErrs := []struct{ src, want string }{
		{"1 +", "XPST0003"},
		{"if (1) then 2", "XPST0003"},
		{"$nosuch", "undeclared variable $nosuch"},
		{"$in.nopart", "undeclared variable $in.nopart"},
		{"fn:nosuch()", "XPST0017"},
		{"ode:nosuch()", "XPST0017"},
		{"bpel:doXslTransform($a, $a)", "the stylesheet must be a string literal"},
	}
	for _, tt := range compileErrs {
		if _, err := f.eval(t, "", tt.src); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error containing %q", tt.src, err, tt.want)
		}
	}
	var fv *faultValue
	if _, err := f.eval(t, "", "xs:integer('x')"); !errors.As(err, &fv) || fv.Name.Local != "subLanguageExecutionFault" || !strings.Contains(fv.Reason, "FORG0001") {
		t.Errorf("dynamic error: got %v, want subLanguageExecutionFault naming FORG0001", err)
	}
	x, err := compile.XPath2(f.p.Plan, f.dp, f.at, "(1, 2)", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.in.Cond(x, xmldoc.Pos{}); !errors.As(err, &fv) || fv.Name.Local != "subLanguageExecutionFault" || !strings.Contains(fv.Reason, "FORG0006") {
		t.Errorf("condition without EBV: got %v, want subLanguageExecutionFault naming FORG0006", err)
	}
	for src, want := range map[string]bool{"$a/tns:id = 'A'": true, "$flag": false, "()": false, "'false'": true, "0": false} {
		x, err := compile.XPath2(f.p.Plan, f.dp, f.at, src, false)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := f.in.Cond(x, xmldoc.Pos{}); err != nil || got != want {
			t.Errorf("condition %s = %v, %v; want %v", src, got, err, want)
		}
	}
}

// TestODEFunctions: Apache ODE's XPath extension functions, as ODE 1.3
// implemented them; the tree functions return a changed copy of the
// parent and leave the variable as it was.
func TestODEFunctions(t *testing.T) {
	f := newXP2Fixture(t)
	const req = `<tns:req xmlns:tns="urn:test" n="1">`
	tests := []struct{ name, src, want string }{
		{"combineUrl", "ode:combineUrl('http://example.com/html/about.html', '../experts/')", "http://example.com/experts/"},
		{"combine-url absolute", "ode:combine-url('http://a/b', 'http://c/d')", "http://c/d"},
		{"composeUrl pairs", "ode:composeUrl('http://x/{user}/{tag}/{missing}', 'user', 'bill', 'tag', 'ruby')", "http://x/bill/ruby/"},
		{"composeUrl default", "ode:composeUrl('http://x/{user}/{m=d}', 'user', 'bill')", "http://x/bill/d"},
		{"composeUrl element", "ode:composeUrl('http://x/{id}/{n}', $a)", "http://x/A/1"},
		{"expandTemplate keeps unknown", "ode:expandTemplate('http://x/{user}/{missing}/{m=d}', 'user', 'bill')", "http://x/bill/{missing}/d"},
		{"splitToElements", "ode:splitToElements('a, b,c', ',', 'chunk')", `<wrapper><chunk>a</chunk><chunk>b</chunk><chunk>c</chunk></wrapper>`},
		{"split-to-elements with namespace", "ode:split-to-elements('a', ',', 'c', 'urn:x')", `<wrapper><c xmlns="urn:x">a</c></wrapper>`},
		{"delete", "ode:delete($a/tns:n)", req + `<tns:id>A</tns:id><tns:text>a-text</tns:text></tns:req>`},
		{"delete with context", "ode:delete($a, ($a/tns:id, $a/tns:text))", req + `<tns:n>1</tns:n></tns:req>`},
		{"insert-before", "ode:insert-before($a/tns:n, $b/tns:id)", req + `<tns:id>A</tns:id><tns:id>B</tns:id><tns:n>1</tns:n><tns:text>a-text</tns:text></tns:req>`},
		{"insert-before with context", "ode:insert-before($a, $a/tns:id, $b/tns:n)", req + `<tns:n>2</tns:n><tns:id>A</tns:id><tns:n>1</tns:n><tns:text>a-text</tns:text></tns:req>`},
		{"insert-after", "ode:insert-after($a/tns:n, $b/tns:id)", req + `<tns:id>A</tns:id><tns:n>1</tns:n><tns:id>B</tns:id><tns:text>a-text</tns:text></tns:req>`},
		{"insert-as-first-into", "ode:insert-as-first-into($a, $b/tns:text)", req + `<tns:text>b-text</tns:text><tns:id>A</tns:id><tns:n>1</tns:n><tns:text>a-text</tns:text></tns:req>`},
		{"insert-as-last-into", "ode:insert-as-last-into($a, $b/tns:id)", req + `<tns:id>A</tns:id><tns:n>1</tns:n><tns:text>a-text</tns:text><tns:id>B</tns:id></tns:req>`},
		{"rename by string", "ode:rename($a/tns:n, 'tns:count')", req + `<tns:id>A</tns:id><tns:count>1</tns:count><tns:text>a-text</tns:text></tns:req>`},
		{"rename by QName", "ode:rename($a/tns:n, QName('urn:y', 'y:m'))", req + `<tns:id>A</tns:id><y:m xmlns:y="urn:y">1</y:m><tns:text>a-text</tns:text></tns:req>`},
		{"dom-to-string", "ode:dom-to-string($b/tns:id)", `<tns:id xmlns:tns="urn:test">B</tns:id>`},
		{"string-to-dom", "ode:string-to-dom('<x:a xmlns:x=\"urn:x\"><x:b>1</x:b></x:a>')", `<x:a xmlns:x="urn:x"><x:b>1</x:b></x:a>`},
		{"string-to-dom of dom-to-string", "ode:string-to-dom(ode:dom-to-string($b/tns:id))", `<tns:id xmlns:tns="urn:test">B</tns:id>`},
		{"the variable is unchanged", "count($a/*)", "3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := f.eval(t, "", tt.src)
			if err != nil {
				t.Fatalf("%s: %v", tt.src, err)
			}
			if got := render2(v); got != tt.want {
				t.Errorf("%s =\n %s\nwant\n %s", tt.src, got, tt.want)
			}
		})
	}
	for _, src := range []string{
		"ode:combineUrl('relative', 'x')",
		"ode:delete(($a/tns:id, $b/tns:id))",
		"ode:insert-as-last-into(($a, $b), $a/tns:id)",
		"ode:splitToElements('a', '(', 'c')",
		"ode:composeUrl('x', 'a', 'b', 'c')",
	} {
		var fv *faultValue
		if _, err := f.eval(t, "", src); !errors.As(err, &fv) || fv.Name.Local != "subLanguageExecutionFault" {
			t.Errorf("%s: got %v, want subLanguageExecutionFault", src, err)
		}
	}
}

// TestCurrentEventDateTime: $ode:currentEventDateTime is when the
// message that started the run was received.
func TestCurrentEventDateTime(t *testing.T) {
	f := newXP2Fixture(t)
	f.in.trigger = &exchange.Exchange{Received: time.Date(2026, 3, 1, 9, 30, 0, 250e6, time.UTC)}
	got, err := f.eval(t, "", "string($ode:currentEventDateTime)")
	if err != nil || render2(got) != "2026-03-01T09:30:00.25Z" {
		t.Errorf("$ode:currentEventDateTime = %s, %v; want 2026-03-01T09:30:00.25Z", render2(got), err)
	}
}
