package interp

import (
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/xmldoc"

	"github.com/orchd/orchd/internal/process/plan"
)

// TestInitiate covers WS-BPEL's initiate="yes|join|no" on a message whose
// property is the whole part.
func TestInitiate(t *testing.T) {
	msg := func(v string) *exchange.Message {
		m := exchange.NewMessage(exchange.QName{Local: "m"})
		p := etree.NewElement("key")
		p.SetText(v)
		m.Parts["key"] = p
		return m
	}
	set := &plan.CorrSet{Name: "s", Props: []exchange.QName{{Local: "k"}}}
	use := func(initiate string) []*plan.CorrUse {
		return []*plan.CorrUse{{Set: set, Initiate: initiate, In: []*plan.PropExtract{{Prop: exchange.QName{Local: "k"}, Part: "key"}}}}
	}
	tests := []struct {
		name     string
		have     string // "" = not initiated
		initiate string
		value    string
		wantErr  string
		want     string
	}{
		{name: "yes initiates", initiate: "yes", value: "A", want: "A"},
		{name: "yes twice is a violation", have: "A", initiate: "yes", value: "A", wantErr: "already initiated"},
		{name: "join initiates", initiate: "join", value: "B", want: "B"},
		{name: "join matches", have: "B", initiate: "join", value: "B", want: "B"},
		{name: "join mismatch", have: "B", initiate: "join", value: "C", wantErr: "does not match"},
		{name: "no needs an initiated set", initiate: "no", value: "A", wantErr: "not initiated"},
		{name: "no matches", have: "A", initiate: "no", value: "A", want: "A"},
		{name: "no mismatch", have: "A", initiate: "no", value: "Z", wantErr: "does not match"},
	}
	for _, tc := range tests {
		in := &Instance{proc: NewVersion(&plan.Plan{})}
		if tc.have != "" {
			in.corr = map[string]string{"s": tc.have}
		}
		err := in.ApplyCorrelations(use(tc.initiate), msg(tc.value), false, xmldoc.Pos{File: "t.bpel", Line: 3})
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "correlationViolation") {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case in.corr["s"] != tc.want:
			t.Errorf("%s: set = %q, want %q", tc.name, in.corr["s"], tc.want)
		}
	}
}
