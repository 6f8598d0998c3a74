package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/admin"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/mgmtclient"
)

// replyToBPEL calls its partner twice over a link that has both roles:
// a request-response call, then a one-way ask, after which it waits
// for a callback (go) routed by no correlation set.
const replyToBPEL = `<?xml version="1.0" encoding="UTF-8"?>
<process name="WsaReplyTo" targetNamespace="urn:e2e:process"
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
    <invoke partnerLink="client" operation="ask" inputVariable="in"/>
    <receive partnerLink="client" operation="go" variable="more"/>
    ` + initOut + `
    <assign><copy><from>$more.payload/tns:n</from><to>$out.payload/tns:a</to></copy></assign>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>
</process>
`

// TestWSAReplyToOnCalls: a process that waits for a callback on a
// partner link calls its WS-Addressing partner one way with a
// wsa:ReplyTo holding the process's own address and, as a reference
// parameter, the instance's session; its request-response call carries
// no ReplyTo (its reply is the HTTP response). The partner calls back
// as WS-Addressing says, at the ReplyTo address with its reference
// parameters as header blocks, for two instances in the other order:
// each callback reaches its own instance by the reference parameter
// alone. Both modes: a persistent process's one-way call leaves from
// the outbox after its checkpoint, with the same ReplyTo.
func TestWSAReplyToOnCalls(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) { testWSAReplyToOnCalls(t, m.inMemory) })
	}
}

func testWSAReplyToOnCalls(t *testing.T, inMemory bool) {
	partner := startRecorder(t)
	deploy := t.TempDir()
	dir := writeSessionBundle(t, deploy, "WsaReplyTo", replyToBPEL, partner.addr)
	editBundle(t, dir, "e2e.wsdl", `<wsdl:portType name="PartnerPT">`,
		`<wsdl:portType name="PartnerPT"><wsdl:operation name="ask"><wsdl:input message="tns:req"/></wsdl:operation>`)
	editBundle(t, dir, "e2e.wsdl", `<wsdl:binding name="PartnerBinding" type="tns:PartnerPT">`,
		`<wsdl:binding name="PartnerBinding" type="tns:PartnerPT"><wsdl:operation name="ask"><soap:operation soapAction="urn:e2e#ask"/><wsdl:input><soap:body use="literal"/></wsdl:input></wsdl:operation>`)
	args := []string{"--deploy", deploy}
	if !inMemory {
		// Its one-way ask then goes through the outbox (after the
		// checkpoint), which must send the same ReplyTo.
		editBundle(t, dir, "deploy.xml", "<in-memory>true</in-memory>", "<in-memory>false</in-memory>")
		args = append(args, "--data", t.TempDir())
	}
	o := startOrchd(t, args...)
	url := o.base + "/processes/WsaReplyTo"

	type answer struct {
		id string
		r  response
	}
	replies := make(chan answer, 2)
	for _, id := range []string{"A", "B"} {
		go func() { replies <- answer{id, callRunAsync(o.base, "WsaReplyTo", id, "0")} }()
		if !eventually(func() bool { return partner.count() == map[string]int{"A": 2, "B": 4}[id] }) {
			t.Fatalf("the partner did not get both calls of %s\n%s", id, o.log())
		}
	}
	type epr struct{ address, params string }
	eprs := map[string]epr{} // id -> the ReplyTo of its ask
	partner.mu.Lock()
	for i, doc := range partner.got {
		raw := partner.raw[i]
		rt := soapHeader(doc, nsWSA, "ReplyTo")
		if strings.HasPrefix(raw, `"urn:e2e#call"`) {
			if rt != nil {
				t.Errorf("request-response call %d carries a wsa:ReplyTo (its reply would leave the HTTP response):\n%s", i, raw)
			}
			continue
		}
		if rt == nil || rt.FindElement("Address") == nil || rt.FindElement("ReferenceParameters") == nil {
			t.Errorf("one-way call %d has no wsa:ReplyTo with an address and reference parameters:\n%s", i, raw)
			continue
		}
		if got := rt.FindElement("Address").Text(); got != url {
			t.Errorf("ReplyTo address %q, want the process's %q", got, url)
		}
		sess := rt.FindElement("ReferenceParameters/session")
		if sess == nil || sess.NamespaceURI() != "http://www.apache.org/ode/type/session" {
			t.Errorf("ReplyTo reference parameters hold no odesession:session:\n%s", raw)
			continue
		}
		d := etreeString(t, sess)
		eprs[between(raw, "<id>", "</id>")] = epr{rt.FindElement("Address").Text(), d}
	}
	partner.mu.Unlock()
	if len(eprs) != 2 || eprs["A"].params == eprs["B"].params {
		t.Fatalf("ReplyTo EPRs %v, want two with different sessions", eprs)
	}
	// Both wait at the callback's receive (the one-way ask returned
	// before they got there); a callback sooner would find its instance
	// not waiting yet, and go to whichever does.
	if !eventually(func() bool { return waitingInstances(t, o, "WsaReplyTo") == 2 }) {
		t.Fatalf("the instances do not both wait for their callbacks\n%s", o.log())
	}
	client := &http.Client{Timeout: 30 * time.Second}
	for _, id := range []string{"B", "A"} {
		// What a WS-Addressing partner sends to a ReplyTo EPR: its
		// reference parameters as header blocks, marked as such.
		param := strings.Replace(eprs[id].params, "<odesession:session ", `<odesession:session xmlns:wsa="`+nsWSA+`" wsa:IsReferenceParameter="true" `, 1)
		body := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Header>` +
			`<wsa:To xmlns:wsa="` + nsWSA + `">` + eprs[id].address + `</wsa:To>` + param +
			`</soapenv:Header><soapenv:Body><req xmlns="urn:e2e"><id>cb</id><n>for-` + id + `</n></req></soapenv:Body></soapenv:Envelope>`
		if r := post(t, client, eprs[id].address, textXML, `"urn:e2e#go"`, []byte(body)); r.status != http.StatusAccepted {
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

// waitingInstances is the number of instances of process, in memory
// or stored, that the management API lists as waiting.
func waitingInstances(t *testing.T, o *orchd, process string) int {
	t.Helper()
	c, err := mgmtclient.New(o.base, mgmtclient.Options{HTTP: &http.Client{Timeout: 30 * time.Second}, Token: adminToken})
	if err != nil {
		t.Fatal(err)
	}
	var page mgmt.Page
	if err := c.Get(context.Background(), "/instances", admin.Values(mgmt.Query{Process: process, State: mgmt.StateWaiting}), &page); err != nil {
		t.Fatal(err)
	}
	return len(page.Instances)
}

// etreeString is el serialized, with its namespace declarations.
func etreeString(t *testing.T, el *etree.Element) string {
	t.Helper()
	doc := etree.NewDocument()
	doc.SetRoot(el.Copy())
	s, err := doc.WriteToString()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
