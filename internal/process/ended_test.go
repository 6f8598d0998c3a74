package process

import (
	"fmt"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/process/plan"
)

// The faults of ended instances answer requests by their correlation
// values, for endedKeep, and at most endedMax instances are remembered.
func TestEndedFaults(t *testing.T) {
	p := &interp.Version{Plan: &plan.Plan{Name: exchange.QName{Space: "urn:t", Local: "P"}}}
	other := &interp.Version{Plan: &plan.Plan{Name: exchange.QName{Space: "urn:t", Local: "Q"}}}
	f := &exchange.Fault{Name: interp.BpelFault("conflictingReceive")}
	t0 := time.Unix(1000, 0)
	var tab endedFaults
	tab.note(p, map[string]string{"cs": "K1"}, f, t0)
	tests := []struct {
		name  string
		p     *interp.Version
		tried []string
		at    time.Time
		want  bool
	}{
		{"same values", p, []string{"cs=K1"}, t0.Add(time.Second), true},
		{"among others", p, []string{"cn=7", "cs=K1"}, t0.Add(time.Second), true},
		{"other value", p, []string{"cs=K2"}, t0.Add(time.Second), false},
		{"other process", other, []string{"cs=K1"}, t0.Add(time.Second), false},
		{"nothing tried", p, nil, t0, false},
		{"too late", p, []string{"cs=K1"}, t0.Add(endedKeep), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tab.lookup(tc.p, tc.tried, tc.at) != nil; got != tc.want {
				t.Errorf("lookup = %v, want %v", got, tc.want)
			}
		})
	}
	for i := 0; i < endedMax+10; i++ {
		tab.note(p, map[string]string{"cs": fmt.Sprint("N", i)}, f, t0)
	}
	if n := len(tab.byKey); n != endedMax || len(tab.order) != endedMax {
		t.Errorf("%d entries, %d in order, want %d", n, len(tab.order), endedMax)
	}
	if tab.lookup(p, []string{"cs=N0"}, t0) != nil || tab.lookup(p, []string{fmt.Sprint("cs=N", endedMax+9)}, t0) == nil {
		t.Error("the oldest is not the one forgotten")
	}
}
