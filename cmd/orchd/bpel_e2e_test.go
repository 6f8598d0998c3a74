package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
)

// The WS-BPEL end-to-end tests deploy small processes written for one
// behaviour each into a real orchd, and call them, and a real partner, over
// loopback.

const bpelWSDL = `<?xml version="1.0" encoding="UTF-8"?>
<wsdl:definitions name="E2E" targetNamespace="urn:e2e"
    xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
    xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:plnk="http://docs.oasis-open.org/wsbpel/2.0/plnktype"
    xmlns:vprop="http://docs.oasis-open.org/wsbpel/2.0/varprop" xmlns:tns="urn:e2e">
  <wsdl:types><xsd:schema targetNamespace="urn:e2e" elementFormDefault="qualified">
    <xsd:element name="req"><xsd:complexType><xsd:sequence><xsd:element name="id" type="xsd:string"/><xsd:element name="n" type="xsd:string"/></xsd:sequence></xsd:complexType></xsd:element>
    <xsd:element name="resp"><xsd:complexType><xsd:sequence><xsd:element name="a" type="xsd:string"/></xsd:sequence></xsd:complexType></xsd:element>
    <xsd:element name="problem"><xsd:complexType><xsd:sequence><xsd:element name="code" type="xsd:string"/></xsd:sequence></xsd:complexType></xsd:element>
  </xsd:schema></wsdl:types>
  <wsdl:message name="req"><wsdl:part name="payload" element="tns:req"/></wsdl:message>
  <wsdl:message name="resp"><wsdl:part name="payload" element="tns:resp"/></wsdl:message>
  <wsdl:message name="problem"><wsdl:part name="payload" element="tns:problem"/></wsdl:message>
  <wsdl:portType name="TestPT">
    <wsdl:operation name="run"><wsdl:input message="tns:req"/><wsdl:output message="tns:resp"/></wsdl:operation>
    <wsdl:operation name="go"><wsdl:input message="tns:req"/></wsdl:operation>
  </wsdl:portType>
  <wsdl:portType name="PartnerPT">
    <wsdl:operation name="call"><wsdl:input message="tns:req"/><wsdl:output message="tns:resp"/></wsdl:operation>
  </wsdl:portType>
  <wsdl:binding name="TestBinding" type="tns:TestPT">
    <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="run"><soap:operation soapAction="urn:e2e#run"/><wsdl:input><soap:body use="literal"/></wsdl:input><wsdl:output><soap:body use="literal"/></wsdl:output></wsdl:operation>
    <wsdl:operation name="go"><soap:operation soapAction="urn:e2e#go"/><wsdl:input><soap:body use="literal"/></wsdl:input></wsdl:operation>
  </wsdl:binding>
  <wsdl:binding name="PartnerBinding" type="tns:PartnerPT">
    <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="call"><soap:operation soapAction="urn:e2e#call"/><wsdl:input><soap:body use="literal"/></wsdl:input><wsdl:output><soap:body use="literal"/></wsdl:output></wsdl:operation>
  </wsdl:binding>
  <wsdl:service name="TestService"><wsdl:port name="TestPort" binding="tns:TestBinding"><soap:address location="http://127.0.0.1:8080/processes/NAME"/></wsdl:port></wsdl:service>
  <wsdl:service name="PartnerService"><wsdl:port name="PartnerPort" binding="tns:PartnerBinding"><soap:address location="http://PARTNER/partner"/></wsdl:port></wsdl:service>
  <plnk:partnerLinkType name="TestLT"><plnk:role name="provider" portType="tns:TestPT"/></plnk:partnerLinkType>
  <plnk:partnerLinkType name="PartnerLT"><plnk:role name="partner" portType="tns:PartnerPT"/></plnk:partnerLinkType>
  <vprop:property name="id" type="xsd:string"/>
  <vprop:propertyAlias propertyName="tns:id" messageType="tns:req" part="payload"><vprop:query>tns:id</vprop:query></vprop:propertyAlias>
  <vprop:property name="n" type="xsd:string"/>
  <vprop:propertyAlias propertyName="tns:n" messageType="tns:req" part="payload"><vprop:query>tns:n</vprop:query></vprop:propertyAlias>
</wsdl:definitions>
`

