package interp

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/expr"
)

// TestFastPredicatesMatchXPath evaluates path expressions with boolean
// predicates ([po:qty > 0], [not(po:sku)]) with the fast evaluator and
// with the general one, over purchase orders chosen to be awkward (no items,
// missing and repeated children, quantities that are not numbers, another
// namespace, attributes); the two must agree on every one.
func TestFastPredicatesMatchXPath(t *testing.T) {
	items := map[string]string{
		"normal": `<po:item><po:sku>SKU-A100</po:sku><po:qty>2</po:qty><po:unitPrice>19.99</po:unitPrice></po:item>
			<po:item><po:sku>SKU-B200</po:sku><po:qty>1</po:qty><po:unitPrice>250.00</po:unitPrice></po:item>
			<po:item><po:sku>SKU-C300</po:sku><po:qty>10</po:qty><po:unitPrice>3.25</po:unitPrice></po:item>`,
		"none":      ``,
		"no qty":    `<po:item><po:sku>A</po:sku><po:unitPrice>1</po:unitPrice></po:item><po:item><po:sku>B</po:sku><po:qty>3</po:qty><po:unitPrice>1</po:unitPrice></po:item>`,
		"NaN qty":   `<po:item><po:sku>A</po:sku><po:qty>abc</po:qty><po:unitPrice>1</po:unitPrice></po:item>`,
		"empty qty": `<po:item><po:sku>A</po:sku><po:qty/><po:unitPrice>1</po:unitPrice></po:item>`,
		"odd numbers": `<po:item><po:sku>A</po:sku><po:qty> 3 </po:qty><po:unitPrice>-0</po:unitPrice></po:item>
			<po:item><po:sku>B</po:sku><po:qty>1.</po:qty><po:unitPrice>1.</po:unitPrice></po:item>
			<po:item><po:sku>C</po:sku><po:qty>-1</po:qty><po:unitPrice>.5</po:unitPrice></po:item>
			<po:item><po:sku>D</po:sku><po:qty>0</po:qty><po:unitPrice>-2</po:unitPrice></po:item>`,
		"two qty":     `<po:item><po:sku>A</po:sku><po:qty>0</po:qty><po:qty>5</po:qty><po:unitPrice>1</po:unitPrice></po:item><po:item><po:sku>B</po:sku><po:qty>7</po:qty><po:qty>0</po:qty><po:unitPrice>1</po:unitPrice></po:item>`,
		"other ns":    `<item xmlns="urn:other"><sku>A</sku><qty>2</qty></item><po:item><po:sku>B</po:sku><qty>2</qty><po:unitPrice>1</po:unitPrice></po:item>`,
		"attributes":  `<po:item kind="x"><po:sku>A</po:sku><po:qty>2</po:qty></po:item><po:item kind="y" po:kind="x"><po:sku>B]/b</po:sku><po:qty>20</po:qty></po:item>`,
		"mixed":       `text<po:item><po:sku>A</po:sku><po:qty>2<!-- c --></po:qty></po:item>more<po:other><po:qty>9</po:qty></po:other>`,
		"nested item": `<po:item><po:sku>A</po:sku><po:qty>6</po:qty><po:item><po:qty>8</po:qty></po:item></po:item>`,
	}
	exprs := []string{
		// The purchase order's validation.
		"boolean($poIn.payload/po:items/po:item[not(number(po:qty) > 0) or not(number(po:unitPrice) >= 0)])",
		"$poIn.payload/po:items/po:item[po:qty > 1]",
		"$poIn.payload/po:items/po:item[po:qty > 1]/po:sku",
		"count($poIn.payload/po:items/po:item[po:sku])",
		"count($poIn.payload/po:items/po:item[not(po:qty)])",
		"count($poIn.payload/po:items/po:item[po:qty = '2'])",
		"count($poIn.payload/po:items/po:item[po:qty = 2])",
		"count($poIn.payload/po:items/po:item[po:qty != 0])",
		"$poIn.payload/po:items/po:item[po:sku = 'SKU-B200']/po:qty",
		"sum($poIn.payload/po:items/po:item[number(po:qty) = number(po:qty)]/po:unitPrice)",
		"count($poIn.payload/po:items/po:item[@kind = 'x'])",
		"count($poIn.payload/po:items/po:item[@po:kind])",
		"count($poIn.payload/po:items/po:item[po:qty > $i])",
		"count($poIn.payload/po:items/*[po:qty])",
		"$poIn.payload/po:items/po:item[po:qty > 0 and po:unitPrice < 100]/po:sku",
		"boolean($poIn.payload/po:items/po:item[contains(po:sku, 'B')])",
		"$poIn.payload/po:items[po:item[po:qty > 5]]/po:item[2]/po:sku",
		"count($poIn.payload/po:items/po:item[$totalText])",
		"count($poIn.payload/po:items/po:item[string(po:qty)])",
		"count($poIn.payload/po:items/po:item[normalize-space(po:qty) = '3'])",
		"$poIn.payload/po:items[po:item/po:qty = 10]/po:item[1]/po:sku",
		"$poIn.payload/po:items/po:item[po:sku != 'a]/b']/po:sku",
		"count($poIn.payload/po:items/po:item[po:sku = \"B]/b\"])",
		"count($poIn.payload/po:items/po:item[po:item/po:qty])",
		"count($poIn.payload/po:items/po:item[true()])",
		"count($poIn.payload/po:items/po:item[false() or po:qty < 0])",
		"$poIn.payload/po:items/po:item[po:qty > 1]/po:qty * 2",
		"$poIn.payload/po:items/po:item[po:qty >= 10]/po:unitPrice = 3.25",
	}
	p := loadPO(t)
	r := varResolver{p}
	ns := map[string]string{"po": "urn:example:po"}
	for name, body := range items {
		in := NewInstance(testHost{}, p, context.Background())
		if err := in.Start(); err != nil {
			t.Fatal(err)
		}
		in.StoreMessage(r.LookupVar("poIn"), poWithItems(t, p, body))
		in.Slot(r.LookupVar("i")).SetText("2")
		in.Slot(r.LookupVar("totalText")).SetText("x")
		// The same predicates in a <query>, relative to the part.
		base := expr.BaseNode(in.root, r.LookupVar("poIn"), 0)
		for _, q := range []string{
			"po:items/po:item[po:qty > 1]/po:sku", "po:items/po:item[not(number(po:qty) > 0)]",
			"po:items[po:item/po:qty = 10]/po:item[1]", "po:items/*[po:sku = 'A']/po:qty", "po:items/po:item[@kind]",
		} {
			sp := expr.CompilePath(q, r, ns, true, true)
			if sp == nil {
				t.Errorf("query %s: not handled by the fast path", q)
				continue
			}
			if got, want := sp.Value(in.root, base), generalValue(t, q, r, ns, in, base); !sameValue(got, want) {
				t.Errorf("%s: query %s: fast %#v, general %#v", name, q, got, want)
			}
			if expr.CompileSimplePath(q, r, ns, true) != nil {
				t.Errorf("query %s: compileSimplePath (shared with XPath 2.0) took a filter predicate", q)
			}
		}
		for _, src := range exprs {
			fast := expr.CompileFast(src, r, ns)
			if fast == nil {
				t.Errorf("%s: not handled by the fast evaluator", src)
				continue
			}
			if got, want := fast.Value(in.root, nil), generalValue(t, src, r, ns, in, in.root); !sameValue(got, want) {
				t.Errorf("%s: %s: fast %#v, general %#v", name, src, got, want)
			}
		}
	}
	// Where antchfx/xpath departs from XPath 1.0, the fast evaluator
	// follows the spec (as the general one does), as it does outside predicates: number() takes no
	// sign, exponent or "Infinity" (section 4.4); sum() reads its nodes as
	// number() does (spaces around a number) and is NaN over a non-number;
	// a name test without a prefix matches only elements in no namespace
	// (section 2.3).
	for _, tc := range []struct {
		items, src string
		want       float64
	}{
		{`<po:item><po:qty>1e3</po:qty></po:item><po:item><po:qty>Infinity</po:qty></po:item><po:item><po:qty>+7</po:qty></po:item>`, "count($poIn.payload/po:items/po:item[po:qty > 1])", 0},
		{`<po:item><po:qty>1</po:qty></po:item><po:item><po:qty>x</po:qty></po:item>`, "sum($poIn.payload/po:items/po:item[po:qty]/po:qty)", math.NaN()},
		{`<po:item><po:qty> 3 </po:qty></po:item><po:item><po:qty>x</po:qty></po:item>`, "sum($poIn.payload/po:items/po:item[number(po:qty) > 0]/po:qty)", 3},
		{`<item xmlns="urn:other"><qty>2</qty></item><po:item><qty>2</qty></po:item>`, "count($poIn.payload/po:items/*[qty])", 1},
	} {
		in := NewInstance(testHost{}, p, context.Background())
		if err := in.Start(); err != nil {
			t.Fatal(err)
		}
		in.StoreMessage(r.LookupVar("poIn"), poWithItems(t, p, tc.items))
		got := expr.CompileFast(tc.src, r, ns).Value(in.root, nil)
		if !sameValue(got, tc.want) {
			t.Errorf("%s over %s = %v, want %v", tc.src, tc.items, got, tc.want)
		}
	}
	// Predicates the fast path leaves to the general evaluator: numbers (positions),
	// position() and last(), the context item, axes, two predicates.
	for _, src := range []string{
		"$poIn.payload/po:items/po:item[1 + 1]", "$poIn.payload/po:items/po:item[count(po:qty)]",
		"$poIn.payload/po:items/po:item[number(po:qty)]", "$poIn.payload/po:items/po:item[-1]",
		"$poIn.payload/po:items/po:item[last()]", "$poIn.payload/po:items/po:item[position() = 2]",
		"$poIn.payload/po:items/po:item[. = 'x']", "$poIn.payload/po:items/po:item[po:qty][1]",
		"$poIn.payload/po:items/po:item[child::po:qty]", "$poIn.payload/po:items/po:item[../po:item]",
		"$poIn.payload/po:items/po:item[text()]", "$poIn.payload/po:items/po:item[//po:qty]",
		"$poIn.payload/po:items/po:item[po:qty > 1", "$poIn.payload/po:items/po:item[po:sku = 'a]",
		"$poIn.payload/po:items/po:item[$nosuch]", "$poIn.payload/po:items/po:item[bpel:getVariableProperty('a', 'b')]",
		"po:item[po:qty > 1]",
	} {
		if expr.CompileFast(src, r, ns) != nil {
			t.Errorf("%s: the fast evaluator claimed it", src)
		}
	}
}

