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

const bpelNS = `xmlns:bpel="http://docs.oasis-open.org/wsbpel/2.0/process/executable"`

// Two receives for the same partner link, operation and correlation set
// enabled at once (10.4): bpel:conflictingReceive is raised as the second
// becomes enabled, before any message is taken; the instance ends with
// it, and a request that arrives for it afterwards is answered with the
// fault's name, not "no instance".
func TestSemConflictingReceiveUncaught(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			deploy := t.TempDir()
			writeProcess(t, deploy, "Conflict2", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="go" variable="in" createInstance="yes">
      <correlations><correlation set="cs" initiate="yes"/></correlations>
    </receive>
    `+initOut+`
    <flow>
      <sequence>
        <receive partnerLink="client" operation="run" variable="more"><correlations><correlation set="cs"/></correlations></receive>
        <reply partnerLink="client" operation="run" variable="out"/>
      </sequence>
      <sequence>
        <receive partnerLink="client" operation="run" variable="more"><correlations><correlation set="cs"/></correlations></receive>
        <reply partnerLink="client" operation="run" variable="out"/>
      </sequence>
    </flow>
  </sequence>`, m.inMemory)
			o := startMode(t, deploy, m.inMemory)
			if g := postOp(t, o.base, "Conflict2", "go", "K1", "1"); g.status != 202 {
				t.Fatalf("go: status %d body %s", g.status, g.body)
			}
			r := callRun(t, o.base, "Conflict2", "K1", "1")
			if r.status != 500 || !strings.Contains(r.body, "conflictingReceive") {
				t.Fatalf("run for the faulted instance: status %d body %s, want the conflictingReceive fault\n%s", r.status, r.body, o.log())
			}
		})
	}
}

// ambiguousReceive (10.4) in both modes: a message matching two receives
// waiting with different correlation sets is answered with the fault.
func TestSemAmbiguousReceive(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			deploy := t.TempDir()
			writeProcess(t, deploy, "Ambiguous2", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="go" variable="in" createInstance="yes">
      <correlations><correlation set="cs" initiate="yes"/><correlation set="cn" initiate="yes"/></correlations>
    </receive>
    `+initOut+`
    <flow>
      <sequence>
        <receive partnerLink="client" operation="run" variable="more"><correlations><correlation set="cs"/></correlations></receive>
        <reply partnerLink="client" operation="run" variable="out"/>
      </sequence>
      <sequence>
        <receive partnerLink="client" operation="run" variable="more"><correlations><correlation set="cn"/></correlations></receive>
        <reply partnerLink="client" operation="run" variable="out"/>
      </sequence>
    </flow>
  </sequence>`, m.inMemory)
			o := startMode(t, deploy, m.inMemory)
			if g := postOp(t, o.base, "Ambiguous2", "go", "A1", "7"); g.status != 202 {
				t.Fatalf("go: status %d body %s", g.status, g.body)
			}
			r := callRun(t, o.base, "Ambiguous2", "A1", "7")
			if r.status != 500 || !strings.Contains(r.body, "ambiguousReceive") {
				t.Fatalf("run matching both receives: status %d body %s\n%s", r.status, r.body, o.log())
			}
		})
	}
}

// A second request on the same partner link, operation and message
// exchange while the first is open (10.4.1): the second request gets
// bpel:conflictingRequest; a handler catches it in the instance and the
// first request is answered normally. Either request may come first.
func TestSemConflictingRequest(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			deploy := t.TempDir()
			writeProcess(t, deploy, "TwoReq", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="go" variable="in" createInstance="yes">
      <correlations><correlation set="cs" initiate="yes"/></correlations>
    </receive>
    `+initOut+`
    <receive partnerLink="client" operation="run" variable="in"><correlations><correlation set="cs"/></correlations></receive>
    <scope>
      <faultHandlers>
        <catch faultName="bpel:conflictingRequest" `+bpelNS+`>
          <assign><copy><from>'second refused'</from><to>$out.payload/tns:a</to></copy></assign>
        </catch>
      </faultHandlers>
      <receive partnerLink="client" operation="run" variable="more"><correlations><correlation set="cs"/></correlations></receive>
    </scope>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, m.inMemory)
			o := startMode(t, deploy, m.inMemory)
			if g := postOp(t, o.base, "TwoReq", "go", "R1", "0"); g.status != 202 {
				t.Fatalf("go: status %d body %s", g.status, g.body)
			}
			a := startRun(t, o.base, "TwoReq", "R1", "1")
			b := startRun(t, o.base, "TwoReq", "R1", "2")
			ra, rb := a(), b()
			if ra.status == 500 {
				ra, rb = rb, ra
			}
			if rb.status != 500 || !strings.Contains(rb.body, "conflictingRequest") {
				t.Errorf("second request: status %d body %s, want the conflictingRequest fault\n%s", rb.status, rb.body, o.log())
			}
			if ra.status != 200 || !strings.Contains(ra.body, "second refused") {
				t.Errorf("first request: status %d body %s, want the handler's reply", ra.status, ra.body)
			}
		})
	}
}

