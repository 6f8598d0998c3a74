package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// An invoke whose input is an element variable standing for a message of
// one element part (SA00048) reads that variable: never assigned, it
// raises bpel:uninitializedVariable (WS-BPEL 2.0 8.4.1, 10.3) at the
// invoke, which a handler catches, and the partner gets no call without
// its part. A one-way invoke, which a persistent process sends through
// its outbox, builds its message the same way: assigned, the partner
// gets the element; unassigned, the fault.
func TestSemInvokeUninitializedElementVariable(t *testing.T) {
	const catchUninit = `
      <faultHandlers>
        <catch faultName="bpel:uninitializedVariable" ` + bpelNS + `>
          <sequence>
            <assign><copy><from><literal><tns:resp><tns:a>uninitialized caught</tns:a></tns:resp></literal></from><to variable="r"/></copy></assign>
            <reply partnerLink="client" operation="run" variable="r"/>
          </sequence>
        </catch>
      </faultHandlers>`
	sent := `<assign><copy><from><literal><tns:resp><tns:a>sent</tns:a></tns:resp></literal></from><to variable="r"/></copy></assign>
      <reply partnerLink="client" operation="run" variable="r"/>`
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			partner := startRecorder(t)
			deploy := t.TempDir()
			bodies := map[string]string{
				"CallUninit": `<receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    <scope>` + catchUninit + `
      <sequence><invoke partnerLink="partner" operation="call" inputVariable="q" outputVariable="p1"/>` + sent + `</sequence>
    </scope>`,
				"AskUninit": `<receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    <scope>` + catchUninit + `
      <sequence><invoke partnerLink="partner" operation="ask" inputVariable="q"/>` + sent + `</sequence>
    </scope>`,
				"AskElem": `<receive partnerLink="client" operation="run" variable="q" createInstance="yes"/>
    <invoke partnerLink="partner" operation="ask" inputVariable="q"/>
    ` + sent,
			}
			for name, body := range bodies {
				writeSemProcess(t, deploy, name, partner.addr, "<sequence>\n    "+body+"\n  </sequence>", m.inMemory)
				addAskOperation(t, filepath.Join(deploy, name))
			}
			o := startMode(t, deploy, m.inMemory)
			for _, name := range []string{"CallUninit", "AskUninit"} {
				r := callRun(t, o.base, name, "U-"+name, "1")
				if r.status != 200 || !strings.Contains(r.body, "uninitialized caught") {
					t.Errorf("%s: status %d body %s, want the handler's reply\n%s", name, r.status, r.body, o.log())
				}
			}
			if n := partner.count(); n != 0 {
				_, raw := partner.last()
				t.Fatalf("the partner got %d calls from unassigned variables, the last:\n%s", n, raw)
			}
			r := callRun(t, o.base, "AskElem", "E-1", "7")
			if r.status != 200 || !strings.Contains(r.body, ">sent<") {
				t.Fatalf("AskElem: status %d body %s\n%s", r.status, r.body, o.log())
			}
			if !eventually(func() bool { return partner.count() == 1 }) {
				t.Fatalf("the one-way call did not reach the partner\n%s", o.log())
			}
			if _, raw := partner.last(); !strings.Contains(raw, "E-1</") || !strings.Contains(raw, "7</") {
				t.Errorf("the one-way call lacks the element variable's content:\n%s", raw)
			}
		})
	}
}

// addAskOperation gives the partner port type of the e2e bundle dir a
// one-way operation ask (SOAPAction urn:e2e#ask) taking a tns:req.
func addAskOperation(t *testing.T, dir string) {
	t.Helper()
	editBundle(t, dir, "e2e.wsdl", `<wsdl:portType name="PartnerPT">`,
		`<wsdl:portType name="PartnerPT"><wsdl:operation name="ask"><wsdl:input message="tns:req"/></wsdl:operation>`)
	editBundle(t, dir, "e2e.wsdl", `<wsdl:binding name="PartnerBinding" type="tns:PartnerPT">`,
		`<wsdl:binding name="PartnerBinding" type="tns:PartnerPT"><wsdl:operation name="ask"><soap:operation soapAction="urn:e2e#ask"/><wsdl:input><soap:body use="literal"/></wsdl:input></wsdl:operation>`)
}
