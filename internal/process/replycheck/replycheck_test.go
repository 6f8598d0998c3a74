package replycheck

import (
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/xsd"
)

const schema = `<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:r" elementFormDefault="qualified">
  <xsd:element name="resp"><xsd:complexType><xsd:sequence><xsd:element name="n" type="xsd:int"/></xsd:sequence></xsd:complexType></xsd:element>
</xsd:schema>`

// An answer's parts against their schemas: the first broken part is
// named with the path and what broke; a part without a schema is taken.
func TestCheck(t *testing.T) {
	set := xsd.Load(func(string) ([]byte, error) { return []byte(schema), nil }, []string{"r.xsd"})
	resp, err := set.Element(xsd.QName{Space: "urn:r", Local: "resp"})
	if err != nil {
		t.Fatal(err)
	}
	str, err := set.Type(xsd.QName{Space: xsd.NS, Local: "string"})
	if err != nil {
		t.Fatal(err)
	}
	md := &exchange.MessageDesc{Parts: []exchange.PartDesc{{Name: "payload"}, {Name: "note"}, {Name: "free"}}}
	rs := &plan.ReplySchema{Set: set, Parts: []plan.PartSchema{{Elem: resp}, {Typ: str}, {}}}
	part := func(x string) *etree.Element {
		d := etree.NewDocument()
		if err := d.ReadFromString(x); err != nil {
			t.Fatal(err)
		}
		return d.Root()
	}
	tests := []struct {
		name    string
		payload string
		note    bool
		want    string // "": valid
	}{
		{"valid", `<r:resp xmlns:r="urn:r"><r:n> 7 </r:n></r:resp>`, true, ""},
		{"a leaf of the wrong type", `<r:resp xmlns:r="urn:r"><r:n>7.5</r:n></r:resp>`, true, "part payload: /r:resp/r:n: '7.5' is not a valid xsd:int"},
		{"an element removed", `<r:resp xmlns:r="urn:r"/>`, true, "part payload: /r:resp: missing element"},
		{"another element", `<r:other xmlns:r="urn:r"/>`, true, "part payload: /r:other: element is {urn:r}other, want {urn:r}resp"},
		{"a part missing", `<r:resp xmlns:r="urn:r"><r:n>1</r:n></r:resp>`, false, "part note: missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := exchange.NewMessage(exchange.QName{})
			m.Parts["payload"] = part(tc.payload)
			if tc.note {
				m.Parts["note"] = part(`<note>text</note>`)
			}
			m.Parts["free"] = part(`<anything><at all="1"/></anything>`)
			err := Check(rs, md, m)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused a valid answer: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}