const bpelHead = `<?xml version="1.0" encoding="UTF-8"?>
<process name="NAME" targetNamespace="urn:e2e:process"
    xmlns="http://docs.oasis-open.org/wsbpel/2.0/process/executable"
    xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:tns="urn:e2e">
  <import importType="http://schemas.xmlsoap.org/wsdl/" location="e2e.wsdl" namespace="urn:e2e"/>
  <partnerLinks>
    <partnerLink name="client" partnerLinkType="tns:TestLT" myRole="provider"/>
    <partnerLink name="partner" partnerLinkType="tns:PartnerLT" partnerRole="partner"/>
  </partnerLinks>
  <variables>
    <variable name="in" messageType="tns:req"/>
    <variable name="more" messageType="tns:req"/>
    <variable name="out" messageType="tns:resp"/>
    <variable name="p1" messageType="tns:resp"/>
    <variable name="p2" messageType="tns:resp"/>
  </variables>
  <correlationSets><correlationSet name="cs" properties="tns:id"/><correlationSet name="cn" properties="tns:n"/></correlationSets>
`

// initOut is an assign that gives out an empty tns:resp.
const initOut = `<assign><copy><from><literal><tns:resp><tns:a/></tns:resp></literal></from><to variable="out" part="payload"/></copy></assign>`

// writeProcess writes a bundle serving process name at
// /processes/<name>, calling the partner at partner.
func writeProcess(t *testing.T, deployDir, name, partner, body string, inMemory bool) {
	t.Helper()
	dir := filepath.Join(deployDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	wsdl := strings.ReplaceAll(strings.ReplaceAll(bpelWSDL, "PARTNER", partner), "NAME", name)
	bpel := strings.ReplaceAll(bpelHead, "NAME", name) + body + "\n</process>\n"
	dd := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<deploy xmlns="http://www.apache.org/ode/schemas/dd/2007/03" xmlns:pns="urn:e2e:process" xmlns:tns="urn:e2e">
  <process name="pns:%s">
    <in-memory>%v</in-memory>
    <provide partnerLink="client"><service name="tns:TestService" port="TestPort"/></provide>
    <invoke partnerLink="partner"><service name="tns:PartnerService" port="PartnerPort"/></invoke>
  </process>
</deploy>
`, name, inMemory)
	for f, s := range map[string]string{"e2e.wsdl": wsdl, name + ".bpel": bpel, "deploy.xml": dd} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// slowPartner answers call with "P-<id>" after delay, counting the calls
// in flight; a call whose client went away is counted as cancelled.
type slowPartner struct {
	delay               time.Duration
	inFlight, maxFlight atomic.Int32
	done, cancelled     atomic.Int32
	addr                string
	// ns are the n values of the calls answered, in order.
	mu sync.Mutex
	ns []string
}

// received is the number of calls that reached the partner so far:
// answered, cancelled, or in flight.
func (p *slowPartner) received() int32 {
	return p.done.Load() + p.cancelled.Load() + p.inFlight.Load()
}

// calls returns the n values of the calls answered so far.
func (p *slowPartner) calls() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.ns...)
}

func startSlowPartner(t *testing.T, delay time.Duration) *slowPartner {
	t.Helper()
	return startSlowPartnerWith(t, &slowPartner{delay: delay})
}

func startSlowPartnerWith(t *testing.T, p *slowPartner) *slowPartner {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(p.serve)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

func (p *slowPartner) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	n := p.inFlight.Add(1)
	for {
		m := p.maxFlight.Load()
		if n <= m || p.maxFlight.CompareAndSwap(m, n) {
			break
		}
	}
	defer p.inFlight.Add(-1)
	select {
	case <-time.After(p.delay):
	case <-r.Context().Done():
		p.cancelled.Add(1)
		return
	}
	id := between(string(body), "id>", "</")
	p.mu.Lock()
	p.ns = append(p.ns, between(string(body), "n>", "</"))
	p.mu.Unlock()
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	fmt.Fprintf(w, `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><resp xmlns="urn:e2e"><a>P-%s</a></resp></soapenv:Body></soapenv:Envelope>`, id)
	p.done.Add(1)
}

// eventually polls cond for up to 10 s and reports whether it held.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i+len(from):]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j]
	}
	return s
}

func e2eRequest(id, n string) []byte {
	return []byte(fmt.Sprintf(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><req xmlns="urn:e2e"><id>%s</id><n>%s</n></req></soapenv:Body></soapenv:Envelope>`, id, n))
}

func callRun(t *testing.T, base, name, id, n string) response {
	t.Helper()
	client := &http.Client{Timeout: 60 * time.Second}
	return post(t, client, base+"/processes/"+name, textXML, `"urn:e2e#run"`, e2eRequest(id, n))
}