// A reply with <toParts> (10.3.1) builds its message from the parts
// named.
func TestSemReplyToParts(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			deploy := t.TempDir()
			writeSemProcess(t, deploy, "ToParts", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="single" variable="in" createInstance="yes"/>
    <assign><copy><from><literal><tns:resp><tns:a>from parts</tns:a></tns:resp></literal></from><to variable="r"/></copy></assign>
    <reply partnerLink="client" operation="single"><toParts><toPart part="outputPart" fromVariable="r"/></toParts></reply>
  </sequence>`, m.inMemory)
			writeSemProcess(t, deploy, "ToPartsRPC", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="echo" createInstance="yes"><fromParts><fromPart part="inputPart" toVariable="str"/></fromParts></receive>
    <assign><copy><from>concat($str, ' from parts')</from><to variable="str"/></copy></assign>
    <reply partnerLink="client" operation="echo"><toParts><toPart part="outputPart" fromVariable="str"/></toParts></reply>
  </sequence>`, m.inMemory)
			o := startMode(t, deploy, m.inMemory)
			r := postOp(t, o.base, "ToParts", "single", "T1", "1")
			if r.status != 200 || !strings.Contains(r.body, "from parts") {
				t.Fatalf("status %d body %s\n%s", r.status, r.body, o.log())
			}
			client := &http.Client{Timeout: 60 * time.Second}
			r = post(t, client, o.base+"/processes/ToPartsRPC", textXML, `"urn:e2e#echo"`, []byte(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><e:echo xmlns:e="urn:e2e"><inputPart>hello</inputPart></e:echo></soapenv:Body></soapenv:Envelope>`))
			if r.status != 200 || !strings.Contains(r.body, "hello from parts") {
				t.Fatalf("rpc: status %d body %s\n%s", r.status, r.body, o.log())
			}
		})
	}
}

// A reply <toParts> from a variable never assigned raises
// bpel:uninitializedVariable (8.4.1, 10.3.1) at the reply, which a
// handler catches, instead of a reply without the part.
func TestSemReplyToPartsUninitialized(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			deploy := t.TempDir()
			writeSemProcess(t, deploy, "ToPartsUninit", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="single" variable="in" createInstance="yes"/>
    <scope>
      <faultHandlers>
        <catch faultName="bpel:uninitializedVariable" `+bpelNS+`>
          <sequence>
            <assign><copy><from><literal><tns:resp><tns:a>uninitialized caught</tns:a></tns:resp></literal></from><to variable="r"/></copy></assign>
            <reply partnerLink="client" operation="single"><toParts><toPart part="outputPart" fromVariable="r"/></toParts></reply>
          </sequence>
        </catch>
      </faultHandlers>
      <reply partnerLink="client" operation="single"><toParts><toPart part="outputPart" fromVariable="r"/></toParts></reply>
    </scope>
  </sequence>`, m.inMemory)
			o := startMode(t, deploy, m.inMemory)
			r := postOp(t, o.base, "ToPartsUninit", "single", "U1", "1")
			if r.status != 200 || !strings.Contains(r.body, "uninitialized caught") {
				t.Fatalf("status %d body %s\n%s", r.status, r.body, o.log())
			}
		})
	}
}

// Element variables on receive, reply and invoke for messages of one
// element part (WS-BPEL 2.0 10.3, 10.4, SA00048, SA00058).
func TestSemElementVariablesOnMessaging(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			partner := startSlowPartner(t, 0)
			deploy := t.TempDir()
			writeSemProcess(t, deploy, "ElemVars", partner.addr, `
  <sequence>
    <receive partnerLink="client" operation="run" variable="q" createInstance="yes"/>
    <invoke partnerLink="partner" operation="call" inputVariable="q" outputVariable="r"/>
    <assign><copy><from>concat($r/tns:a, ' n=', $q/tns:n)</from><to>$r/tns:a</to></copy></assign>
    <reply partnerLink="client" operation="run" variable="r"/>
  </sequence>`, m.inMemory)
			o := startMode(t, deploy, m.inMemory)
			r := callRun(t, o.base, "ElemVars", "V1", "4")
			if r.status != 200 || !strings.Contains(r.body, ">P-V1 n=4<") {
				t.Fatalf("status %d body %s\n%s", r.status, r.body, o.log())
			}
		})
	}
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

