package interp

import (
	"context"
	"math"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/expr"
)

// The direct evaluators (fastpath.go, fastexpr.go) are optimisations of
// the general XPath 1.0 evaluator (internal/xpath1): wherever the compiler
// takes one, it must give the general evaluator's value. These tests
// evaluate expressions both ways over one awkward purchase order and
// compare.

// awkwardItems are items whose values XPath 1.0 reads in ways a careless
// evaluator does not: spaces, signs, exponents, Infinity, a no-break
// space, negative zero, an empty value, other namespaces, attributes.
const awkwardItems = `<po:item kind="x"><po:sku>A</po:sku><po:qty>2</po:qty><po:unitPrice>19.99</po:unitPrice></po:item>
<po:item kind="y" po:kind="x"><po:sku>B]/b</po:sku><po:qty> 3 </po:qty><po:unitPrice>-0</po:unitPrice></po:item>
<po:item><po:sku>C</po:sku><po:qty>1e3</po:qty><po:unitPrice>.5</po:unitPrice></po:item>
<po:item><po:sku>D</po:sku><po:qty>+7</po:qty><po:qty>0</po:qty><po:unitPrice>5.</po:unitPrice></po:item>
<po:item><po:sku>E</po:sku><po:qty>Infinity</po:qty><po:unitPrice>&#160;5</po:unitPrice></po:item>
<po:item><po:sku/><po:qty>x</po:qty><po:unitPrice>-1.5</po:unitPrice><po:item><po:qty>8</po:qty></po:item></po:item>
<item xmlns="urn:other"><sku>O</sku><qty>4</qty></item>
<po:item><qty>6</qty><po:qty>-2</po:qty><po:unitPrice>0.1</po:unitPrice></po:item>
text<!-- c -->`

// fastFixture is the purchase order process with an instance holding
// awkwardItems, $i = 2, $total = 39.98 and $totalText = "12.50".
type fastFixture struct {
	r    varResolver
	in   *Instance
	ns   map[string]string
	item *etree.Element // the second po:item, a predicate's context
	part *etree.Element // the payload part, a query's context
}

func newFastFixture(t testing.TB) *fastFixture {
	t.Helper()
	p := loadPO(t)
	in := NewInstance(testHost{}, p, context.Background())
	if err := in.Start(); err != nil {
		t.Fatal(err)
	}
	r := varResolver{p}
	in.StoreMessage(r.LookupVar("poIn"), poWithItems(t, p, awkwardItems))
	in.Slot(r.LookupVar("i")).SetText("2")
	in.Slot(r.LookupVar("total")).SetText("39.98")
	in.Slot(r.LookupVar("totalText")).SetText("12.50")
	part := expr.BaseNode(in.root, r.LookupVar("poIn"), 0)
	return &fastFixture{
		r: r, in: in, ns: map[string]string{"po": "urn:example:po", "o": "urn:other"},
		item: part.SelectElement("po:items").SelectElements("po:item")[1], part: part,
	}
}

// general is src's value at ctx by the general evaluator, or ok false
// when it does not compile (or fails at run time).
func (fx *fastFixture) general(src string, ctx *etree.Element) (v any, ok bool) {
	rw, err := expr.Rewrite(src, fx.r, nil, fx.ns, true)
	if err != nil {
		return nil, false
	}
	x, err := expr.NewExpr(src, rw, fx.ns)
	if err != nil {
		return nil, false
	}
	defer func() {
		if recover() != nil {
			v, ok = nil, false
		}
	}()
	return x.Eval(&fx.in.docs, ctx), true
}

