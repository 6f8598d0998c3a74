package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// calleeBPEL provides the partner port type (operation call) and answers
// "callee:<id>".
const calleeBPEL = `<?xml version="1.0" encoding="UTF-8"?>
<process name="Callee" targetNamespace="urn:e2e:process"
    xmlns="http://docs.oasis-open.org/wsbpel/2.0/process/executable" xmlns:tns="urn:e2e">
  <import importType="http://schemas.xmlsoap.org/wsdl/" location="e2e.wsdl" namespace="urn:e2e"/>
  <partnerLinks><partnerLink name="me" partnerLinkType="tns:PartnerLT" myRole="partner"/></partnerLinks>
  <variables><variable name="in" messageType="tns:req"/><variable name="out" messageType="tns:resp"/></variables>
  <sequence>
    <receive partnerLink="me" operation="call" variable="in" createInstance="yes"/>
    <assign>
      <copy><from><literal><tns:resp><tns:a/></tns:resp></literal></from><to variable="out" part="payload"/></copy>
      <copy><from>concat('callee:', $in.payload/tns:id)</from><to>$out.payload/tns:a</to></copy>
    </assign>
    <reply partnerLink="me" operation="call" variable="out"/>
  </sequence>
</process>
`

const calleeDeploy = `<?xml version="1.0" encoding="UTF-8"?>
<deploy xmlns="http://www.apache.org/ode/schemas/dd/2007/03" xmlns:pns="urn:e2e:process" xmlns:tns="urn:e2e">
  <process name="pns:Callee">
    <provide partnerLink="me"><service name="tns:CalleeService" port="PartnerPort"/></provide>
  </process>
</deploy>
`

// writeCallee writes the bundle of the process Callee, served at
// /processes/Callee with the partner port type of bpelWSDL.
func writeCallee(t *testing.T, deployDir string) {
	t.Helper()
	dir := filepath.Join(deployDir, "Callee")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	wsdl := strings.ReplaceAll(strings.ReplaceAll(bpelWSDL, "NAME", "Callee"),
		`<wsdl:service name="PartnerService"><wsdl:port name="PartnerPort" binding="tns:PartnerBinding"><soap:address location="http://PARTNER/partner"/>`,
		`<wsdl:service name="CalleeService"><wsdl:port name="PartnerPort" binding="tns:PartnerBinding"><soap:address location="http://127.0.0.1:8080/processes/Callee"/>`)
	if !strings.Contains(wsdl, "CalleeService") {
		t.Fatal("the callee's WSDL edit found nothing to edit")
	}
	for f, s := range map[string]string{"e2e.wsdl": wsdl, "Callee.bpel": calleeBPEL, "deploy.xml": calleeDeploy} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSelfAddressedCall: an endpoint reference a process copies to a
// partner link at run time that names one of this orchd's own process
// endpoints (its listen address or a loopback name for it, the path of a
// deployed process) is an in-process call, as Apache ODE routed it: it
// never leaves the server, so the partner address policy, which refuses
// loopback without --partner-allow, does not apply. Any other loopback
// address is still refused.
func TestSelfAddressedCall(t *testing.T) {
	deploy := t.TempDir()
	writeCallee(t, deploy)
	// The caller's deploy-time binding is a dead address: only the
	// endpoint reference in the request says where to call.
	writeProcess(t, deploy, "SelfCaller", "127.0.0.1:1", runBody(`
    <assign><copy><from>$in.payload/tns:n</from><to partnerLink="partner"/></copy></assign>
    `+invokeInto), true)
	other := startSlowPartner(t, 0)
	o := startOrchd(t, "--deploy", deploy) // no --partner-allow
	port := o.base[strings.LastIndex(o.base, ":")+1:]
	client := &http.Client{Timeout: 30 * time.Second}
	for _, tc := range []struct {
		name, addr string
		want       string // the reply's a; empty: refused by the policy
	}{
		{name: "listen address", addr: o.base + "/processes/Callee", want: "callee:L1"},
		{name: "localhost", addr: "http://localhost:" + port + "/processes/Callee", want: "callee:L1"},
		{name: "upper-case host name", addr: "http://LOCALHOST:" + port + "/processes/Callee", want: "callee:L1"},
		{name: "own address, no process at the path", addr: o.base + "/processes/Nobody"},
		{name: "another server on loopback", addr: "http://" + other.addr + "/partner"},
		{name: "own address, another scheme", addr: "https://127.0.0.1:" + port + "/processes/Callee"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, client, o.base+"/processes/SelfCaller", textXML, `"urn:e2e#run"`, eprRequest("L1", wsaEPR(tc.addr)))
			if tc.want != "" {
				if r.status != 200 || !strings.Contains(r.body, ">"+tc.want+"<") {
					t.Fatalf("EPR %s: status %d body %s, want a reply with %s\n%s", tc.addr, r.status, r.body, tc.want, o.log())
				}
				return
			}
			if r.status == 200 {
				t.Fatalf("EPR %s: answered %s, want the policy's refusal", tc.addr, r.body)
			}
			if _, reason := faultCode(t, r.body); !strings.Contains(reason, "not allowed by the partner address policy") {
				t.Errorf("EPR %s: fault reason %q, want the policy's refusal", tc.addr, reason)
			}
		})
	}
	if n := other.received(); n != 0 {
		t.Errorf("the other loopback server was called %d times, want 0 (refused)", n)
	}
}
