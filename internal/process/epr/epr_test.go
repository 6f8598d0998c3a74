package epr

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/beevik/etree"
)

// Endpoint references: what an assigned EPR's address is, and its
// reference parameters through the checkpoint form.

const (
	eprWSA  = `xmlns:wsa="http://www.w3.org/2005/08/addressing"`
	eprSref = `xmlns:sref="http://docs.oasis-open.org/wsbpel/2.0/serviceref"`
)

func TestParseEPR(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // address, or "" when an error is wanted
		errs     []string
	}{
		{name: "plain URL", in: "http://h:1/p", want: "http://h:1/p"},
		{name: "plain URL with spaces around", in: "\n  https://h/p?q=1 \t", want: "https://h/p?q=1"},
		{name: "wsa EPR", in: `<wsa:EndpointReference ` + eprWSA + `><wsa:Address> http://h/a </wsa:Address></wsa:EndpointReference>`, want: "http://h/a"},
		{name: "wsa EPR with reference parameters and metadata", in: `<wsa:EndpointReference ` + eprWSA + `><wsa:ReferenceParameters><x>1</x></wsa:ReferenceParameters><wsa:Address>http://h/a</wsa:Address><wsa:Metadata/></wsa:EndpointReference>`, want: "http://h/a"},
		{name: "2004/08 submission EPR", in: `<a:EndpointReference xmlns:a="http://schemas.xmlsoap.org/ws/2004/08/addressing"><a:Address>http://h/old</a:Address></a:EndpointReference>`, want: "http://h/old"},
		{name: "service-ref around wsa EPR", in: `<sref:service-ref ` + eprSref + `><wsa:EndpointReference ` + eprWSA + `><wsa:Address>http://h/s</wsa:Address></wsa:EndpointReference></sref:service-ref>`, want: "http://h/s"},
		{name: "service-ref holding a URL", in: `<sref:service-ref ` + eprSref + `>http://h/u</sref:service-ref>`, want: "http://h/u"},
		{name: "message part around service-ref around EPR", in: `<tns:epr xmlns:tns="urn:t"><sref:service-ref ` + eprSref + `><wsa:EndpointReference ` + eprWSA + `><wsa:Address>http://h/deep</wsa:Address></wsa:EndpointReference></sref:service-ref></tns:epr>`, want: "http://h/deep"},
		{name: "default-namespace EPR", in: `<EndpointReference xmlns="http://www.w3.org/2005/08/addressing"><Address>http://h/d</Address></EndpointReference>`, want: "http://h/d"},
		{name: "wsdl service, SOAP 1.1", in: `<wsdl:service xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/" name="S"><wsdl:documentation/><wsdl:port name="P" binding="x"><soap:address location="http://h/w"/></wsdl:port></wsdl:service>`, want: "http://h/w"},
		{name: "wsdl service, SOAP 1.2 second port", in: `<wsdl:service xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:s12="http://schemas.xmlsoap.org/wsdl/soap12/" name="S"><wsdl:port name="A"/><wsdl:port name="B"><s12:address location="http://h/w12"/></wsdl:port></wsdl:service>`, want: "http://h/w12"},

		{name: "empty text", in: "  ", errs: []string{"empty address"}},
		{name: "relative URL", in: "/processes/x", errs: []string{`"/processes/x" is not an absolute http or https URL`}},
		{name: "other scheme", in: "mailto:a@b", errs: []string{"not an absolute http or https URL"}},
		{name: "bad URL", in: "http://h/%zz", errs: []string{`address "http://h/%zz"`, "invalid URL escape"}},
		{name: "EPR without Address", in: `<wsa:EndpointReference ` + eprWSA + `><wsa:Metadata/></wsa:EndpointReference>`, errs: []string{"has no wsa:Address"}},
		{name: "Address in another namespace", in: `<wsa:EndpointReference ` + eprWSA + `><Address>http://h/a</Address></wsa:EndpointReference>`, errs: []string{"has no wsa:Address"}},
		{name: "unknown wrappers are looked through", in: `<x:EndpointReference xmlns:x="urn:x"><x:Address>http://h/a</x:Address></x:EndpointReference>`, want: "http://h/a"},
		{name: "wsdl service without soap:address", in: `<wsdl:service xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" name="S"><wsdl:port name="P"/></wsdl:service>`, errs: []string{`wsdl:service "S" has no port with a soap:address`}},
		{name: "two elements", in: `<r><a>http://h/1</a><b>http://h/2</b></r>`, errs: []string{"<r> holds 2 elements"}},
		{name: "too deep", in: strings.Repeat("<a>", 12) + "http://h/" + strings.Repeat("</a>", 12), errs: []string{"more than 8 elements deep"}},
		{name: "malformed XML", in: "<a><b></a>", errs: []string{"not an endpoint reference"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseEPR(tc.in)
			if tc.want != "" {
				if err != nil || got != tc.want {
					t.Fatalf("parseEPR = %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("parseEPR = %q, want an error", got)
			}
			if !errors.Is(err, ErrNotEPR) {
				t.Errorf("error %v does not wrap ErrNotEPR", err)
			}
			for _, w := range tc.errs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// FuzzParseEPR: parseEPR never panics, and what it accepts is an absolute
// http(s) URL without surrounding space.
func FuzzParseEPR(f *testing.F) {
	for _, s := range []string{
		"http://h/p",
		`<wsa:EndpointReference ` + eprWSA + `><wsa:Address>http://h/a</wsa:Address></wsa:EndpointReference>`,
		`<sref:service-ref ` + eprSref + `>http://h/u</sref:service-ref>`,
		`<wsdl:service xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"><wsdl:port><soap:address location="http://h/w"/></wsdl:port></wsdl:service>`,
		"<a><b>https://x</b></a>", "<", "", "mailto:x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		addr, err := parseEPR(s)
		if err != nil {
			if !errors.Is(err, ErrNotEPR) {
				t.Fatalf("error %v does not wrap ErrNotEPR", err)
			}
			return
		}
		u, perr := url.Parse(addr)
		if perr != nil || u.Host == "" || strings.TrimSpace(addr) != addr {
			t.Fatalf("accepted %q (from %q): %v", addr, s, perr)
		}
	})
}

// parseEPR reads an endpoint reference from its XML text, or takes text
// that is not XML as a plain URL (the fuzz target's entry).
func parseEPR(data string) (string, error) {
	if !strings.HasPrefix(strings.TrimSpace(data), "<") {
		return CheckAddress(data)
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromString(data); err != nil {
		return "", fmt.Errorf("%w: %w", ErrNotEPR, err)
	}
	if doc.Root() == nil {
		return "", fmt.Errorf("%w: no element", ErrNotEPR)
	}
	return address(doc.Root())
}

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
			addr, params, err := Parse(doc.Root())
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
			stored := Encode(addr, params)
			if len(params) == 0 && stored != addr {
				t.Errorf("checkpoint form %q of an EPR without parameters, want the address alone", stored)
			}
			back, got, err := Decode(stored)
			if err != nil || back != addr {
				t.Fatalf("readParams = %q, %v; want %q", back, err, addr)
			}
			check("read back", got)
			sr := WithParams(ServiceRef(addr), got)
			d := etree.NewDocument()
			d.SetRoot(sr)
			s, _ := d.WriteToString()
			if strings.Contains(s, "ReferenceParameters") != (len(tc.want) > 0) {
				t.Errorf("service-ref %s: reference parameters %v, want %v", s, !(len(tc.want) > 0), len(tc.want) > 0)
			}
		})
	}
	if _, _, err := Decode("http://h/a" + paramsSep + "<p><unclosed></p>"); err == nil {
		t.Error("damaged stored reference parameters read without an error")
	}
}

// address returns the address the endpoint reference el holds. el is a
// sref:service-ref, a wsa:EndpointReference, a wsdl:service, or an element
// wrapping exactly one of those or holding the address as text (ODE took a
// copied element's content as the service-ref's).
func address(el *etree.Element) (string, error) {
	addr, _, err := Parse(el)
	return addr, err
}