// check compiles src with every direct evaluator the compiler uses (an
// expression: compilePath, compileFast; a query: compilePath relative to
// the part; a step predicate: compileFastPred at an item) and, for each
// that takes it, compares its value with the general evaluator's. It
// returns how many took src.
func (fx *fastFixture) check(t *testing.T, src string) int {
	t.Helper()
	type fast struct {
		what string
		ctx  *etree.Element // nil: the expression's (the tree's root)
		eval func() any
		fx   expr.FastExpr
	}
	root := fx.in.root
	var cands []fast
	if sp := expr.CompilePath(src, fx.r, fx.ns, false, true); sp != nil {
		cands = append(cands, fast{"compilePath", nil, func() any { return sp.Value(root, root) }, nil})
	}
	if fe := expr.CompileFast(src, fx.r, fx.ns); fe != nil {
		cands = append(cands, fast{"compileFast", nil, func() any { return fe.Value(root, nil) }, fe})
	}
	if sp := expr.CompilePath(src, fx.r, fx.ns, true, true); sp != nil {
		cands = append(cands, fast{"query", fx.part, func() any { return sp.Value(root, fx.part) }, nil})
	}
	if fe := expr.CompileFastPred(src, fx.r, fx.ns); fe != nil {
		cands = append(cands, fast{"predicate", fx.item, func() any { return fe.Value(root, fx.item) }, fe})
	}
	for _, c := range cands {
		ctx := c.ctx
		if ctx == nil {
			ctx = root
		}
		want, ok := fx.general(src, ctx)
		if !ok {
			t.Errorf("%s: %s takes it, the general evaluator does not compile or run it", src, c.what)
			continue
		}
		got := c.eval()
		if !sameValue(got, want) {
			t.Errorf("%s: %s gives %s, the general evaluator %s", src, c.what, render(got), render(want))
		}
		if c.fx == nil {
			continue
		}
		// number() and string() of the value, as the unboxed methods
		// compute them.
		fctx := c.ctx
		if n, w := c.fx.Number(root, fctx), expr.ToNumber(got); !sameValue(n, w) {
			t.Errorf("%s: %s: number %v, number(value) %v", src, c.what, n, w)
		}
		if s, w := c.fx.Str(root, fctx), expr.XpathString(got); s != w {
			t.Errorf("%s: %s: str %q, string(value) %q", src, c.what, s, w)
		}
	}
	return len(cands)
}

// sameValue reports whether two XPath values are the same: numbers
// equal with the same sign (or both NaN), node-sets of the same nodes in
// the same order, equal strings and booleans.
func sameValue(a, b any) bool {
	var ab, bb [1]expr.Node
	if x, ok := expr.NodesIn(a, &ab); ok {
		a = x
	}
	if y, ok := expr.NodesIn(b, &bb); ok {
		b = y
	}
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y && math.Signbit(x) == math.Signbit(y) || math.IsNaN(x) && math.IsNaN(y))
	case []expr.Node:
		y, ok := b.([]expr.Node)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// exprGen writes XPath 1.0 expressions in the direct evaluators' subset
// (and a little beyond) over the purchase order, choosing each
// production by the next byte of its input, so that a fuzzer's mutations
// of the bytes are mutations of the expression.
type exprGen struct {
	b      []byte
	i      int
	depth  int
	inPred bool
}

func (g *exprGen) pick(n int) int {
	if g.i >= len(g.b) {
		return 0
	}
	v := int(g.b[g.i]) % n
	g.i++
	return v
}

func (g *exprGen) one(choices ...string) string { return choices[g.pick(len(choices))] }

var genOps = []string{"+", "-", "*", "div", "mod", "=", "!=", "<", "<=", ">", ">=", "and", "or"}

func (g *exprGen) expr() string {
	g.depth++
	defer func() { g.depth-- }()
	if g.depth > 4 {
		return g.atom()
	}
	switch g.pick(9) {
	case 1, 2:
		return g.expr() + " " + g.one(genOps...) + " " + g.expr()
	case 3:
		return "-" + g.expr()
	case 4:
		return "(" + g.expr() + ")"
	case 5, 6:
		return g.call()
	case 7:
		return g.path()
	}
	return g.atom()
}

func (g *exprGen) atom() string {
	if g.inPred && g.pick(2) == 0 {
		return g.one("po:qty", "po:sku", "@kind", "@po:kind", "po:unitPrice", "qty", "po:item/po:qty", "*", "po:nothing")
	}
	return g.one("0", "1", "2", "2.5", ".5", "10", "0.1", "'1e3'", "' 3 '", "'x'", "''", "'\u00a05'", "'-0'", "'+7'",
		"'Infinity'", "'5.'", "'A'", "$i", "$total", "$totalText", "true()", "false()", "1 div 0", "0 div 0")
}

func (g *exprGen) call() string {
	switch g.pick(6) {
	case 0:
		return g.one("count", "sum") + "(" + g.path() + ")"
	case 1:
		return g.one("concat", "contains", "starts-with") + "(" + g.expr() + ", " + g.expr() + ")"
	case 2:
		return "substring(" + g.expr() + ", " + g.expr() + g.one("", ", "+g.expr()) + ")"
	}
	return g.one("number", "string", "boolean", "not", "floor", "ceiling", "round", "string-length", "normalize-space") + "(" + g.expr() + ")"
}

