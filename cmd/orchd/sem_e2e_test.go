package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The WS-BPEL 2.0 run-time rules of issue 23 section 2, each in both
// modes: a process must not change meaning when it becomes persistent.

// modes are the two ways a process can run.
var modes = []struct {
	name     string
	inMemory bool
}{{"in-memory", true}, {"persistent", false}}

// semWSDL is the e2e WSDL with what some rules need besides: an
// operation whose output part is named outputPart, and property aliases
// for element variables of tns:req.
var semWSDL = strings.NewReplacer(
	`<wsdl:message name="problem">`,
	`<wsdl:message name="single"><wsdl:part name="outputPart" element="tns:resp"/></wsdl:message>
  <wsdl:message name="strIn"><wsdl:part name="inputPart" type="xsd:string"/></wsdl:message>
  <wsdl:message name="strOut"><wsdl:part name="outputPart" type="xsd:string"/></wsdl:message>
  <wsdl:message name="problem">`,
	`<wsdl:operation name="go"><wsdl:input message="tns:req"/></wsdl:operation>
  </wsdl:portType>`,
	`<wsdl:operation name="go"><wsdl:input message="tns:req"/></wsdl:operation>
    <wsdl:operation name="single"><wsdl:input message="tns:req"/><wsdl:output message="tns:single"/></wsdl:operation>
    <wsdl:operation name="echo"><wsdl:input message="tns:strIn"/><wsdl:output message="tns:strOut"/></wsdl:operation>
  </wsdl:portType>`,
	`<wsdl:operation name="go"><soap:operation soapAction="urn:e2e#go"/><wsdl:input><soap:body use="literal"/></wsdl:input></wsdl:operation>
  </wsdl:binding>`,
	`<wsdl:operation name="go"><soap:operation soapAction="urn:e2e#go"/><wsdl:input><soap:body use="literal"/></wsdl:input></wsdl:operation>
    <wsdl:operation name="single"><soap:operation soapAction="urn:e2e#single"/><wsdl:input><soap:body use="literal"/></wsdl:input><wsdl:output><soap:body use="literal"/></wsdl:output></wsdl:operation>
    <wsdl:operation name="echo"><soap:operation soapAction="urn:e2e#echo" style="rpc"/><wsdl:input><soap:body use="literal" namespace="urn:e2e"/></wsdl:input><wsdl:output><soap:body use="literal" namespace="urn:e2e"/></wsdl:output></wsdl:operation>
  </wsdl:binding>`,
	`<vprop:property name="n" type="xsd:string"/>`,
	`<vprop:property name="n" type="xsd:string"/>
  <vprop:propertyAlias propertyName="tns:n" element="tns:req"><vprop:query>tns:n</vprop:query></vprop:propertyAlias>`,
).Replace(bpelWSDL)

// writeSemProcess is writeProcess with semWSDL and extra variables.
func writeSemProcess(t *testing.T, deployDir, name, partner, body string, inMemory bool) {
	t.Helper()
	writeProcess(t, deployDir, name, partner, body, inMemory)
	dir := filepath.Join(deployDir, name)
	wsdl := strings.ReplaceAll(strings.ReplaceAll(semWSDL, "PARTNER", partner), "NAME", name)
	if err := os.WriteFile(filepath.Join(dir, "e2e.wsdl"), []byte(wsdl), 0o644); err != nil {
		t.Fatal(err)
	}
	bp := filepath.Join(dir, name+".bpel")
	b, err := os.ReadFile(bp)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), `<variable name="p2" messageType="tns:resp"/>`, `<variable name="p2" messageType="tns:resp"/>
    <variable name="r" element="tns:resp"/>
    <variable name="q" element="tns:req"/>
    <variable name="ev" messageType="tns:req"/>
    <variable name="str" type="xsd:string"/>`, 1)
	if err := os.WriteFile(bp, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startMode starts orchd serving deploy, with a data directory when the
// processes are persistent.
func startMode(t *testing.T, deploy string, inMemory bool) *orchd {
	t.Helper()
	if inMemory {
		return startOrchd(t, "--deploy", deploy)
	}
	return startOrchd(t, "--deploy", deploy, "--data", t.TempDir())
}

// postOp posts one request to operation op of process name.
func postOp(t *testing.T, base, name, op, id, n string) response {
	t.Helper()
	client := &http.Client{Timeout: 60 * time.Second}
	return post(t, client, base+"/processes/"+name, textXML, `"urn:e2e#`+op+`"`, e2eRequest(id, n))
}

// A receive on an operation of the partner link's portType that the
// deploy-time binding does not list is served, by portType (as ODE did):
// the process is written against the portType.
func TestSemReceiveOperationNotInBinding(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			deploy := t.TempDir()
			writeSemProcess(t, deploy, "Unbound", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="echo" createInstance="yes"><fromParts><fromPart part="inputPart" toVariable="str"/></fromParts></receive>
    <assign><copy><from>concat($str, ' by portType')</from><to variable="str"/></copy></assign>
    <reply partnerLink="client" operation="echo"><toParts><toPart part="outputPart" fromVariable="str"/></toParts></reply>
  </sequence>`, m.inMemory)
			wp := filepath.Join(deploy, "Unbound", "e2e.wsdl")
			b, err := os.ReadFile(wp)
			if err != nil {
				t.Fatal(err)
			}
			i := strings.Index(string(b), `<wsdl:operation name="echo"><soap:operation`)
			j := strings.Index(string(b)[i:], "</wsdl:operation>")
			if i < 0 || j < 0 {
				t.Fatal("no echo binding operation to remove")
			}
			b = append(b[:i:i], b[i+j+len("</wsdl:operation>"):]...)
			if err := os.WriteFile(wp, b, 0o644); err != nil {
				t.Fatal(err)
			}
			o := startMode(t, deploy, m.inMemory)
			client := &http.Client{Timeout: 60 * time.Second}
			r := post(t, client, o.base+"/processes/Unbound", textXML, `""`, []byte(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><e:echo xmlns:e="urn:e2e"><inputPart>served</inputPart></e:echo></soapenv:Body></soapenv:Envelope>`))
			if r.status != 200 || !strings.Contains(r.body, "served by portType") {
				t.Fatalf("status %d body %s\n%s", r.status, r.body, o.log())
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
