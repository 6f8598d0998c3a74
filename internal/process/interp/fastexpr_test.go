package interp

import (
	"context"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
)

// TestFastExprMatchesXPath evaluates each expression both with the fast
// evaluator and with the general one (internal/xpath1) on the same
// instance tree; they must agree.
func TestFastExprMatchesXPath(t *testing.T) {
	p := loadPO(t)
	in := NewInstance(testHost{}, p, context.Background())
	if err := in.Start(); err != nil {
		t.Fatal(err)
	}
	r := varResolver{p}
	in.StoreMessage(r.LookupVar("poIn"), poInMessage(t, p))
	in.Slot(r.LookupVar("i")).SetText("2")
	in.Slot(r.LookupVar("total")).SetText("39.98")
	in.Slot(r.LookupVar("totalText")).SetText("12.50")
	ns := map[string]string{"po": "urn:example:po", "crm": "urn:example:crm"}
	exprs := []string{
		"1 + 2 * 3", "7 div 2", "7 mod 3", "-$i", "$i + 1", "$total * 100",
		"round(2.5)", "round(-2.5)", "round($total * 100) mod 100", "floor(3.7)", "ceiling(3.2)",
		"count($poIn.payload/po:items/po:item)", "count($poIn.payload/po:items/po:item) = 0",
		"$i <= count($poIn.payload/po:items/po:item)",
		"$total + $poIn.payload/po:items/po:item[$i]/po:qty * $poIn.payload/po:items/po:item[$i]/po:unitPrice",
		"concat(floor(round($total * 100) div 100), '.', substring(string(round($total * 100) mod 100 + 100), 2))",
		"string($poIn.payload/po:poId)", "$totalText", "number($totalText) + 1",
		"$poIn.payload/po:poId = 'PO-000123'", "$poIn.payload/po:poId != 'PO-000123'",
		"$poIn.payload/po:items/po:item/po:qty = 10", "$poIn.payload/po:items/po:item/po:qty > 5",
		"$poIn.payload/po:items/po:item/po:qty < 1",
		"$poIn.payload/po:nothing = ''", "$poIn.payload/po:nothing != ''", "not($poIn.payload/po:nothing)",
		"boolean($poIn.payload/po:customer)", "true() and false()", "true() or false()",
		"string-length(normalize-space('  a   b  '))", "contains($poIn.payload/po:poId, '0001')",
		"starts-with('abc', 'ab')", "substring('12345', 1.5, 2.6)", "substring('12345', 0, 3)",
		"substring('héllo wörld', 2, 3)", "substring('héllo', 5)", "substring('abc', 2)", "substring('abc', 1, -1)",
		"substring('', 1)", "substring('abc', 4)", "string-length(substring('日本語テキスト', 3, 2))", "-(1 + 2) * -$i", "-$totalText",
		"$i = 2", "$i != 2", "$i < $total", "$i + 1 >= count($poIn.payload/po:items/po:item)", "($i > 1) + 1",
		"concat($i, ' ', $total, ' ', $i > 1, ' ', -$i, ' ', 1 div 0, ' ', $i * 0.5)", "string($i * 0.1)",
		"number(true()) + number('') + 1", "floor(-0.5)", "ceiling(-0.5)", "round(0.49999999999999994)",
		"count($poIn.payload/po:items/po:item/po:sku) * 2", "count($poIn.payload/po:nothing/po:item)",
		"count($poIn.payload/po:items/po:item[2]/@x)", "count($poIn.payload/po:items/po:item/po:sku/text())",
		"sum($poIn.payload/po:items/po:item/po:qty)", "number('12abc')", "number(' 4.5 ')", "'a' = 'a'",
		"1 = true()", "0 = false()", "number($poIn.payload/po:orderDate)",
		"$poIn.payload/po:items/po:item[2]/po:sku", "(1 + 2) * 3", "10 div 0", "-10 div 0", "0 div 0 = 0 div 0",
	}
	for _, src := range exprs {
		fast := expr.CompileFast(src, r, ns)
		if fast == nil {
			t.Errorf("%s: not handled by the fast evaluator", src)
			continue
		}
		want := generalValue(t, src, r, ns, in, in.root)
		got := fast.Value(in.root, nil)
		if !sameValue(got, want) {
			t.Errorf("%s: fast %#v, general %#v", src, got, want)
		}
	}
	// Where antchfx/xpath v1.3.9 departs from XPath 1.0 (section 3.4), the
	// fast evaluator follows the spec, as the general one does
	// (TestAntchfxDeviations).
	for src, want := range map[string]bool{
		// A number compared with a node-set: true if some node compares
		// true (qty 10 > 5), whichever side the node-set is on.
		"5 < $poIn.payload/po:items/po:item/po:qty": true,
		// A boolean compared with a string: both as booleans.
		"'' = false()": true,
	} {
		if got := expr.CompileFast(src, r, ns).Value(in.root, nil); got != want {
			t.Errorf("%s = %v, want %v", src, got, want)
		}
	}
	// substring() at the edges, from XPath 1.0 section 4.2 (antchfx
	// panics on several of them).
	for src, want := range map[string]string{
		"substring('12345', 0 div 0, 3)":        "",
		"substring('12345', 1, 0 div 0)":        "",
		"substring('12345', -42, 1 div 0)":      "12345",
		"substring('12345', -1 div 0, 1 div 0)": "",
		"substring('12345', -1, 3)":             "1",
		"substring('12345', 1, -1)":             "",
		"substring('héllo', 2, 2)":              "él",
	} {
		if got := expr.CompileFast(src, r, ns).Value(in.root, nil); got != want {
			t.Errorf("%s = %q, want %q", src, got, want)
		}
	}
	// Outside the subset: left to the general evaluator.
	for _, src := range []string{"last()", "translate('a','a','b')", "$poIn.payload//po:sku"} {
		if expr.CompileFast(src, r, ns) != nil {
			t.Errorf("%s: the fast evaluator claimed it", src)
		}
	}
}