// <to variable="v" property="p"/> (8.4.1) writes through the property
// alias's query, for a message variable and for an element variable.
func TestSemToProperty(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			deploy := t.TempDir()
			writeSemProcess(t, deploy, "ToProp", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    <assign>
      <copy><from>'msg'</from><to variable="in" property="tns:n"/></copy>
      <copy><from variable="in" part="payload"/><to variable="q"/></copy>
      <copy><from>'elem'</from><to variable="q" property="tns:n"/></copy>
      <copy><from>concat($in.payload/tns:n, '+', $q/tns:n)</from><to>$out.payload/tns:a</to></copy>
    </assign>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, m.inMemory)
			o := startMode(t, deploy, m.inMemory)
			r := callRun(t, o.base, "ToProp", "P1", "1")
			if r.status != 200 || !strings.Contains(r.body, ">msg+elem<") {
				t.Fatalf("status %d body %s\n%s", r.status, r.body, o.log())
			}
		})
	}
}

// keepSrcElementName="yes" (8.4.2) copying an element whose name is not
// the target's declared element: bpel:mismatchedAssignmentFailure.
func TestSemKeepSrcElementNameMismatch(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			deploy := t.TempDir()
			writeSemProcess(t, deploy, "KeepSrc", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    <scope>
      <faultHandlers>
        <catch faultName="bpel:mismatchedAssignmentFailure" `+bpelNS+`>
          <assign><copy><from>'mismatch'</from><to>$out.payload/tns:a</to></copy></assign>
        </catch>
      </faultHandlers>
      <assign>
        <copy keepSrcElementName="yes"><from><literal><tns:problem><tns:code>x</tns:code></tns:problem></literal></from><to variable="r"/></copy>
        <copy><from>'copied'</from><to>$out.payload/tns:a</to></copy>
      </assign>
    </scope>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, m.inMemory)
			o := startMode(t, deploy, m.inMemory)
			r := callRun(t, o.base, "KeepSrc", "S1", "1")
			if r.status != 200 || !strings.Contains(r.body, ">mismatch<") {
				t.Fatalf("status %d body %s\n%s", r.status, r.body, o.log())
			}
		})
	}
}