// callRunAsync is callRun for a goroutine other than the test's (which
// must not call t.Fatal): a failure comes back as status 0 with the
// error as the body, for the test's goroutine to report.
func callRunAsync(base, name, id, n string) response {
	client := &http.Client{Timeout: 60 * time.Second}
	return postAction(client, base+"/processes/"+name, `"urn:e2e#run"`, e2eRequest(id, n))
}

// A persistent instance's work after its reply does not die with the
// client's connection.
func TestWorkAfterReplyOutlivesClient(t *testing.T) {
	partner := startSlowPartner(t, 500*time.Millisecond)
	deploy := t.TempDir()
	writeProcess(t, deploy, "AfterReply", partner.addr, `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    <reply partnerLink="client" operation="run" variable="out"/>
    <invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="p1"/>
  </sequence>`, false)
	o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir())
	// The client closes its connection as soon as it has its answer.
	hangUp := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	r := post(t, hangUp, o.base+"/processes/AfterReply", textXML, `"urn:e2e#run"`, e2eRequest("A1", "1"))
	if r.status != 200 {
		t.Fatalf("status %d body %s", r.status, r.body)
	}
	eventually(func() bool { return partner.done.Load()+partner.cancelled.Load() != 0 })
	if partner.done.Load() != 1 || partner.cancelled.Load() != 0 {
		t.Fatalf("partner call after the reply: done %d cancelled %d, want it completed", partner.done.Load(), partner.cancelled.Load())
	}
	if !eventually(func() bool {
		return len(listInstances(t, o, mgmt.Query{Process: "AfterReply", State: mgmt.StateCompleted})) == 1
	}) {
		t.Errorf("the instance did not complete: %+v", listInstances(t, o, mgmt.Query{Process: "AfterReply"}))
	}
}

// deploy.xml's orchd:replyTimeout bounds how long one operation's request
// waits for a reply that a later message would drive.
func TestReplyTimeoutPerOperation(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "Slow", "127.0.0.1:1", replyAfterGo, true)
	dd := filepath.Join(deploy, "Slow", "deploy.xml")
	b, err := os.ReadFile(dd)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), `port="TestPort"/></provide>`,
		`port="TestPort"/><orchd:replyTimeout xmlns:orchd="urn:orchd:deploy" operation="run">PT1S</orchd:replyTimeout></provide>`, 1))
	if err := os.WriteFile(dd, b, 0o644); err != nil {
		t.Fatal(err)
	}
	o := startOrchd(t, "--deploy", deploy)
	r := callRun(t, o.base, "Slow", "S1", "1")
	if r.status != 500 || !strings.Contains(r.body, "reply timeout (1s)") {
		t.Fatalf("status %d body %s, want a fault naming the 1s reply timeout", r.status, r.body)
	}
}