func poInMessage(t testing.TB, p *Version) *exchange.Message {
	m := exchange.NewMessage(p.Vars[0].Msg.Name)
	m.Parts["payload"] = poMessage(t, "po-request.xml")
	return m
}

// BenchmarkAssign runs the PO's compiled "addItem" assign (five copies:
// an arithmetic expression over paths with [$i] predicates, a literal with
// keepSrcElementName, two path copies, a counter) on one instance.
func BenchmarkAssign(b *testing.B) {
	p := loadPO(b)
	var add *plan.Assign
	for _, a := range p.Acts {
		if x, ok := a.(*plan.Assign); ok && x.Name == "addItem" {
			add = x
		}
	}
	if add == nil {
		b.Fatal("no addItem assign")
	}
	in := NewInstance(testHost{}, p, context.Background())
	if err := in.Start(); err != nil {
		b.Fatal(err)
	}
	r := varResolver{p}
	m := exchange.NewMessage(r.LookupVar("poIn").Msg.Name)
	m.Parts["payload"] = poMessage(b, "po-request.xml")
	in.StoreMessage(r.LookupVar("poIn"), m)
	var prep *plan.Assign
	for _, a := range p.Acts {
		if x, ok := a.(*plan.Assign); ok && x.Name == "prepareErpRequest" {
			prep = x
		}
	}
	if _, _, err := stepAssign(prep, in, &frame{}); err != nil {
		b.Fatal(err)
	}
	iv := in.Slot(r.LookupVar("i"))
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		iv.SetText("1")
		if _, _, err := stepAssign(add, in, &frame{}); err != nil {
			b.Fatal(err)
		}
	}
}

// generalValue is src's value at ctx by the general XPath 1.0 evaluator
// (rewritten, then internal/xpath1): what a fast path must match.
func generalValue(t *testing.T, src string, r varResolver, ns map[string]string, in *Instance, ctx *etree.Element) any {
	t.Helper()
	rw, err := expr.Rewrite(src, r, nil, ns, true)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	x, err := expr.NewExpr(src, rw, ns)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return x.Eval(&in.docs, ctx)
}