// poWithItems is the workload request with items as the content of
// po:items.
func poWithItems(t testing.TB, p *Version, items string) *exchange.Message {
	t.Helper()
	doc := etree.NewDocument()
	src := `<po:purchaseOrder xmlns:po="urn:example:po"><po:poId>PO-1</po:poId><po:items>` + items + `</po:items></po:purchaseOrder>`
	if err := doc.ReadFromString(src); err != nil {
		t.Fatalf("%s: %v", strings.TrimSpace(items), err)
	}
	m := exchange.NewMessage(p.Vars[0].Msg.Name)
	m.Parts["payload"] = doc.Root()
	return m
}

func TestXPathNumber(t *testing.T) {
	nan := math.NaN()
	for s, want := range map[string]float64{
		"0": 0, "007": 7, " 42\n": 42, "123456789012345": 123456789012345, "1234567890123456": 1234567890123456,
		"99999999999999999999": 1e20, "-5": -5, "5.": 5, ".5": 0.5, "-0.25": -0.25,
		"": nan, " ": nan, "4 2": nan, "+5": nan, "1e3": nan, "Infinity": nan, "-": nan, ".": nan, "1.2.3": nan, "0x10": nan, "５": nan,
	} {
		if got := expr.XpathNumber(s); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("xpathNumber(%q) = %v, want %v", s, got, want)
		}
	}
}
