package process

import (
	"fmt"
	"strings"
	"testing"
)

// respTypesAB declares tns:resp as an xsd:int a and an optional string b.
const respTypesAB = `  <wsdl:types><xsd:schema targetNamespace="urn:test" elementFormDefault="qualified">
    <xsd:element name="resp"><xsd:complexType><xsd:sequence>
      <xsd:element name="a" type="xsd:int"/><xsd:element name="b" type="xsd:string" minOccurs="0"/>
    </xsd:sequence></xsd:complexType></xsd:element>
  </xsd:schema></wsdl:types>`

// soapReply is a SOAP 1.1 envelope whose body is body.
func soapReply(body string) string {
	return `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` + body + `</soapenv:Body></soapenv:Envelope>`
}

// Partner answers that are well-formed but break the operation's schema,
// sent by a real HTTP partner, are refused by default, in-memory and
// persistent: the process (which catches nothing) ends with
// bpel:invalidVariables naming the partner, the operation, the element
// or attribute and what it should be. Valid answers written in other
// ways (whitespace around an int, another prefix, a comment inside the
// value) are taken, and a process that opts out takes even the broken
// ones.
func TestPartnerAnswerBreaksSchema(t *testing.T) {
	const r = `<r:resp xmlns:r="urn:test">`
	tests := []struct {
		name, body string
		want       string // "": valid, the answer's a is echoed; else in the fault
	}{
		{"element removed", r + `<r:b>x</r:b></r:resp>`, "part payload: /r:resp/r:b: element is not allowed here; expected r:a"},
		{"int carrying text", r + `<r:a>forty-two</r:a></r:resp>`, "/r:resp/r:a: 'forty-two' is not a valid"},
		{"int carrying a double", r + `<r:a>4.2</r:a></r:resp>`, "/r:resp/r:a: '4.2' is not a valid"},
		{"content wrapped in CDATA", r + `<![CDATA[<r:a>42</r:a>]]></r:resp>`, "/r:resp: text '<r:a>42</r:a>' is not allowed in element-only content"},
		{"added attribute", `<r:resp xmlns:r="urn:test" extra="1"><r:a>42</r:a></r:resp>`, "/r:resp/@extra: attribute is not allowed"},
		{"text between elements", r + `<r:a>42</r:a>junk<r:b>x</r:b></r:resp>`, "/r:resp: text 'junk' is not allowed in element-only content"},
		{"characters that make the int invalid", r + `<r:a>4 2</r:a></r:resp>`, "/r:resp/r:a: '4 2' is not a valid"},
		{"int out of range", r + `<r:a>2147483648</r:a></r:resp>`, "/r:resp/r:a: '2147483648' is not a valid"},
		{"valid: whitespace around the int", r + `<r:a> 42 </r:a></r:resp>`, ""},
		{"valid: default namespace, optional b", `<resp xmlns="urn:test"><a>-7</a><b>x</b></resp>`, ""},
		{"valid: a comment inside the value", r + `<r:a>4<!-- two -->2</r:a></r:resp>`, ""},
	}
	body := `<sequence>` + pfInvoke + pfSet(`concat('ok:', $presp.payload/tns:a)`) + `</sequence>`
	for _, tc := range tests {
		for _, optOut := range []bool{false, true} {
			if optOut && tc.want == "" {
				continue
			}
			for _, persistent := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/optOut=%v/persistent=%v", tc.name, optOut, persistent), func(t *testing.T) {
					srv := partnerServer(t, 200, "", soapReply(tc.body))
					pb := pfBundle{body: body, persistent: persistent, types: respTypesAB}
					if optOut {
						pb.processExt = `<orchd:validateReplies>no</orchd:validateReplies>`
					}
					e := deploySOAP(t, pb.write(t), srv.URL, persistent)
					res := dispatch(t, e, e.Processes()[0], testReq("S-1", "1", ""))
					if tc.want == "" || optOut {
						if res.err != nil || res.out == nil {
							t.Fatalf("a taken answer: %+v", res)
						}
						if got := childText(res.out.Part("payload"), "a"); !strings.HasPrefix(got, "ok:") {
							t.Errorf("answer %q", got)
						}
						return
					}
					if res.fault == nil || res.fault.Name.Local != "invalidVariables" {
						t.Fatalf("got %+v, want bpel:invalidVariables", res)
					}
					if testing.Verbose() {
						t.Log(res.fault.Reason)
					}
					for _, w := range []string{"partner partner (" + srv.URL + ") answered call with a message its schema refuses", tc.want} {
						if !strings.Contains(res.fault.Reason, w) {
							t.Errorf("fault reason %q\ndoes not contain %q", res.fault.Reason, w)
						}
					}
				})
			}
		}
	}
}