func (g *exprGen) path() string {
	p := "$poIn.payload/po:items/" + g.one("po:item", "*", "o:item")
	if g.pick(2) == 0 {
		p += "[" + g.pred() + "]"
	}
	switch g.pick(6) {
	case 1:
		p += "/po:qty"
	case 2:
		p += "/po:sku"
	case 3:
		p += "/@kind"
	case 4:
		p += "/po:unitPrice/text()"
	}
	return p
}

func (g *exprGen) pred() string {
	switch g.pick(4) {
	case 0:
		return g.one("2", "$i", "1")
	}
	was := g.inPred
	g.inPred = true
	defer func() { g.inPred = was }()
	return g.expr()
}

// genExpr is the expression exprGen writes from b.
func genExpr(b []byte) string {
	g := &exprGen{b: b}
	return g.expr()
}

// TestXPath1FastMatchesGeneral: generated expressions (a fixed sequence,
// so that a failure repeats) and hand-picked ones give the same value by
// the direct evaluators and the general one. At least a good share of
// them must be taken by a direct evaluator, or the test tests nothing.
func TestXPath1FastMatchesGeneral(t *testing.T) {
	fx := newFastFixture(t)
	rng := rand.New(rand.NewSource(1))
	taken := 0
	const n = 3000
	for k := 0; k < n; k++ {
		b := make([]byte, 24)
		rng.Read(b)
		if fx.check(t, genExpr(b)) > 0 {
			taken++
		}
	}
	if taken < n/3 {
		t.Errorf("the direct evaluators took %d of %d generated expressions, want at least a third", taken, n)
	}
	for _, src := range fastSeeds {
		if fx.check(t, src) == 0 {
			t.Errorf("%s: no direct evaluator takes it", src)
		}
	}
}

// fastSeeds are expressions the direct evaluators take, the fuzz
// target's seeds.
var fastSeeds = []string{
	"boolean($poIn.payload/po:items/po:item[not(number(po:qty) > 0) or not(number(po:unitPrice) >= 0)])",
	"$total + $poIn.payload/po:items/po:item[$i]/po:qty * $poIn.payload/po:items/po:item[$i]/po:unitPrice",
	"concat(floor(round($total * 100) div 100), '.', substring(string(round($total * 100) mod 100 + 100), 2))",
	"count($poIn.payload/po:items/po:item[po:sku = 'B]/b'])", "$poIn.payload/po:items[po:item[po:qty > 5]]/po:item[2]/po:sku",
	"po:qty > 0 and @kind", "not(po:sku)", "$i <= count($poIn.payload/po:items/po:item)", "-$i", "$totalText",
	"substring('héllo', 0 div 0)", "sum($poIn.payload/po:items/po:item/po:qty)", "number('1e3')", "'' = false()",
	"5 < $poIn.payload/po:items/po:item/po:qty", "round(-0.5)", "1 div round(-0.25)", "normalize-space('\u00a0a\u00a0')",
	"number($poIn.payload/po:items/po:item[5]/po:unitPrice)", "count($poIn.payload/po:items/*[qty])",
	"sum($poIn.payload/po:items/po:item[number(po:qty) = number(po:qty)]/po:unitPrice)",
	"$poIn.payload/po:items/po:item/po:qty = '+7'", "$poIn.payload/po:items/po:item/@kind != 'x'",
}

// FuzzXPath1Fast is the differential fuzz target of the direct evaluators
// against the general one: each input is compiled as written (mutated
// expressions) and also read as the bytes of a generated expression
// (genExpr), and wherever a direct evaluator takes one, its value must be
// the general evaluator's, and its unboxed number and string what
// number() and string() of that value give.
func FuzzXPath1Fast(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add(s)
	}
	fx := newFastFixture(f)
	f.Fuzz(func(t *testing.T, src string) {
		fx.check(t, src)
		fx.check(t, genExpr([]byte(src)))
	})
}

// render is an XPath value as the tests compare it: a node-set as its
// nodes' names and string-values ("tns:id=A", "@n=v" for an attribute),
// anything else as string().
func render(v any) string {
	var buf [1]expr.Node
	nodes, ok := expr.NodesIn(v, &buf)
	if !ok {
		return expr.XpathString(v)
	}
	var s []string
	for _, n := range nodes {
		name := ""
		if e, ok := n.Tok.(*etree.Element); ok {
			name = e.FullTag()
			if n.Attr >= 0 {
				name = "@" + e.Attr[n.Attr].FullKey()
			}
		}
		s = append(s, name+"="+n.String())
	}
	return strings.Join(s, ",")
}
