package expr

import (
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/xpath2"
)

// TestEvalXPath1: "orchd xpath --version 1.0" evaluates over a context
// document and variables as a process does: the context is the
// document node (the document element's parent), a document variable is
// its document element, numbers print as XPath 1.0 writes them.
func TestEvalXPath1(t *testing.T) {
	ctx := etree.NewDocument()
	if err := ctx.ReadFromString(`<po:order xmlns:po="urn:po"><po:item qty="2">a</po:item><po:item qty="x">b</po:item></po:order>`); err != nil {
		t.Fatal(err)
	}
	d := etree.NewDocument()
	d.SetRoot(ctx.Root().Copy())
	ns := map[string]string{"po": "urn:po"}
	vars := map[string]xpath2.Input{"d": {Doc: d}, "s": {Text: " 5 "}}
	tests := []struct {
		src  string
		ctx  *etree.Document
		want string // FormatItem of each item, joined by |
	}{
		{"count(/po:order/..)", ctx, "xs:double\t1"},
		{"count(/po:order/../..)", ctx, "xs:double\t0"},
		{"/po:order/.. = /", ctx, "xs:boolean\ttrue"},
		{"name(/*)", ctx, "xs:string\tpo:order"},
		{"sum(//@qty)", ctx, "xs:double\tNaN"},
		{"string(//po:item[@qty = 2])", ctx, "xs:string\ta"},
		{"count($d/po:item)", nil, "xs:double\t2"},
		{"$s * 2", nil, "xs:double\t10"},
		{"number('1e3')", nil, "xs:double\tNaN"},
		{"string('' = false())", nil, "xs:string\ttrue"},
		{"100000000000000000000 * 10", nil, "xs:double\t1000000000000000000000"},
		{"count(/)", nil, "xs:double\t1"},
		{"count(/*)", nil, "xs:double\t0"},
	}
	for _, tt := range tests {
		seq, err := EvalXPath1(tt.src, ns, tt.ctx, vars)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		got := ""
		for i, it := range seq {
			if i > 0 {
				got += "|"
			}
			got += xpath2.FormatItem(it)
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.src, got, tt.want)
		}
	}
	for src, code := range map[string]string{"nosuch(1)": "XPST0017", "q:f()": "XPST0081", "$nope": "XPST0008", "1e3": "XPST0003", "count(1)": "XPST0003"} {
		_, err := EvalXPath1(src, ns, nil, vars)
		if e, ok := err.(*xpath2.Error); !ok || e.Code != code {
			t.Errorf("%s: error %v, want %s", src, err, code)
		}
	}
}
