package corrval

import (
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

func TestValues(t *testing.T) {
	m := exchange.NewMessage(exchange.QName{Local: "m"})
	id := etree.NewElement("id")
	id.SetText("  a-1 ")
	m.Parts["id"] = id
	n := etree.NewElement("n")
	n.SetText("7")
	m.Parts["n"] = n
	tests := []struct {
		name string
		ex   []*plan.PropExtract
		want string
		err  bool
	}{
		{"one part, trimmed", []*plan.PropExtract{{Part: "id"}}, "a-1", false},
		{"two parts joined by 0x1f", []*plan.PropExtract{{Part: "id"}, {Part: "n"}}, "a-1\x1f7", false},
		{"a missing part", []*plan.PropExtract{{Part: "nope"}}, "", true},
		{"an alias ODE did not check", []*plan.PropExtract{{Part: "id", Missing: "no alias"}}, "", true},
	}
	for _, tc := range tests {
		got, err := Values(m, tc.ex)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%s: %q, %v; want %q (error %v)", tc.name, got, err, tc.want, tc.err)
		}
	}
}

func TestListedAndVarNames(t *testing.T) {
	if got := Listed(map[string]string{"cs": "a\x1fb"}); got["cs"] != "a,b" {
		t.Errorf("Listed: %q", got["cs"])
	}
	if Listed(nil) != nil {
		t.Errorf("Listed(nil) is not nil")
	}
	p := &plan.Plan{Vars: []*expr.Var{{Name: "x", Slot: 1, Pos: xmldoc.Pos{File: "a.bpel", Line: 3}}, {Name: "y", Slot: 2}, {Name: "x", Slot: 3, Pos: xmldoc.Pos{File: "a.bpel", Line: 9}}}}
	got := VarNames(p)
	if got[2] != "y" || got[1] != "x@a.bpel:3" || got[3] != "x@a.bpel:9" {
		t.Errorf("VarNames: %v (a name declared twice is qualified by where)", got)
	}
}