// An XPath error while evaluating a condition (8.3) raises
// bpel:subLanguageExecutionFault: if, while, repeatUntil and a
// transition condition, with a dynamic error and with a value that has
// no boolean value.
func TestSemConditionErrors(t *testing.T) {
	const x2 = `expressionLanguage="urn:oasis:names:tc:wsbpel:2.0:sublang:xpath2.0"`
	conds := map[string]string{
		"dynamic": `xs:integer($in.payload/tns:n) = 1`,
		"noEBV":   `(1, 2)`,
		"atomics": `data($in.payload/*)`,
	}
	acts := map[string]func(c string) string{
		"if": func(c string) string {
			return `<if><condition ` + x2 + `>` + c + `</condition><empty/></if>`
		},
		"while": func(c string) string {
			return `<while><condition ` + x2 + `>` + c + `</condition><empty/></while>`
		},
		"repeatUntil": func(c string) string {
			return `<repeatUntil><empty/><condition ` + x2 + `>` + c + `</condition></repeatUntil>`
		},
		"elseif": func(c string) string {
			return `<if><condition>false()</condition><empty/><elseif><condition ` + x2 + `>` + c + `</condition><empty/></elseif></if>`
		},
		"join": func(c string) string {
			return `<flow><links><link name="l"/></links>
          <empty><sources><source linkName="l"/></sources></empty>
          <empty><targets><joinCondition ` + x2 + `>` + c + `</joinCondition><target linkName="l"/></targets></empty>
        </flow>`
		},
		"processLang": func(c string) string {
			return `<if><condition>` + c + `</condition><empty/></if>`
		},
		"transition": func(c string) string {
			return `<flow><links><link name="l"/></links>
          <empty><sources><source linkName="l"><transitionCondition ` + x2 + `>` + c + `</transitionCondition></source></sources></empty>
          <empty><targets><target linkName="l"/></targets></empty>
        </flow>`
		},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			deploy := t.TempDir()
			var names []string
			for an, act := range acts {
				for cn, c := range conds {
					if an == "join" && cn != "noEBV" {
						// A join condition reads only link status
						// (SA00073): refused at deploy, never run.
						continue
					}
					name := "Cond" + strings.ToUpper(an[:1]) + an[1:] + strings.ToUpper(cn[:1]) + cn[1:]
					names = append(names, name)
					writeSemProcess(t, deploy, name, "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    <scope>
      <faultHandlers>
        <catch faultName="bpel:subLanguageExecutionFault" `+bpelNS+`>
          <assign><copy><from>'sublanguage fault'</from><to>$out.payload/tns:a</to></copy></assign>
        </catch>
      </faultHandlers>
      <sequence>
        `+act(c)+`
        <assign><copy><from>'no fault'</from><to>$out.payload/tns:a</to></copy></assign>
      </sequence>
    </scope>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, m.inMemory)
					if an == "processLang" {
						bp := filepath.Join(deploy, name, name+".bpel")
						b, err := os.ReadFile(bp)
						if err != nil {
							t.Fatal(err)
						}
						b = []byte(strings.Replace(string(b), `<process `, `<process `+x2+` `, 1))
						if err := os.WriteFile(bp, b, 0o644); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			o := startMode(t, deploy, m.inMemory)
			for _, name := range names {
				r := callRun(t, o.base, name, "C1", "abc")
				if r.status != 200 || !strings.Contains(r.body, "sublanguage fault") {
					t.Errorf("%s: status %d body %s\n%s", name, r.status, r.body, o.log())
				}
			}
		})
	}
}

// An onEvent for a request-response operation in a scope of an instance
// that a one-way message started: the request finds the waiting instance
// and the event's reply answers it.
func TestSemOnEventAfterOneWayStart(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			deploy := t.TempDir()
			writeSemProcess(t, deploy, "EvRR", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="go" variable="in" createInstance="yes">
      <correlations><correlation set="cs" initiate="yes"/></correlations>
    </receive>
    `+initOut+`
    <scope>
      <eventHandlers>
        <onEvent partnerLink="client" operation="run" variable="ev" messageType="tns:req">
          <correlations><correlation set="cs"/></correlations>
          <scope>
            <sequence>
              <assign><copy><from>concat('event ', $ev.payload/tns:n)</from><to>$out.payload/tns:a</to></copy></assign>
              <reply partnerLink="client" operation="run" variable="out"/>
            </sequence>
          </scope>
        </onEvent>
      </eventHandlers>
      <receive partnerLink="client" operation="go" variable="more"><correlations><correlation set="cs"/></correlations></receive>
    </scope>
  </sequence>`, m.inMemory)
			o := startMode(t, deploy, m.inMemory)
			if g := postOp(t, o.base, "EvRR", "go", "E1", "1"); g.status != 202 {
				t.Fatalf("go: status %d body %s", g.status, g.body)
			}
			r := callRun(t, o.base, "EvRR", "E1", "2")
			if r.status != 200 || !strings.Contains(r.body, "event 2") {
				t.Fatalf("run: status %d body %s\n%s", r.status, r.body, o.log())
			}
			postGo(t, o.base, "EvRR", "E1", "3")
		})
	}
}

// A one-way onEvent of a scope takes a message, and then a request-response
// message comes for a receive of the same instance: it finds the waiting
// instance.
func TestSemOneWayEventThenRequest(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			deploy := t.TempDir()
			writeSemProcess(t, deploy, "EvOW", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes">
      <correlations><correlation set="cs" initiate="yes"/></correlations>
    </receive>
    `+initOut+`
    <reply partnerLink="client" operation="run" variable="out"/>
    <scope>
      <eventHandlers>
        <onEvent partnerLink="client" operation="go" variable="ev" messageType="tns:req">
          <correlations><correlation set="cs"/></correlations>
          <scope>
            <assign><copy><from>concat($out.payload/tns:a, 'e', $ev.payload/tns:n)</from><to>$out.payload/tns:a</to></copy></assign>
          </scope>
        </onEvent>
      </eventHandlers>
      <sequence>
        <receive partnerLink="client" operation="run" variable="more"><correlations><correlation set="cs"/></correlations></receive>
        <assign><copy><from>concat($out.payload/tns:a, ' then run')</from><to>$out.payload/tns:a</to></copy></assign>
        <reply partnerLink="client" operation="run" variable="out"/>
      </sequence>
    </scope>
  </sequence>`, m.inMemory)
			o := startMode(t, deploy, m.inMemory)
			if r := callRun(t, o.base, "EvOW", "W1", "0"); r.status != 200 {
				t.Fatalf("start: status %d body %s", r.status, r.body)
			}
			postGo(t, o.base, "EvOW", "W1", "1")
			r := callRun(t, o.base, "EvOW", "W1", "2")
			if r.status != 200 || !strings.Contains(r.body, "e1 then run") {
				t.Fatalf("run: status %d body %s\n%s", r.status, r.body, o.log())
			}
		})
	}
}

