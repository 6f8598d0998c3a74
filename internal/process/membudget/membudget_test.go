package membudget

import (
	"errors"
	"strings"
	"testing"

	"github.com/beevik/etree"
)

// TestCharge: a variable's size follows the copies into it (what enters
// added, what it replaces taken off), measured whole only while unknown
// and before a refusal; over a bound a copy is refused, naming the
// variable, the bound and what sets it, and the size kept is the
// measured one.
func TestCharge(t *testing.T) {
	doc := etree.NewDocument()
	if err := doc.ReadFromString(`<slot><v a="xy"><b>hello</b></v></slot>`); err != nil {
		t.Fatal(err)
	}
	slot := doc.Root()
	if got := Size(slot); got != 10 { // v, a, xy, b, hello
		t.Fatalf("Size = %d, want 10", got)
	}
	var m Meter
	m.StartRun(30, 0, Bounds{MaxRunBytes: 50})
	for i, s := range []struct {
		old, n int64
		want   string // in the error; "" none
	}{
		{old: 5, n: 10},  // 10-5+10 = 15; run 10
		{old: 10, n: 20}, // 15-10+20 = 25; run 30
		// 25-20+41 = 46 is over: measured again (10), 10-20+41 = 31 still is.
		{old: 20, n: 41, want: "variable v would hold 31 bytes, over the bound of 30 for one variable (orchd:maxVariableBytes in deploy.xml sets it)"},
		{old: 20, n: 5}, // 10-20+5 < 0: 0; run 35
		{old: 5, n: 20, want: "assigning to variable v, the run assigned 55 bytes into variables, over the bound of 50 for one run (serve --max-run-bytes sets it)"},
		{old: 10, n: 15}, // 0-10+15 = 5; run 50
	} {
		err := m.Charge(1, 0, "v", slot, s.old, s.n)
		if s.want == "" && err != nil {
			t.Fatalf("copy %d: %v", i, err)
		}
		if s.want != "" && (!errors.Is(err, ErrExceeded) || !strings.Contains(err.Error(), s.want)) {
			t.Fatalf("copy %d: got %v, want %q", i, err, s.want)
		}
	}
	m.Forget(0)
	m.StartRun(30, 0, Bounds{MaxRunBytes: 50})
	if err := m.Charge(1, 0, "v", slot, 10, 31); err == nil || !strings.Contains(err.Error(), "would hold 31 bytes") {
		t.Fatalf("after Forget the variable is measured again (10 bytes): got %v", err)
	}
}

// TestChargeMeasuresBeforeRefusing: a size kept from copies that says a
// write would go over the bound is measured again first, and the write
// that fits the measured size is taken.
func TestChargeMeasuresBeforeRefusing(t *testing.T) {
	doc := etree.NewDocument()
	if err := doc.ReadFromString(`<slot><v a="xy"><b>hello</b></v></slot>`); err != nil {
		t.Fatal(err)
	}
	slot := doc.Root() // 10 bytes
	var m Meter
	m.StartRun(30, 0, Bounds{MaxRunBytes: 1000})
	// Kept: 10 (measured), then 10-0+15 = 25 (the accounting overstates:
	// the slot still holds 10).
	for _, n := range []int64{0, 15} {
		if err := m.Charge(1, 0, "v", slot, 0, n); err != nil {
			t.Fatal(err)
		}
	}
	// 25+10 = 35 is over on the size kept; measured, 10+10 = 20 fits.
	if err := m.Charge(1, 0, "v", slot, 0, 10); err != nil {
		t.Fatalf("a write that fits the measured size was refused: %v", err)
	}
}
