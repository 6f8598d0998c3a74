package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The bundle of TestODESessionBetweenProcesses: S2A serves its client
// (run), calls S2B one-way (start) over the link pair, whose myRole
// (requester) takes S2B's callback (done), and answers its client with
// the callback's message; S2B waits the number of seconds the message
// says, then calls back over its side of pair, whose partner role
// deploy.xml binds to S2A's callback service. Nothing but ODE's session
// tells the callbacks apart: done is received without correlation set.
const (
	s2WSDL = `<?xml version="1.0" encoding="UTF-8"?>
<wsdl:definitions name="S2" targetNamespace="urn:s2"
    xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
    xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:plnk="http://docs.oasis-open.org/wsbpel/2.0/plnktype" xmlns:tns="urn:s2">
  <wsdl:message name="msg"><wsdl:part name="id" type="xsd:string"/><wsdl:part name="delay" type="xsd:string"/></wsdl:message>
  <wsdl:portType name="ClientPT"><wsdl:operation name="run"><wsdl:input message="tns:msg"/><wsdl:output message="tns:msg"/></wsdl:operation></wsdl:portType>
  <wsdl:portType name="ServicePT"><wsdl:operation name="start"><wsdl:input message="tns:msg"/></wsdl:operation></wsdl:portType>
  <wsdl:portType name="CallbackPT"><wsdl:operation name="done"><wsdl:input message="tns:msg"/></wsdl:operation></wsdl:portType>
  <wsdl:binding name="ClientBinding" type="tns:ClientPT"><soap:binding style="rpc" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="run"><soap:operation soapAction="urn:s2#run"/><wsdl:input><soap:body use="literal" namespace="urn:s2"/></wsdl:input><wsdl:output><soap:body use="literal" namespace="urn:s2"/></wsdl:output></wsdl:operation></wsdl:binding>
  <wsdl:binding name="ServiceBinding" type="tns:ServicePT"><soap:binding style="rpc" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="start"><soap:operation soapAction="urn:s2#start"/><wsdl:input><soap:body use="literal" namespace="urn:s2"/></wsdl:input></wsdl:operation></wsdl:binding>
  <wsdl:binding name="CallbackBinding" type="tns:CallbackPT"><soap:binding style="rpc" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="done"><soap:operation soapAction="urn:s2#done"/><wsdl:input><soap:body use="literal" namespace="urn:s2"/></wsdl:input></wsdl:operation></wsdl:binding>
  <wsdl:service name="ClientService"><wsdl:port name="ClientPort" binding="tns:ClientBinding"><soap:address location="http://localhost:8080/processes/S2Client"/></wsdl:port></wsdl:service>
  <wsdl:service name="BService"><wsdl:port name="BPort" binding="tns:ServiceBinding"><soap:address location="http://localhost:8080/processes/S2B"/></wsdl:port></wsdl:service>
  <wsdl:service name="CallbackService"><wsdl:port name="CallbackPort" binding="tns:CallbackBinding"><soap:address location="http://localhost:8080/processes/S2Callback"/></wsdl:port></wsdl:service>
  <plnk:partnerLinkType name="ClientLT"><plnk:role name="provider" portType="tns:ClientPT"/></plnk:partnerLinkType>
  <plnk:partnerLinkType name="PairLT"><plnk:role name="requester" portType="tns:CallbackPT"/><plnk:role name="responder" portType="tns:ServicePT"/></plnk:partnerLinkType>
</wsdl:definitions>
`
	s2ABPEL = `<?xml version="1.0" encoding="UTF-8"?>
<process name="S2A" targetNamespace="urn:s2:process" xmlns="http://docs.oasis-open.org/wsbpel/2.0/process/executable" xmlns:tns="urn:s2">
  <import importType="http://schemas.xmlsoap.org/wsdl/" location="s2.wsdl" namespace="urn:s2"/>
  <partnerLinks>
    <partnerLink name="client" partnerLinkType="tns:ClientLT" myRole="provider"/>
    <partnerLink name="pair" partnerLinkType="tns:PairLT" myRole="requester" partnerRole="responder"/>
  </partnerLinks>
  <variables><variable name="in" messageType="tns:msg"/><variable name="back" messageType="tns:msg"/></variables>
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    <invoke partnerLink="pair" operation="start" inputVariable="in"/>
    <receive partnerLink="pair" operation="done" variable="back"/>
    <reply partnerLink="client" operation="run" variable="back"/>
  </sequence>
</process>
`
	s2BBPEL = `<?xml version="1.0" encoding="UTF-8"?>
<process name="S2B" targetNamespace="urn:s2:process" xmlns="http://docs.oasis-open.org/wsbpel/2.0/process/executable" xmlns:tns="urn:s2">
  <import importType="http://schemas.xmlsoap.org/wsdl/" location="s2.wsdl" namespace="urn:s2"/>
  <partnerLinks>
    <partnerLink name="pair" partnerLinkType="tns:PairLT" myRole="responder" partnerRole="requester"/>
  </partnerLinks>
  <variables><variable name="in" messageType="tns:msg"/></variables>
  <sequence>
    <receive partnerLink="pair" operation="start" variable="in" createInstance="yes"/>
    <wait><for>concat('PT', $in.delay, 'S')</for></wait>
    <invoke partnerLink="pair" operation="done" inputVariable="in"/>
  </sequence>
</process>
`
	s2Deploy = `<?xml version="1.0" encoding="UTF-8"?>
<deploy xmlns="http://www.apache.org/ode/schemas/dd/2007/03" xmlns:pns="urn:s2:process" xmlns:tns="urn:s2">
  <process name="pns:S2A">
    <in-memory>INMEMORY</in-memory>
    <provide partnerLink="client"><service name="tns:ClientService" port="ClientPort"/></provide>
    <provide partnerLink="pair"><service name="tns:CallbackService" port="CallbackPort"/></provide>
    <invoke partnerLink="pair"><service name="tns:BService" port="BPort"/></invoke>
  </process>
  <process name="pns:S2B">
    <in-memory>INMEMORY</in-memory>
    <provide partnerLink="pair"><service name="tns:BService" port="BPort"/></provide>
    <invoke partnerLink="pair"><service name="tns:CallbackService" port="CallbackPort"/></invoke>
  </process>
</deploy>
`
)

