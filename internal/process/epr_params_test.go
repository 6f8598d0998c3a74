package process

import (
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/interp"
)

// TestEPRReferenceParams: the reference parameters of an assigned
// wsa:EndpointReference (both namespaces, wrapped in a service-ref) are
// taken as self-contained copies, survive the checkpoint form, and go
// back into the service-ref a <from partnerLink endpointReference=
// "partnerRole"/> yields; an EPR without any has none, and an address
// alone reads back as it was written before reference parameters were
// kept.
func TestEPRReferenceParams(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // the parameters: {namespace}local=text
	}{
		{"2005/08 in a service-ref", `<sref:service-ref ` + eprSref + ` xmlns:s="urn:s"><wsa:EndpointReference ` + eprWSA + `><wsa:Address>http://h/a</wsa:Address>` +
			`<wsa:ReferenceParameters><s:session>S-1</s:session><s:shard n="2"/></wsa:ReferenceParameters></wsa:EndpointReference></sref:service-ref>`,
			[]string{"{urn:s}session=S-1", "{urn:s}shard="}},
		{"2004/08 reference properties", `<a:EndpointReference xmlns:a="http://schemas.xmlsoap.org/ws/2004/08/addressing"><a:Address>http://h/old</a:Address>` +
			`<a:ReferenceProperties><p xmlns="urn:p">1</p></a:ReferenceProperties></a:EndpointReference>`,
			[]string{"{urn:p}p=1"}},
		{"none", `<wsa:EndpointReference ` + eprWSA + `><wsa:Address>http://h/a</wsa:Address></wsa:EndpointReference>`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := etree.NewDocument()
			if err := doc.ReadFromString(tc.in); err != nil {
				t.Fatal(err)
			}
			addr, params, err := interp.EprOf(doc.Root())
			if err != nil {
				t.Fatal(err)
			}
			check := func(what string, got []*etree.Element) {
				t.Helper()
				if len(got) != len(tc.want) {
					t.Fatalf("%s: %d parameters, want %d", what, len(got), len(tc.want))
				}
				for i, p := range got {
					// Detached, its namespace still resolves: self-contained.
					if s := "{" + p.NamespaceURI() + "}" + p.Tag + "=" + p.Text(); p.Parent() != nil || s != tc.want[i] {
						t.Errorf("%s: parameter %d = %s (parent %v), want %s", what, i, s, p.Parent(), tc.want[i])
					}
				}
			}
			check("taken", params)
			stored := interp.AppendParams(&interp.AssignedEPR{Addr: addr, Params: params})
			if len(params) == 0 && stored != addr {
				t.Errorf("checkpoint form %q of an EPR without parameters, want the address alone", stored)
			}
			back, got, err := interp.ReadParams(stored)
			if err != nil || back != addr {
				t.Fatalf("readParams = %q, %v; want %q", back, err, addr)
			}
			check("read back", got)
			sr := interp.WithRefParams(interp.ServiceRefElement(addr), got)
			d := etree.NewDocument()
			d.SetRoot(sr)
			s, _ := d.WriteToString()
			if strings.Contains(s, "ReferenceParameters") != (len(tc.want) > 0) {
				t.Errorf("service-ref %s: reference parameters %v, want %v", s, !(len(tc.want) > 0), len(tc.want) > 0)
			}
		})
	}
	if _, _, err := interp.ReadParams("http://h/a" + interp.ParamsSep + "<p><unclosed></p>"); err == nil {
		t.Error("damaged stored reference parameters read without an error")
	}
}
