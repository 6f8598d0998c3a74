package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beevik/etree"
)

// WS-Addressing end to end: a client's non-anonymous wsa:ReplyTo gets
// its reply as a callback to a listener on loopback; partner calls carry
// wsa:To, wsa:Action, wsa:MessageID and an assigned EPR's reference
// parameters.

const nsWSA = "http://www.w3.org/2005/08/addressing"

// soapRecorder is a listener on loopback that records the SOAP requests
// it gets and answers each with a tns:resp whose a is P-<id> (a request
// without a tns:id, a callback, gets 202).
type soapRecorder struct {
	addr string
	mu   sync.Mutex
	got  []*etree.Document
	raw  []string
}

func startRecorder(t *testing.T) *soapRecorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rec := &soapRecorder{addr: ln.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		doc := etree.NewDocument()
		_ = doc.ReadFromBytes(body)
		rec.mu.Lock()
		rec.got = append(rec.got, doc)
		rec.raw = append(rec.raw, r.Header.Get("SOAPAction")+" "+string(body))
		rec.mu.Unlock()
		id := between(string(body), "id>", "</")
		if id == "" || strings.Contains(string(body), "RelatesTo") {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		_, _ = io.WriteString(w, `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><resp xmlns="urn:e2e"><a>P-`+id+`</a></resp></soapenv:Body></soapenv:Envelope>`)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return rec
}

// count is the number of requests recorded.
func (r *soapRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// last returns the last request recorded and its SOAPAction and body.
func (r *soapRecorder) last() (*etree.Document, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[len(r.got)-1], r.raw[len(r.raw)-1]
}

// soapHeader returns the header block {ns}local of doc, or nil.
func soapHeader(doc *etree.Document, ns, local string) *etree.Element {
	root := doc.Root()
	if root == nil {
		return nil
	}
	for _, h := range root.ChildElements() {
		if h.Tag != "Header" {
			continue
		}
		for _, b := range h.ChildElements() {
			if b.Tag == local && b.NamespaceURI() == ns {
				return b
			}
		}
	}
	return nil
}

// wsaRunRequest is a run request with WS-Addressing headers hdrs.
func wsaRunRequest(id, n, hdrs string) []byte {
	return []byte(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:wsa="` + nsWSA + `"><soapenv:Header>` + hdrs +
		`</soapenv:Header><soapenv:Body><req xmlns="urn:e2e"><id>` + id + `</id><n>` + n + `</n></req></soapenv:Body></soapenv:Envelope>`)
}

// editBundle replaces old with new in file name of bundle dir.
func editBundle(t *testing.T, dir, name, old, new string) {
	t.Helper()
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s has no %s", p, old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWSAReplyToCallback: a request with a non-anonymous wsa:ReplyTo gets
// HTTP 202 at once, and its reply arrives at the ReplyTo listener with
// wsa:RelatesTo = the request's MessageID, wsa:To, wsa:Action and the
// EPR's reference parameter; a ReplyTo the partner address policy
// forbids is never called; a request without WS-Addressing is answered
// on the HTTP response.
func TestWSAReplyToCallback(t *testing.T) {
	allowed, forbidden := startRecorder(t), startRecorder(t)
	deploy := t.TempDir()
	writeProcess(t, deploy, "WsaIn", "127.0.0.1:1", runBody(`
    <assign><copy><from>$in.payload/tns:n</from><to>$out.payload/tns:a</to></copy></assign>`), true)
	o := startOrchd(t, "--deploy", deploy, "--partner-allow", allowed.addr)
	client := &http.Client{Timeout: 30 * time.Second}
	url := o.base + "/processes/WsaIn"
	replyTo := func(addr string) string {
		return `<wsa:MessageID>urn:uuid:req-1</wsa:MessageID><wsa:To soapenv:mustUnderstand="1">` + url + `</wsa:To>` +
			`<wsa:ReplyTo><wsa:Address>http://` + addr + `/callbacks</wsa:Address><wsa:ReferenceParameters>` +
			`<c:conv xmlns:c="urn:e2e:conv">C-7</c:conv></wsa:ReferenceParameters></wsa:ReplyTo>`
	}

	r := post(t, client, url, textXML, `"urn:e2e#run"`, wsaRunRequest("W1", "hello", replyTo(allowed.addr)))
	if r.status != http.StatusAccepted || r.body != "" {
		t.Fatalf("status %d body %q, want 202 and no body\n%s", r.status, r.body, o.log())
	}
	if !eventually(func() bool { return allowed.count() == 1 }) {
		t.Fatalf("no callback at the ReplyTo address\n%s", o.log())
	}
	doc, raw := allowed.last()
	for local, want := range map[string]string{"RelatesTo": "urn:uuid:req-1", "To": "http://" + allowed.addr + "/callbacks", "Action": "urn:e2e:TestPT:runResponse"} {
		if h := soapHeader(doc, nsWSA, local); h == nil || h.Text() != want {
			t.Errorf("callback's wsa:%s, want %q:\n%s", local, want, raw)
		}
	}
	conv := soapHeader(doc, "urn:e2e:conv", "conv")
	if conv == nil || conv.Text() != "C-7" || conv.SelectAttrValue("wsa:IsReferenceParameter", "") != "true" {
		t.Errorf("callback without the reference parameter marked IsReferenceParameter:\n%s", raw)
	}
	if !strings.Contains(raw, ">hello</tns:a>") || !strings.HasPrefix(raw, `"urn:e2e:TestPT:runResponse" `) {
		t.Errorf("callback is not the reply with its action:\n%s", raw)
	}

	r = post(t, client, url, textXML, `"urn:e2e#run"`, wsaRunRequest("W2", "x", replyTo(forbidden.addr)))
	if r.status != http.StatusAccepted {
		t.Fatalf("forbidden ReplyTo: status %d body %s", r.status, r.body)
	}
	if !eventually(func() bool { return strings.Contains(o.log(), "callback failed") }) {
		t.Fatalf("no log of the refused callback\n%s", o.log())
	}
	if forbidden.count() != 0 || !strings.Contains(o.log(), "not allowed") {
		t.Errorf("forbidden ReplyTo called %d times, or refused for another reason\n%s", forbidden.count(), o.log())
	}

	r = post(t, client, url, textXML, `"urn:e2e#run"`, e2eRequest("W3", "plain"))
	if r.status != http.StatusOK || !strings.Contains(r.body, ">plain</tns:a>") || strings.Contains(r.body, "addressing") {
		t.Errorf("no WS-Addressing: status %d body %s, want the reply as before", r.status, r.body)
	}
}

// TestWSAPartnerCalls: a partner whose binding says wsaw:UsingAddressing,
// or whose <invoke> in deploy.xml has orchd:addressing, gets wsa:To,
// wsa:Action (the binding's soapAction) and a wsa:MessageID; an EPR
// assigned to the partner link sends its reference parameters as header
// blocks; a partner without either gets no header at all, as before.
func TestWSAPartnerCalls(t *testing.T) {
	partner := startRecorder(t)
	deploy := t.TempDir()
	writeProcess(t, deploy, "WsaBind", partner.addr, runBody(invokeInto), true)
	editBundle(t, filepath.Join(deploy, "WsaBind"), "e2e.wsdl", `<wsdl:binding name="PartnerBinding" type="tns:PartnerPT">`,
		`<wsdl:binding name="PartnerBinding" type="tns:PartnerPT"><wsaw:UsingAddressing xmlns:wsaw="http://www.w3.org/2006/05/addressing/wsdl"/>`)
	writeProcess(t, deploy, "WsaDD", partner.addr, runBody(invokeInto), true)
	editBundle(t, filepath.Join(deploy, "WsaDD"), "deploy.xml", `<service name="tns:PartnerService" port="PartnerPort"/></invoke>`,
		`<service name="tns:PartnerService" port="PartnerPort"/><orchd:addressing xmlns:orchd="urn:orchd:deploy"/></invoke>`)
	writeProcess(t, deploy, "WsaEpr", "127.0.0.1:1", runBody(`
    <assign><copy><from>$in.payload/tns:n</from><to partnerLink="partner"/></copy></assign>
    `+invokeInto), true)
	writeProcess(t, deploy, "WsaNone", partner.addr, runBody(invokeInto), true)
	o := startOrchd(t, "--deploy", deploy, "--partner-allow", partner.addr)
	client := &http.Client{Timeout: 30 * time.Second}
	partnerURL := "http://" + partner.addr + "/partner"

	for _, name := range []string{"WsaBind", "WsaDD"} {
		r := callRun(t, o.base, name, "B-"+name, "1")
		if r.status != http.StatusOK || !strings.Contains(r.body, "P-B-"+name) {
			t.Fatalf("%s: status %d body %s\n%s", name, r.status, r.body, o.log())
		}
		doc, raw := partner.last()
		for local, want := range map[string]string{"To": partnerURL, "Action": "urn:e2e#call"} {
			if h := soapHeader(doc, nsWSA, local); h == nil || h.Text() != want {
				t.Errorf("%s: partner's wsa:%s, want %q:\n%s", name, local, want, raw)
			}
		}
		if h := soapHeader(doc, nsWSA, "MessageID"); h == nil || !strings.HasPrefix(h.Text(), "urn:uuid:") {
			t.Errorf("%s: partner got no wsa:MessageID:\n%s", name, raw)
		}
	}

	epr := `<wsa:EndpointReference xmlns:wsa="` + nsWSA + `"><wsa:Address>` + partnerURL + `</wsa:Address>` +
		`<wsa:ReferenceParameters><s:session xmlns:s="urn:e2e:session">S-42</s:session><s:shard xmlns:s="urn:e2e:session">3</s:shard></wsa:ReferenceParameters></wsa:EndpointReference>`
	r := post(t, client, o.base+"/processes/WsaEpr", textXML, `"urn:e2e#run"`, eprRequest("E1", epr))
	if r.status != http.StatusOK || !strings.Contains(r.body, "P-E1") {
		t.Fatalf("WsaEpr: status %d body %s\n%s", r.status, r.body, o.log())
	}
	doc, raw := partner.last()
	for local, want := range map[string]string{"session": "S-42", "shard": "3"} {
		h := soapHeader(doc, "urn:e2e:session", local)
		if h == nil || h.Text() != want || h.SelectAttrValue("wsa:IsReferenceParameter", "") != "true" {
			t.Errorf("WsaEpr: reference parameter %s not sent as a marked header block:\n%s", local, raw)
		}
	}
	if h := soapHeader(doc, nsWSA, "To"); h == nil || h.Text() != partnerURL {
		t.Errorf("WsaEpr: wsa:To, want %s:\n%s", partnerURL, raw)
	}

	r = callRun(t, o.base, "WsaNone", "N1", "1")
	if r.status != http.StatusOK {
		t.Fatalf("WsaNone: status %d body %s", r.status, r.body)
	}
	if _, raw := partner.last(); strings.Contains(raw, "Header") || strings.Contains(raw, "addressing") {
		t.Errorf("a partner without WS-Addressing got headers:\n%s", raw)
	}
}

// sessionBPEL calls the partner over the client link's partner role and
// waits for the partner's callback (go) with no correlation set.
const sessionBPEL = `<?xml version="1.0" encoding="UTF-8"?>
<process name="WsaSession" targetNamespace="urn:e2e:process"
    xmlns="http://docs.oasis-open.org/wsbpel/2.0/process/executable" xmlns:tns="urn:e2e">
  <import importType="http://schemas.xmlsoap.org/wsdl/" location="e2e.wsdl" namespace="urn:e2e"/>
  <partnerLinks>
    <partnerLink name="client" partnerLinkType="tns:BothLT" myRole="provider" partnerRole="partner"/>
  </partnerLinks>
  <variables>
    <variable name="in" messageType="tns:req"/>
    <variable name="more" messageType="tns:req"/>
    <variable name="out" messageType="tns:resp"/>
    <variable name="p1" messageType="tns:resp"/>
  </variables>
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    <invoke partnerLink="client" operation="call" inputVariable="in" outputVariable="p1"/>
    <receive partnerLink="client" operation="go" variable="more"/>
    ` + initOut + `
    <assign><copy><from>$more.payload/tns:n</from><to>$out.payload/tns:a</to></copy></assign>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>
</process>
`

// writeSessionBundle writes process name (its BPEL bpel) into deploy: a
// client link with both roles (BothLT), whose partner role, at
// partnerAddr, speaks WS-Addressing. It returns the bundle's folder.
func writeSessionBundle(t *testing.T, deploy, name, bpel, partnerAddr string) string {
	t.Helper()
	writeProcess(t, deploy, name, partnerAddr, "", true)
	dir := filepath.Join(deploy, name)
	if err := os.WriteFile(filepath.Join(dir, name+".bpel"), []byte(bpel), 0o644); err != nil {
		t.Fatal(err)
	}
	editBundle(t, dir, "e2e.wsdl", `<plnk:partnerLinkType name="TestLT">`,
		`<plnk:partnerLinkType name="BothLT"><plnk:role name="provider" portType="tns:TestPT"/><plnk:role name="partner" portType="tns:PartnerPT"/></plnk:partnerLinkType><plnk:partnerLinkType name="TestLT">`)
	editBundle(t, dir, "deploy.xml", `<invoke partnerLink="partner"><service name="tns:PartnerService" port="PartnerPort"/></invoke>`,
		`<invoke partnerLink="client"><service name="tns:PartnerService" port="PartnerPort"/><orchd:addressing xmlns:orchd="urn:orchd:deploy"/></invoke>`)
	return dir
}

// TestWSASessionCallback: ODE's implicit correlation by session. Two
// instances call a WS-Addressing partner over a link that has both
// roles; each call carries ODE's callback header with the process's
// address and a session identifier; the partner's callbacks, sent in the
// other order with those identifiers as odesession:session header
// blocks, each reach their own instance, which no correlation set could
// tell apart.
func TestWSASessionCallback(t *testing.T) {
	partner := startRecorder(t)
	deploy := t.TempDir()
	writeSessionBundle(t, deploy, "WsaSession", sessionBPEL, partner.addr)
	o := startOrchd(t, "--deploy", deploy)
	url := o.base + "/processes/WsaSession"

	type answer struct {
		id string
		r  response
	}
	replies := make(chan answer, 2)
	for _, id := range []string{"A", "B"} {
		go func() { replies <- answer{id, callRunAsync(o.base, "WsaSession", id, "0")} }()
		if !eventually(func() bool { return partner.count() == map[string]int{"A": 1, "B": 2}[id] }) {
			t.Fatalf("the partner got no call for %s\n%s", id, o.log())
		}
	}
	sessions := map[string]string{} // id -> the session its call carried
	partner.mu.Lock()
	for i, doc := range partner.got {
		cb := soapHeader(doc, "http://www.apache.org/ode/type/session", "callback")
		if cb == nil || cb.FindElement("Address") == nil || cb.FindElement("Address").Text() != url || cb.FindElement("session") == nil {
			t.Errorf("call %d has no ODE callback header with the process's address:\n%s", i, partner.raw[i])
			continue
		}
		if soapHeader(doc, "http://www.intalio.com/type/session", "callback") == nil {
			t.Errorf("call %d has no Intalio callback header:\n%s", i, partner.raw[i])
		}
		sessions[between(partner.raw[i], "<id>", "</id>")] = cb.FindElement("session").Text()
	}
	partner.mu.Unlock()
	if len(sessions) != 2 || sessions["A"] == sessions["B"] {
		t.Fatalf("sessions %v, want two different ones", sessions)
	}
	for _, id := range []string{"B", "A"} {
		if r := sessionCallback(t, url, sessions[id], "for-"+id); r.status != http.StatusAccepted {
			t.Fatalf("callback for %s: status %d body %s", id, r.status, r.body)
		}
	}
	for range 2 {
		a := <-replies
		if got := between(a.r.body, "<tns:a>", "</tns:a>"); a.r.status != http.StatusOK || got != "for-"+a.id {
			t.Errorf("run %s: status %d, reply %q, want for-%s (its own callback):\n%s", a.id, a.r.status, got, a.id, a.r.body)
		}
	}
}

// TestWSAReferenceParamsSurviveRestart: the reference parameters of an
// EPR a persistent instance assigned are in its checkpoint: the invoke
// after orchd was killed and started again still sends them.
func TestWSAReferenceParamsSurviveRestart(t *testing.T) {
	partner := startRecorder(t)
	deploy := t.TempDir()
	writeProcess(t, deploy, "WsaRestart", "127.0.0.1:1", `
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
	o := startOrchd(t, "--deploy", deploy, "--data", data, "--partner-allow", partner.addr)
	epr := `<wsa:EndpointReference xmlns:wsa="` + nsWSA + `"><wsa:Address>http://` + partner.addr + `/partner</wsa:Address>` +
		`<wsa:ReferenceParameters><s:session xmlns:s="urn:e2e:session">S-R1</s:session></wsa:ReferenceParameters></wsa:EndpointReference>`
	if r := post(t, client, o.base+"/processes/WsaRestart", textXML, `"urn:e2e#run"`, eprRequest("R1", epr)); r.status != 200 {
		t.Fatalf("run: status %d body %s", r.status, r.body)
	}
	kill9(t, o)
	o2 := startOrchd(t, "--deploy", deploy, "--data", data, "--partner-allow", partner.addr)
	if g := post(t, client, o2.base+"/processes/WsaRestart", textXML, `"urn:e2e#go"`, e2eRequest("R1", "2")); g.status != 202 {
		t.Fatalf("go: status %d body %s", g.status, g.body)
	}
	if !eventually(func() bool { return partner.count() == 1 }) {
		t.Fatalf("the assigned partner was not called after the restart\n%s", o2.log())
	}
	doc, raw := partner.last()
	if h := soapHeader(doc, "urn:e2e:session", "session"); h == nil || h.Text() != "S-R1" {
		t.Errorf("the call after the restart lost the reference parameter:\n%s", raw)
	}
}

// TestWSASessionForeignCallback: a callback carrying a session
// identifier its instance never handed out (another instance's, a stale
// or a made-up one) is held for that session and never given to the
// instance that waits at the same correlation-less receive under its own
// session: the instance takes the callback with its token.
func TestWSASessionForeignCallback(t *testing.T) {
	partner := startRecorder(t)
	deploy := t.TempDir()
	writeSessionBundle(t, deploy, "WsaSession", sessionBPEL, partner.addr)
	o := startOrchd(t, "--deploy", deploy)
	url := o.base + "/processes/WsaSession"
	reply := make(chan response, 1)
	go func() { reply <- callRunAsync(o.base, "WsaSession", "A", "0") }()
	if !eventually(func() bool { return partner.count() == 1 }) {
		t.Fatalf("the partner got no call\n%s", o.log())
	}
	partner.mu.Lock()
	cb := soapHeader(partner.got[0], "http://www.apache.org/ode/type/session", "callback")
	partner.mu.Unlock()
	if cb == nil || cb.FindElement("session") == nil {
		t.Fatal("the call carries no ODE session")
	}
	callback := func(session, n string) {
		if r := sessionCallback(t, url, session, n); r.status != http.StatusAccepted {
			t.Fatalf("callback %s: status %d body %s", n, r.status, r.body)
		}
	}
	callback("0123456789abcdef0123456789abcdef", "foreign")
	callback(cb.FindElement("session").Text(), "own")
	r := <-reply
	if got := between(r.body, "<tns:a>", "</tns:a>"); r.status != http.StatusOK || got != "own" {
		t.Errorf("status %d, reply %q, want own (a callback for another session must not reach it):\n%s", r.status, got, r.body)
	}
}