// A message for a running instance that does not wait for it yet (here:
// it is still in a partner call before its receive) is held until the
// receive comes, as ODE's correlator did: a callback may overtake its
// caller. One-way to an in-memory process: acknowledged at once; to a
// persistent one: acknowledged once taken. A message no instance comes
// to take is answered with a Client fault when the hold ends.
func TestMessageHeldUntilReceive(t *testing.T) {
	for _, inMemory := range []bool{true, false} {
		t.Run(fmt.Sprintf("in-memory=%v", inMemory), func(t *testing.T) {
			partner := startSlowPartner(t, 400*time.Millisecond)
			deploy := t.TempDir()
			writeProcess(t, deploy, "Early", partner.addr, `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes">
      <correlations><correlation set="cs" initiate="yes"/></correlations>
    </receive>
    `+initOut+`
    <invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="p1"/>
    <receive partnerLink="client" operation="go" variable="more">
      <correlations><correlation set="cs"/></correlations>
    </receive>
    <assign><copy><from>concat('early ', $more.payload/tns:n)</from><to>$out.payload/tns:a</to></copy></assign>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, inMemory)
			o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir(), "--message-hold", "3s")
			var r response
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				r = callRunAsync(o.base, "Early", "H1", "1")
			}()
			if !eventually(func() bool { return partner.inFlight.Load() > 0 }) {
				t.Fatal("the instance never called its partner")
			}
			client := &http.Client{Timeout: 30 * time.Second}
			g := post(t, client, o.base+"/processes/Early", textXML, `"urn:e2e#go"`, e2eRequest("H1", "9"))
			if g.status != 202 {
				t.Errorf("go during the partner call: status %d body %s", g.status, g.body)
			}
			wg.Wait()
			if r.status != 200 || !strings.Contains(r.body, "early 9") {
				t.Fatalf("run: status %d body %s\n%s", r.status, r.body, o.log())
			}
			held := func(outcome string) string {
				_, m := get(t, o.base+"/metrics")
				return metricWith(m, "orchd_held_messages_total", `outcome="`+outcome+`"`, "Early")
			}
			if v := held("taken"); v != "1" {
				t.Errorf("orchd_held_messages_total taken = %q, want 1 (the early go)", v)
			}
			// Nobody will wait for this one. Persistent: a Client fault
			// after the hold, nothing acknowledged. In-memory one-way: it is
			// acknowledged at once (its instance would live in memory too),
			// then dropped when the hold ends, counted and logged.
			g = post(t, client, o.base+"/processes/Early", textXML, `"urn:e2e#go"`, e2eRequest("nobody", "1"))
			if !inMemory {
				if code, reason := faultCode(t, g.body); code != "Client" || !strings.Contains(reason, "cs=nobody") {
					t.Errorf("unmatched go: status %d %s %q", g.status, code, reason)
				}
			} else if g.status != 202 {
				t.Errorf("unmatched one-way go to an in-memory process: status %d %s, want 202 at once", g.status, g.body)
			}
			waitUntil(t, "the unmatched go's hold to expire", func() bool { return held("expired") == "1" })
			if inMemory && !strings.Contains(o.log(), "held one-way message dropped") {
				t.Errorf("the acknowledged, then dropped one-way message was not logged:\n%s", o.log())
			}
		})
	}
}

// A persistent instance killed while two branches' partner calls are in
// flight (the checkpoint before the second call records the first as
// under way) is recovered: the calls that may have happened follow the
// failure policy (neither is sent again), and orchd keeps serving: a new
// run is answered (it used to dereference the missing answer of the first
// call and crash at recovery). The instance answers its client before the
// flow (early), so that the store holds it before its calls; a new
// instance not answered yet is stored before none (unanswered): the kill
// leaves nothing, and nothing is sent again either.
func TestCrashWithParallelCallsInFlight(t *testing.T) {
	for _, early := range []bool{true, false} {
		name := map[bool]string{true: "answered", false: "unanswered"}[early]
		t.Run(name, func(t *testing.T) {
			partner := startSlowPartner(t, 3*time.Second)
			deploy := t.TempDir()
			replyEarly, replyLate := crashReplies(early)
			writeProcess(t, deploy, "TwoCalls", partner.addr, `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+replyEarly+`
    <flow>
      <invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="p1"/>
      <invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="p2"/>
    </flow>
    `+replyLate+`
  </sequence>`, false)
			data := t.TempDir()
			o := startOrchd(t, "--deploy", deploy, "--data", data)
			runThenCrash(t, o, partner, "TwoCalls", "K1")
			o2 := startOrchd(t, "--deploy", deploy, "--data", data)
			var ins []mgmt.InstanceDetail
			if early && !eventually(func() bool {
				ins = listInstances(t, o2, mgmt.Query{Process: "TwoCalls"})
				return len(ins) == 1 && ins[0].State != "running"
			}) {
				t.Fatalf("after recovery: instances %+v\n%s", ins, o2.log())
			}
			if ins = listInstances(t, o2, mgmt.Query{Process: "TwoCalls"}); !early && len(ins) != 0 {
				t.Fatalf("an unanswered new instance was stored before its calls: %+v", ins)
			}
			if early {
				t.Logf("state after recovery: %s", ins[0].State)
			}
			if strings.Contains(o2.log(), "panic") {
				t.Fatalf("recovery panicked:\n%s", o2.log())
			}
			// Neither call that may have happened was sent again: the partner got
			// the two calls of before the kill, and only those.
			if n := partner.received(); n != 2 {
				t.Errorf("the partner got %d calls, want the 2 made before the kill (none sent again at recovery)", n)
			}
			// And orchd keeps serving: a new run of the same process calls the
			// partner twice and is answered.
			r := callRun(t, o2.base, "TwoCalls", "K2", "1")
			if !eventually(func() bool { return partner.done.Load() == 2 }) || r.status != 200 || partner.received() != 4 {
				t.Errorf("a new run after recovery: status %d (partner got %d calls, answered %d), want 200 and 4, 2:\n%s",
					r.status, partner.received(), partner.done.Load(), r.body)
			}
		})
	}
}

