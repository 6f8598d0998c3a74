package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
)

// Endpoint references: a client hands orchd where to call, the process
// copies it to a partner link and the invoke goes there.

// eprRequest is a tns:req whose n holds the given XML.
func eprRequest(id, n string) []byte {
	return []byte(fmt.Sprintf(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><req xmlns="urn:e2e"><id>%s</id><n>%s</n></req></soapenv:Body></soapenv:Envelope>`, id, n))
}

// wsaEPR is a WS-Addressing endpoint reference to addr.
func wsaEPR(addr string) string {
	return `<wsa:EndpointReference xmlns:wsa="http://www.w3.org/2005/08/addressing"><wsa:Address>` + addr + `</wsa:Address></wsa:EndpointReference>`
}

// runBody is a process body: receive run, give out an empty tns:resp,
// do the activities, reply out.
func runBody(activities string) string {
	return `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    ` + initOut + activities + `
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`
}

// invokeInto calls the partner with in and copies its answer to the reply.
const invokeInto = `<invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="p1"/>
    <assign><copy><from>$p1.payload/tns:a</from><to>$out.payload/tns:a</to></copy></assign>`

// What the binary decides about endpoint references: an EPR a request
// carries wins over deploy.xml's binding as --endpoints overrides it, the
// binding so overridden serves without one, and a myRole EPR names the
// server's own base URL. (The rules of the copies themselves are the sem
// cases of internal/process/interp/testdata/sem/epr.)
func TestEndpointReferences(t *testing.T) {
	assigned := startSlowPartner(t, 0)
	overridden := startSlowPartner(t, 0)
	deploy := t.TempDir()
	// Deploy-time binding at a dead address; --endpoints sends it to
	// overridden. An EPR in the request wins over both.
	writeProcess(t, deploy, "EprIn", "127.0.0.1:1", runBody(`
    <if><condition>$in.payload/tns:id != 'static'</condition>
      <assign><copy><from>$in.payload/tns:n</from><to partnerLink="partner"/></copy></assign>
    </if>
    `+invokeInto), true)
	writeProcess(t, deploy, "EprMe", "127.0.0.1:1", runBody(`
    <assign><copy><from partnerLink="client" endpointReference="myRole"/><to>$out.payload/tns:a</to></copy></assign>`), true)
	rules := filepath.Join(t.TempDir(), "endpoints.txt")
	if err := os.WriteFile(rules, []byte("{urn:e2e}PartnerService * http://"+overridden.addr+"/partner\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := startOrchd(t, "--deploy", deploy, "--endpoints", rules, "--partner-allow", "127.0.0.1") // the test's loopback partners
	client := &http.Client{Timeout: 30 * time.Second}
	run := func(name, id, n string) response {
		return post(t, client, o.base+"/processes/"+name, textXML, `"urn:e2e#run"`, eprRequest(id, n))
	}

	r := run("EprIn", "E1", wsaEPR("http://"+assigned.addr+"/partner"))
	if r.status != 200 || !strings.Contains(r.body, ">P-E1<") {
		t.Fatalf("EPR in the request: status %d body %s\n%s", r.status, r.body, o.log())
	}
	if assigned.done.Load() != 1 || overridden.done.Load() != 0 {
		t.Errorf("EPR in the request: assigned partner called %d times, overridden %d; want 1, 0", assigned.done.Load(), overridden.done.Load())
	}
	// No EPR: the deploy-time binding, as --endpoints overrides it.
	r = run("EprIn", "static", "x")
	if r.status != 200 || !strings.Contains(r.body, ">P-static<") || overridden.done.Load() != 1 {
		t.Errorf("deploy-time binding: status %d body %s, overridden partner called %d times", r.status, r.body, overridden.done.Load())
	}
	r = run("EprMe", "M1", "1")
	if want := "<wsa:Address>" + o.base + "/processes/EprMe</wsa:Address>"; r.status != 200 || !strings.Contains(r.body, want) ||
		!strings.Contains(r.body, `xmlns:wsa="http://www.w3.org/2005/08/addressing"`) {
		t.Errorf("myRole EPR: status %d body %s, want %s", r.status, r.body, want)
	}

	if n := assigned.done.Load() + overridden.done.Load(); n != 2 {
		t.Errorf("%d partner calls in all, want 2", n)
	}

	// Behind a proxy (--public-url) a myRole EPR names the address
	// clients reach, path prefix included, not the listener's.
	o2 := startOrchd(t, "--deploy", deploy, "--endpoints", rules, "--partner-allow", "127.0.0.1", "--public-url", "https://orchd.example.com/bpel/")
	r = post(t, client, o2.base+"/processes/EprMe", textXML, `"urn:e2e#run"`, eprRequest("M2", "1"))
	if want := "<wsa:Address>https://orchd.example.com/bpel/processes/EprMe</wsa:Address>"; r.status != 200 || !strings.Contains(r.body, want) {
		t.Errorf("myRole EPR under --public-url: status %d body %s, want %s", r.status, r.body, want)
	}
}

// An assigned endpoint is instance state: a persistent instance waiting
// after the copy invokes the assigned address after orchd was killed and
// started again.
func TestEndpointReferenceSurvivesRestart(t *testing.T) {
	partner := startSlowPartner(t, 0)
	deploy := t.TempDir()
	writeProcess(t, deploy, "EprRestart", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes">
      <correlations><correlation set="cs" initiate="yes"/></correlations>
    </receive>
    <assign><copy><from>$in.payload/tns:n</from><to partnerLink="partner"/></copy></assign>
    `+initOut+`
    <reply partnerLink="client" operation="run" variable="out"/>
    <receive partnerLink="client" operation="go" variable="more">
      <correlations><correlation set="cs"/></correlations>
    </receive>
    <invoke partnerLink="partner" operation="call" inputVariable="more" outputVariable="p1"/>
  </sequence>`, false)
	data := t.TempDir()
	client := &http.Client{Timeout: 30 * time.Second}
	o := startOrchd(t, "--deploy", deploy, "--data", data, "--partner-allow", "127.0.0.1")
	r := post(t, client, o.base+"/processes/EprRestart", textXML, `"urn:e2e#run"`, eprRequest("R1", wsaEPR("http://"+partner.addr+"/partner")))
	if r.status != 200 {
		t.Fatalf("run: status %d body %s", r.status, r.body)
	}
	kill9(t, o)
	o2 := startOrchd(t, "--deploy", deploy, "--data", data, "--partner-allow", "127.0.0.1")
	g := post(t, client, o2.base+"/processes/EprRestart", textXML, `"urn:e2e#go"`, e2eRequest("R1", "2"))
	if g.status != 202 {
		t.Fatalf("go: status %d body %s", g.status, g.body)
	}
	if !eventually(func() bool { return partner.done.Load() == 1 }) {
		t.Fatalf("the assigned partner was not called after the restart\n%s", o2.log())
	}
	if !eventually(func() bool {
		ins := listInstances(t, o2, mgmt.Query{Process: "EprRestart"})
		return len(ins) == 1 && ins[0].State == "completed"
	}) {
		t.Errorf("instance not completed: %+v", listInstances(t, o2, mgmt.Query{Process: "EprRestart"}))
	}
}
