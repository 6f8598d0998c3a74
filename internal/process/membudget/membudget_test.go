package membudget

import (
	"errors"
	"strings"
	"testing"

	"github.com/beevik/etree"
)

// TestCharge: a variable's size follows the copies into it (what enters
// added, what it replaces taken off), measured whole only while unknown;
// over a bound a copy is refused, naming the variable, the bound and
// what sets it, and the sizes stay as they were.
func TestCharge(t *testing.T) {
	doc := etree.NewDocument()
	if err := doc.ReadFromString(`<slot><v a="xy"><b>hello</b></v></slot>`); err != nil {
		t.Fatal(err)
	}
	slot := doc.Root()
	if got := Size(slot); got != 10 { // v, a, xy, b, hello
		t.Fatalf("Size = %d, want 10", got)
	}
	l := LimitsOf(30, 0, Bounds{MaxRunBytes: 50})
	var m Meter
	m.StartRun()
	for i, s := range []struct {
		old, n int64
		want   string // in the error; "" none
	}{
		{old: 5, n: 10},  // 10-5+10 = 15; run 10
		{old: 10, n: 20}, // 15-10+20 = 25; run 30
		{old: 20, n: 40, want: "variable v would hold 45 bytes, over the bound of 30 for one variable (orchd:maxVariableBytes in deploy.xml sets it)"},
		{old: 20, n: 5}, // 25-20+5 = 10; run 35
		{old: 5, n: 20, want: "assigning to variable v, the run assigned 55 bytes into variables, over the bound of 50 for one run (serve --max-run-bytes sets it)"},
		{old: 10, n: 15}, // 10-10+15 = 15; run 50
	} {
		err := m.Charge(&l, 1, 0, "v", slot, s.old, s.n)
		if s.want == "" && err != nil {
			t.Fatalf("copy %d: %v", i, err)
		}
		if s.want != "" && (!errors.Is(err, ErrExceeded) || !strings.Contains(err.Error(), s.want)) {
			t.Fatalf("copy %d: got %v, want %q", i, err, s.want)
		}
	}
	m.Forget(0)
	m.StartRun()
	if err := m.Charge(&l, 1, 0, "v", slot, 10, 31); err == nil || !strings.Contains(err.Error(), "would hold 31 bytes") {
		t.Fatalf("after Forget the variable is measured again (10 bytes): got %v", err)
	}
}
