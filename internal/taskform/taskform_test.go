package taskform

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/xsd"
)

// claimDecision loads testdata/claim.xsd's decision element.
func claimDecision(t testing.TB) (*xsd.Set, *xsd.Element, *xsd.Field) {
	t.Helper()
	set := xsd.Load(func(name string) ([]byte, error) { return os.ReadFile(filepath.Join("testdata", name)) }, []string{"claim.xsd"})
	if p := set.Problems(); len(p) > 0 {
		t.Fatal(p)
	}
	d, err := set.Element(xsd.QName{Space: "urn:claims", Local: "decision"})
	if err != nil {
		t.Fatal(err)
	}
	return set, d, set.Outline(d)
}

func TestInputs(t *testing.T) {
	_, _, f := claimDecision(t)
	cur := etree.NewDocument()
	if err := cur.ReadFromString(`<c:decision xmlns:c="urn:claims"><c:verdict>rejected</c:verdict><c:comment>a &lt;b&gt;</c:comment><c:note>one</c:note><c:note>two</c:note></c:decision>`); err != nil {
		t.Fatal(err)
	}
	got := Inputs(f, cur.Root())
	want := []Input{
		{Name: "f.decision.verdict", Label: "Verdict", Type: "select", Options: []string{"approved", "rejected", "needsInfo"}, Required: true, Value: "rejected"},
		{Name: "f.decision.urgent", Label: "Urgent", Type: "checkbox"},
		{Name: "f.decision.approvedAmount", Label: "Approved amount", Type: "number", Step: "any"},
		{Name: "f.decision.days", Label: "Days", Type: "number", Step: "1", Required: true},
		{Name: "f.decision.payOn", Label: "Pay on", Type: "date"},
		{Name: "f.decision.comment", Label: "Comment", Type: "text", Value: "a <b>"},
		{Name: "f.decision.reviewer", Label: "Reviewer", Type: "group"},
		{Name: "f.decision.reviewer.name", Label: "Name", Type: "text", Depth: 1},
		{Name: "f.decision.reviewer.phone", Label: "Phone", Type: "text", Depth: 1},
		{Name: "f.decision.note#1", Label: "Note 1", Type: "text", Value: "one"},
		{Name: "f.decision.note#2", Label: "Note 2", Type: "text", Value: "two"},
		{Name: "f.decision.note#3", Label: "Note 3", Type: "text"},
		{Name: "f.decision.note#4", Label: "Note 4", Type: "text"},
		{Name: "f.decision.note#5", Label: "Note 5", Type: "text"},
		{Name: "f.decision.line#1", Label: "Line 1", Type: "group", Required: true},
		{Name: "f.decision.line#1.item", Label: "Item", Type: "text", Depth: 1, Required: true},
		{Name: "f.decision.line#1.amount", Label: "Amount", Type: "number", Step: "any", Depth: 1},
		{Name: "f.decision.line#2", Label: "Line 2", Type: "group"},
		{Name: "f.decision.line#2.item", Label: "Item", Type: "text", Depth: 1},
		{Name: "f.decision.line#2.amount", Label: "Amount", Type: "number", Step: "any", Depth: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d inputs %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Name != w.Name || g.Label != w.Label || g.Type != w.Type || g.Step != w.Step || g.Required != w.Required || g.Value != w.Value || g.Depth != w.Depth || strings.Join(g.Options, ",") != strings.Join(w.Options, ",") {
			t.Errorf("input %d: got %+v, want %+v", i, g, w)
		}
	}
}

func TestParse(t *testing.T) {
	set, d, f := claimDecision(t)
	tests := []struct {
		name, form string
		want       string // the element written, or
		err        string // the error Parse or Validate gives
	}{
		{"required fields only", "f.decision.verdict=approved&f.decision.days=3&f.decision.line%231.item=desk",
			`<ns0:decision xmlns:ns0="urn:claims"><ns0:verdict>approved</ns0:verdict><ns0:urgent>false</ns0:urgent><ns0:days>3</ns0:days><ns0:line><ns0:item>desk</ns0:item></ns0:line></ns0:decision>`, ""},
		{"every field, markup as text", "f.decision.verdict=rejected&f.decision.urgent=true&f.decision.approvedAmount=12.5&f.decision.days=0&f.decision.payOn=2026-12-24&f.decision.comment=%3Cscript%3Ex%3C%2Fscript%3E&f.decision.reviewer.name=Ann&f.decision.line%231.item=desk",
			`<ns0:decision xmlns:ns0="urn:claims"><ns0:verdict>rejected</ns0:verdict><ns0:urgent>true</ns0:urgent><ns0:approvedAmount>12.5</ns0:approvedAmount><ns0:days>0</ns0:days><ns0:payOn>2026-12-24</ns0:payOn><ns0:comment>&lt;script&gt;x&lt;/script&gt;</ns0:comment><ns0:reviewer><ns0:name>Ann</ns0:name></ns0:reviewer><ns0:line><ns0:item>desk</ns0:item></ns0:line></ns0:decision>`, ""},
		{"repeated elements, in order, gaps left out", "f.decision.verdict=approved&f.decision.days=1&f.decision.note%233=c&f.decision.note%231=a&f.decision.note%232=&f.decision.line%232.item=chair&f.decision.line%232.amount=40&f.decision.line%231.item=desk",
			`<ns0:decision xmlns:ns0="urn:claims"><ns0:verdict>approved</ns0:verdict><ns0:urgent>false</ns0:urgent><ns0:days>1</ns0:days><ns0:note>a</ns0:note><ns0:note>c</ns0:note><ns0:line><ns0:item>desk</ns0:item></ns0:line><ns0:line><ns0:item>chair</ns0:item><ns0:amount>40</ns0:amount></ns0:line></ns0:decision>`, ""},
		{"occurrences beyond maxOccurs are not read", "f.decision.verdict=approved&f.decision.days=1&f.decision.line%231.item=desk&f.decision.line%233.item=extra",
			`<ns0:decision xmlns:ns0="urn:claims"><ns0:verdict>approved</ns0:verdict><ns0:urgent>false</ns0:urgent><ns0:days>1</ns0:days><ns0:line><ns0:item>desk</ns0:item></ns0:line></ns0:decision>`, ""},
		{"a required occurrence missing", "f.decision.verdict=approved&f.decision.days=1&f.decision.line%232.item=chair", "", "Item: required field is empty"},
		{"a required field left empty", "f.decision.verdict=approved&f.decision.days=&f.decision.line%231.item=desk", "", "Days: required field is empty"},
		{"not one of the enumeration", "f.decision.verdict=maybe&f.decision.days=1&f.decision.line%231.item=desk", "", "maybe"},
		{"not an integer", "f.decision.verdict=approved&f.decision.days=two&f.decision.line%231.item=desk", "", "two"},
		{"an optional group's required child missing", "f.decision.verdict=approved&f.decision.days=1&f.decision.reviewer.phone=5&f.decision.line%231.item=desk", "", "name"},
		{"a control character", "f.decision.verdict=approved&f.decision.days=1&f.decision.comment=a%00b&f.decision.line%231.item=desk", "", "characters XML cannot hold"},
		{"unknown fields are ignored", "f.decision.verdict=approved&f.decision.days=1&f.decision.evil=x&xmlns=y&f.decision.line%231.item=desk",
			`<ns0:decision xmlns:ns0="urn:claims"><ns0:verdict>approved</ns0:verdict><ns0:urgent>false</ns0:urgent><ns0:days>1</ns0:days><ns0:line><ns0:item>desk</ns0:item></ns0:line></ns0:decision>`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			form, err := url.ParseQuery(tc.form)
			if err != nil {
				t.Fatal(err)
			}
			el, err := Parse(f, form)
			if err == nil {
				err = set.Validate(d, el)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				if strings.Contains(tc.err, "required") && !errors.Is(err, ErrMissing) {
					t.Errorf("error %v is not ErrMissing", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			doc := etree.NewDocument()
			doc.SetRoot(el)
			got, _ := doc.WriteToString()
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// FuzzParse: whatever a browser sends, Parse never panics and what it
// builds is well-formed XML that reads back to the same element.
func FuzzParse(f *testing.F) {
	_, _, field := claimDecision(f)
	f.Add("f.decision.verdict=approved&f.decision.days=3")
	f.Add("f.decision.comment=%3C%2F&f.decision.reviewer.name=%00&f.decision.days=1&f.decision.verdict=x")
	f.Add("f.decision.urgent=on&f.decision.verdict=&f.decision.days=%26amp%3B")
	f.Add("f.decision.note%23999=x&f.decision.line%231.item=a&f.decision.line%23-1.item=b&f.decision.note%23=c")
	f.Fuzz(func(t *testing.T, q string) {
		form, err := url.ParseQuery(q)
		if err != nil {
			return
		}
		el, err := Parse(field, form)
		if err != nil {
			return
		}
		doc := etree.NewDocument()
		doc.SetRoot(el)
		s, err := doc.WriteToString()
		if err != nil {
			t.Fatal(err)
		}
		back := etree.NewDocument()
		if err := back.ReadFromString(s); err != nil {
			t.Fatalf("Parse built %q, which does not read back: %v", s, err)
		}
		s2, _ := back.WriteToString()
		if s2 != s {
			t.Fatalf("read back %q, want %q", s2, s)
		}
	})
}