// crashReplies are the replies of the crash tests' processes: before
// their calls (early: the store holds the instance before it calls) or
// after them.
func crashReplies(early bool) (before, after string) {
	reply := `<reply partnerLink="client" operation="run" variable="out"/>`
	if early {
		return reply, ""
	}
	return "", reply
}

// Every branch whose guarded call was in flight at the crash treats its
// call as one that may have happened (here: faultOnFailure, caught), not
// only the first branch to step after recovery (the other used to send
// its call again). The instance answers its client first, so that the
// store holds it before its calls (TestCrashWithParallelCallsInFlight).
func TestCrashRecoveryTreatsEveryCallInFlight(t *testing.T) {
	partner := startSlowPartner(t, 3*time.Second)
	deploy := t.TempDir()
	branch := func(name, out string) string {
		return `<scope>
        <faultHandlers><catch faultName="ext:activityFailure" xmlns:ext="http://ode.apache.org/activityRecovery">` +
			appendA(`'`+name+` failed '`) + `</catch></faultHandlers>
        <invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="` + out + `">
          <ext:failureHandling xmlns:ext="http://ode.apache.org/activityRecovery"><ext:faultOnFailure>true</ext:faultOnFailure></ext:failureHandling>
        </invoke>
      </scope>`
	}
	replyEarly, _ := crashReplies(true)
	writeProcess(t, deploy, "Guarded", partner.addr, `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+replyEarly+`
    <flow>`+branch("A", "p1")+branch("B", "p2")+`</flow>
  </sequence>`, false)
	data := t.TempDir()
	o := startOrchd(t, "--deploy", deploy, "--data", data)
	runThenCrash(t, o, partner, "Guarded", "G1")
	o2 := startOrchd(t, "--deploy", deploy, "--data", data)
	var ins []mgmt.InstanceDetail
	if !eventually(func() bool {
		ins = listInstances(t, o2, mgmt.Query{Process: "Guarded"})
		return len(ins) == 1 && ins[0].State != "running"
	}) {
		t.Fatalf("after recovery: instances %+v\n%s", ins, o2.log())
	}
	if out := ins[0].Variables["out"]; !strings.Contains(out, "A failed") || !strings.Contains(out, "B failed") {
		t.Fatalf("out = %s, want both branches' calls treated as maybe made", out)
	}
}

// runThenCrash starts a run of process name whose two partner calls go
// out together, and kills orchd -9 while both are in flight.
func runThenCrash(t *testing.T, o *orchd, partner *slowPartner, name, id string) {
	t.Helper()
	go func() {
		client := &http.Client{Timeout: 10 * time.Second}
		req, _ := http.NewRequest(http.MethodPost, o.base+"/processes/"+name, strings.NewReader(string(e2eRequest(id, "1"))))
		req.Header.Set("Content-Type", textXML)
		req.Header.Set("SOAPAction", `"urn:e2e#run"`)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	if !eventually(func() bool { return partner.inFlight.Load() == 2 }) {
		t.Fatalf("the two calls were not in flight together (%d)", partner.inFlight.Load())
	}
	kill9(t, o)
}

// A doXslTransform of a stylesheet the bundle lacks deploys with a
// warning naming file and line, and the call raises the standard fault
// bpel:xsltStylesheetNotFound (WS-BPEL 8.4), which a handler catches.
func TestXsltStylesheetNotFound(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "NoXsl", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    <scope>
      <faultHandlers>
        <catch faultName="bpel:xsltStylesheetNotFound" xmlns:bpel="http://docs.oasis-open.org/wsbpel/2.0/process/executable">`+
		`<assign><copy><from>'not found'</from><to>$out.payload/tns:a</to></copy></assign></catch>
      </faultHandlers>
      <assign><copy><from xmlns:bpel="http://docs.oasis-open.org/wsbpel/2.0/process/executable">bpel:doXslTransform('missing.xsl', $in.payload)</from><to variable="p1" part="payload"/></copy></assign>
    </scope>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, true)
	o := startOrchd(t, "--deploy", deploy)
	r := callRun(t, o.base, "NoXsl", "X1", "1")
	if r.status != 200 || !strings.Contains(r.body, "not found") {
		t.Fatalf("status %d body %s\n%s", r.status, r.body, o.log())
	}
	if !strings.Contains(o.log(), "NoXsl.bpel:") || !strings.Contains(o.log(), `stylesheet \"missing.xsl\" is not in the bundle`) {
		t.Errorf("no deploy warning naming the file, line and stylesheet:\n%s", o.log())
	}
}
