package wsdl

import (
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

const wsaDefs = `<definitions xmlns="http://schemas.xmlsoap.org/wsdl/" xmlns:wsaw="http://www.w3.org/2006/05/addressing/wsdl"
    xmlns:wsam="http://www.w3.org/2007/05/addressing/metadata" xmlns:wsp="http://www.w3.org/ns/ws-policy"
    xmlns:wsu="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd">
  <wsp:Policy wsu:Id="AddrPolicy"><wsp:ExactlyOne><wsp:All><wsam:Addressing><wsp:Policy/></wsam:Addressing></wsp:All></wsp:ExactlyOne></wsp:Policy>
  <wsp:Policy wsu:Id="Other"><wsp:ExactlyOne/></wsp:Policy>
  BINDING
</definitions>`

func wsaElement(t *testing.T, binding string) *etree.Element {
	t.Helper()
	doc := etree.NewDocument()
	if err := doc.ReadFromString(replaceOnce(wsaDefs, "BINDING", binding)); err != nil {
		t.Fatal(err)
	}
	return doc.Root().SelectElement("binding")
}

func replaceOnce(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	return s
}

// TestUsesAddressing: a binding uses WS-Addressing by wsaw:UsingAddressing,
// an inline wsam:Addressing policy, or a wsp:PolicyReference to one;
// a binding without, or one whose reference names another policy, or
// an operation-level marker, does not.
func TestUsesAddressing(t *testing.T) {
	for _, tc := range []struct {
		name, binding string
		want          bool
	}{
		{"UsingAddressing", `<binding name="B"><wsaw:UsingAddressing/></binding>`, true},
		{"inline policy", `<binding name="B"><wsp:Policy><wsp:ExactlyOne><wsp:All><wsam:Addressing/></wsp:All></wsp:ExactlyOne></wsp:Policy></binding>`, true},
		{"policy reference", `<binding name="B"><wsp:PolicyReference URI="#AddrPolicy"/></binding>`, true},
		{"reference to another policy", `<binding name="B"><wsp:PolicyReference URI="#Other"/></binding>`, false},
		{"none", `<binding name="B"><operation name="op"/></binding>`, false},
		{"on an operation only", `<binding name="B"><operation name="op"><wsaw:UsingAddressing/></operation></binding>`, false},
	} {
		if got := usesAddressing(wsaElement(t, tc.binding)); got != tc.want {
			t.Errorf("%s: usesAddressing = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestWSAActions: explicit wsam:Action and wsaw:Action win; otherwise
// the default pattern of WS-Addressing 1.0 Metadata 4.4.4, with the
// message names when given and ':' for a urn: namespace.
func TestWSAActions(t *testing.T) {
	for _, tc := range []struct {
		name, tns, op   string
		explicit        bool
		wantIn, wantOut string
		wantFault       string
	}{
		{"default, http namespace", "http://ex.com/po/", `<operation name="order" xmlns="http://schemas.xmlsoap.org/wsdl/"><input/><output/><fault name="bad"/></operation>`, false,
			"http://ex.com/po/PT/orderRequest", "http://ex.com/po/PT/orderResponse", "http://ex.com/po/PT/order/Fault/bad"},
		{"default, urn namespace, named messages", "urn:po", `<operation name="order" xmlns="http://schemas.xmlsoap.org/wsdl/"><input name="In"/><output name="Out"/></operation>`, false,
			"urn:po:PT:In", "urn:po:PT:Out", ""},
		{"one-way", "urn:po", `<operation name="notify" xmlns="http://schemas.xmlsoap.org/wsdl/"><input/></operation>`, false,
			"urn:po:PT:notify", "", ""},
		{"explicit", "urn:po", `<operation name="order" xmlns="http://schemas.xmlsoap.org/wsdl/" xmlns:wsam="http://www.w3.org/2007/05/addressing/metadata" xmlns:wsaw="http://www.w3.org/2006/05/addressing/wsdl"><input wsam:Action="urn:in"/><output wsaw:Action="urn:out"/><fault name="bad" wsam:Action="urn:bad"/></operation>`, true,
			"urn:in", "urn:out", "urn:bad"},
	} {
		doc := etree.NewDocument()
		if err := doc.ReadFromString(tc.op); err != nil {
			t.Fatal(err)
		}
		op := &exchange.Operation{Name: doc.Root().SelectAttrValue("name", "")}
		explicit := wsaActions(op, doc.Root(), tc.tns, "PT")
		if explicit != tc.explicit || op.InputAction != tc.wantIn || op.OutputAction != tc.wantOut || op.FaultActions["bad"] != tc.wantFault {
			t.Errorf("%s: explicit %v, actions %q %q %q; want %v, %q %q %q", tc.name, explicit, op.InputAction, op.OutputAction, op.FaultActions["bad"],
				tc.explicit, tc.wantIn, tc.wantOut, tc.wantFault)
		}
	}
}