// A termination handler's activity with a link to an activity outside
// the terminated scope (12.6, 11.6.1): the handler runs its activity, so
// the link's status is its transition condition's, and the target runs
// (or is skipped) by it; no joinFailure.
func TestSemTerminationHandlerLink(t *testing.T) {
	for _, m := range modes {
		for _, tc := range []struct{ cond, suppress, want string }{{"true()", "no", "target ran"}, {"false()", "yes", "target skipped"}} {
			t.Run(m.name+"/"+tc.cond, func(t *testing.T) {
				deploy := t.TempDir()
				writeSemProcess(t, deploy, "TermLink", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    <assign><copy><from>'target skipped'</from><to>$out.payload/tns:a</to></copy></assign>
    <flow>
      <links><link name="l"/></links>
      <scope name="P">
        <faultHandlers><catchAll><empty/></catchAll></faultHandlers>
        <flow>
          <scope name="S">
            <terminationHandler>
              <empty><sources><source linkName="l"><transitionCondition>`+tc.cond+`</transitionCondition></source></sources></empty>
            </terminationHandler>
            <receive partnerLink="client" operation="go" variable="more"/>
          </scope>
          <throw faultName="tns:stop"/>
        </flow>
      </scope>
      <assign suppressJoinFailure="`+tc.suppress+`"><targets><target linkName="l"/></targets>
        <copy><from>'target ran'</from><to>$out.payload/tns:a</to></copy>
      </assign>
    </flow>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, m.inMemory)
				o := startMode(t, deploy, m.inMemory)
				r := callRun(t, o.base, "TermLink", "L1", "1")
				if r.status != 200 || !strings.Contains(r.body, ">"+tc.want+"<") {
					t.Fatalf("status %d body %s, want %q\n%s", r.status, r.body, tc.want, o.log())
				}
			})
		}
	}
}

// The branches of a parallel forEach, and of a flow, each making a
// request-response invoke from a scope of their own: the calls are in
// flight together at the partner (the partner holds each call until both
// arrived).
func TestSemParallelCallsOverlap(t *testing.T) {
	bodies := map[string]string{
		"ForEach": `<forEach counterName="i" parallel="yes">
      <startCounterValue>1</startCounterValue><finalCounterValue>2</finalCounterValue>
      <scope>
        <variables><variable name="res" messageType="tns:resp"/></variables>
        <sequence>
          <invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="res"/>
          <assign><copy><from>concat($out.payload/tns:a, $res.payload/tns:a)</from><to>$out.payload/tns:a</to></copy></assign>
        </sequence>
      </scope>
    </forEach>`,
		"ForEachHandlers": `<forEach counterName="i" parallel="yes">
      <startCounterValue>1</startCounterValue><finalCounterValue>2</finalCounterValue>
      <scope>
        <variables><variable name="res" messageType="tns:resp"/></variables>
        <faultHandlers><catchAll><empty/></catchAll></faultHandlers>
        <compensationHandler><empty/></compensationHandler>
        <sequence>
          <assign><copy><from>$i</from><to>$in.payload/tns:n</to></copy></assign>
          <invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="res"/>
          <assign><copy><from>concat($out.payload/tns:a, $res.payload/tns:a)</from><to>$out.payload/tns:a</to></copy></assign>
        </sequence>
      </scope>
    </forEach>`,
		"Flow": `<flow>
      <scope><invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="p1"/></scope>
      <scope><invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="p2"/></scope>
    </flow>
    <assign><copy><from>concat($p1.payload/tns:a, $p2.payload/tns:a)</from><to>$out.payload/tns:a</to></copy></assign>`,
	}
	for _, m := range modes {
		for kind, body := range bodies {
			t.Run(m.name+"/"+kind, func(t *testing.T) {
				partner, release := startGatedPartner(t)
				deploy := t.TempDir()
				writeProcess(t, deploy, "Par"+kind, partner.addr, `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    `+body+`
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, m.inMemory)
				o := startMode(t, deploy, m.inMemory)
				run := startRun(t, o.base, "Par"+kind, "X", "1")
				both := eventually(func() bool { return partner.inFlight.Load() == 2 })
				release()
				r := run()
				if !both {
					t.Errorf("the two calls were never in flight together (max %d)", partner.maxFlight.Load())
				}
				if r.status != 200 || !strings.Contains(r.body, ">P-XP-X<") {
					t.Errorf("status %d body %s\n%s", r.status, r.body, o.log())
				}
			})
		}
	}
}