// s2ID finds the id part of S2A's answer.
var s2ID = regexp.MustCompile(`<id[^>]*>([^<]*)</id>`)

// s2Run posts run with id and delay to S2A's client service.
func s2Run(base, id, delay string) response {
	body := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
		`<s:run xmlns:s="urn:s2"><id>` + id + `</id><delay>` + delay + `</delay></s:run></soapenv:Body></soapenv:Envelope>`
	return postAction(&http.Client{Timeout: 60 * time.Second}, base+"/processes/S2Client", `"urn:s2#run"`, []byte(body))
}

// TestODESessionBetweenProcesses: ODE's implicit correlation by session
// between two processes of one bundle. S2A calls S2B one-way over a link
// that has a myRole too; the call carries ODE's callback header (S2A's
// callback address and its instance's session); S2B takes it as its
// partner role's endpoint, so its callback carries the session as an
// odesession:session header block and reaches the S2A instance that
// called, which no correlation set could tell apart. The first client's
// S2B waits 1 s, the second's none: the second callback comes first,
// while both S2A instances wait for theirs, and must reach the second
// instance. Both modes.
func TestODESessionBetweenProcesses(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			deploy := t.TempDir()
			dir := filepath.Join(deploy, "S2")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for f, s := range map[string]string{"s2.wsdl": s2WSDL, "S2A.bpel": s2ABPEL, "S2B.bpel": s2BBPEL,
				"deploy.xml": strings.ReplaceAll(s2Deploy, "INMEMORY", map[bool]string{true: "true", false: "false"}[m.inMemory])} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"--deploy", deploy}
			if !m.inMemory {
				args = append(args, "--data", t.TempDir())
			}
			o := startOrchd(t, args...)
			type answer struct {
				id string
				r  response
			}
			replies := make(chan answer, 2)
			go func() { replies <- answer{"slow", s2Run(o.base, "slow", "1")} }()
			time.Sleep(300 * time.Millisecond)
			go func() { replies <- answer{"fast", s2Run(o.base, "fast", "0")} }()
			for range 2 {
				a := <-replies
				if a.r.status != http.StatusOK {
					t.Fatalf("%s: status %d body %s\n%s", a.id, a.r.status, a.r.body, o.log())
				}
				if got := s2ID.FindStringSubmatch(a.r.body); got == nil || got[1] != a.id {
					t.Errorf("client %s got the callback of %q: %s", a.id, got, a.r.body)
				}
			}
		})
	}
}
