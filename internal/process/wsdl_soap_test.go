package process

import (
	"errors"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/process/xmldoc"

	"github.com/orchd/orchd/internal/exchange"
)

// The binding's soap:body parts and soap:header elements say which parts
// of a message travel in the body and which as header blocks; what orchd
// cannot honour is refused at deploy naming the WSDL file, line and
// element.
func TestSOAPPartsBinding(t *testing.T) {
	const (
		reqMsg  = `<wsdl:message name="req"><wsdl:part name="payload" element="tns:req"/></wsdl:message>`
		reqMsg2 = `<wsdl:message name="req"><wsdl:part name="payload" element="tns:req"/><wsdl:part name="session" element="tns:session"/></wsdl:message>`
		// TestBinding's soap:binding, at test.wsdl:34; what replaces it
		// puts the input's binding on line 36.
		soapBinding = `<soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>`
	)
	binding := func(input string) string {
		return soapBinding + "\n    <wsdl:operation name=\"run\">\n      <wsdl:input>" + input + "</wsdl:input>\n" +
			"      <wsdl:output><soap:body use=\"literal\"/></wsdl:output>\n    </wsdl:operation>"
	}
	const header = `<soap:header message="tns:req" part="session" use="literal"/>`
	tests := []struct {
		name    string
		msg     string // the req message
		input   string // the binding's input content
		errs    []string
		notSupp bool
		want    *exchange.SOAPParts // the run operation's InputParts
	}{
		{name: "session in a header", msg: reqMsg2, input: `<soap:body parts="payload" use="literal"/>` + header,
			want: &exchange.SOAPParts{Body: []exchange.PartDesc{{Name: "payload"}}, Headers: []exchange.HeaderPart{{PartDesc: exchange.PartDesc{Name: "session"}}}}},
		{name: "header without parts attribute", msg: reqMsg2, input: `<soap:body use="literal"/>` + header,
			want: &exchange.SOAPParts{Body: []exchange.PartDesc{{Name: "payload"}}, Headers: []exchange.HeaderPart{{PartDesc: exchange.PartDesc{Name: "session"}}}}},
		{name: "optional header", msg: reqMsg2, input: `<soap:body parts="payload" use="literal"/><soap:header message="tns:req" part="session" use="literal" wsdl:required="false"/>`,
			want: &exchange.SOAPParts{Body: []exchange.PartDesc{{Name: "payload"}}, Headers: []exchange.HeaderPart{{PartDesc: exchange.PartDesc{Name: "session"}, Optional: true}}}},
		{name: "parts naming every part: the plain path", msg: reqMsg2, input: `<soap:body parts="payload session" use="literal"/>`},
		{name: "parts restricting the body", msg: reqMsg2, input: `<soap:body parts="session" use="literal"/><soap:header message="tns:req" part="payload"/>`,
			want: &exchange.SOAPParts{Body: []exchange.PartDesc{{Name: "session"}}, Headers: []exchange.HeaderPart{{PartDesc: exchange.PartDesc{Name: "payload"}}}}},
		{name: "header part of another message", msg: reqMsg2, input: `<soap:body parts="payload session"/><soap:header message="tns:note" part="text" use="literal"/>`,
			errs: []string{"test.wsdl:36: <soap:header>: not supported yet", "a header part of message {urn:test}note, not of operation run's input message {urn:test}req"}, notSupp: true},
		{name: "header part the message lacks", msg: reqMsg2, input: `<soap:body parts="payload session"/><soap:header message="tns:req" part="nope"/>`,
			errs: []string{"test.wsdl:36: <soap:header>:", `message {urn:test}req has no part "nope"`}},
		{name: "header without part", msg: reqMsg2, input: `<soap:body/><soap:header message="tns:req"/>`,
			errs: []string{"test.wsdl:36: <soap:header>:", "missing attribute part"}},
		{name: "header bound twice", msg: reqMsg2, input: `<soap:body/>` + header + header,
			errs: []string{"test.wsdl:36: <soap:header>:", `part "session" of message {urn:test}req is bound to a header twice`}},
		{name: "encoded header", msg: reqMsg2, input: `<soap:body parts="payload"/><soap:header message="tns:req" part="session" use="encoded"/>`,
			errs: []string{"test.wsdl:36: <soap:header>: not supported yet", `use="encoded"`}, notSupp: true},
		{name: "body parts naming no part", msg: reqMsg, input: `<soap:body parts="payload bogus" use="literal"/>`,
			errs: []string{"test.wsdl:36: <soap:body>:", `parts names "bogus", which message {urn:test}req of operation run input does not have`}},
		{name: "part carried nowhere", msg: reqMsg2, input: `<soap:body parts="payload" use="literal"/>`,
			errs: []string{"test.wsdl:36: <soap:body>:", `part "session" of message {urn:test}req of operation run input is in neither soap:body parts nor a soap:header`}},
		{name: "part in body and header", msg: reqMsg2, input: `<soap:body parts="payload session"/>` + header,
			errs: []string{"test.wsdl:36: <soap:body>:", `part "session" of message {urn:test}req is in soap:body parts and in a soap:header`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := editedBundle(t, "good-minimal", map[string][]string{
				"test.wsdl": {reqMsg, tc.msg, soapBinding, binding(tc.input)},
			})
			procs, err := loadBundle(dir)
			if len(tc.errs) > 0 {
				if err == nil {
					t.Fatalf("LoadBundle succeeded, want an error with %q", tc.errs)
				}
				for _, want := range tc.errs {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error does not contain %q:\n%v", want, err)
					}
				}
				if got := errors.Is(err, xmldoc.ErrNotSupported); got != tc.notSupp {
					t.Errorf("errors.Is(err, ErrNotSupported) = %v, want %v", got, tc.notSupp)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadBundle: %v", err)
			}
			op := opNamed(procs[0].Endpoints[0], "run")
			if op == nil {
				t.Fatal("no operation run")
			}
			if op.OutputParts != nil {
				t.Errorf("OutputParts = %+v, want nil (every part in the body)", op.OutputParts)
			}
			if got, want := partsString(op.InputParts), partsString(tc.want); got != want {
				t.Errorf("InputParts = %s, want %s", got, want)
			}
		})
	}
}

// partsString renders where a binding carries parts: "body a b; header c d?"
// (? marks an optional header), or "nil".
func partsString(sp *exchange.SOAPParts) string {
	if sp == nil {
		return "nil"
	}
	var b strings.Builder
	b.WriteString("body")
	for _, p := range sp.Body {
		b.WriteString(" " + p.Name)
	}
	b.WriteString("; header")
	for _, h := range sp.Headers {
		b.WriteString(" " + h.Name)
		if h.Optional {
			b.WriteString("?")
		}
	}
	return b.String()
}
