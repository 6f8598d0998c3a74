package main

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/admin"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/mgmtclient"
)

// waitingIDs are the ids of the instances of process the management API
// lists as waiting.
func waitingIDs(t *testing.T, o *orchd, process string) []string {
	t.Helper()
	c, err := mgmtclient.New(o.base, mgmtclient.Options{HTTP: &http.Client{Timeout: 30 * time.Second}, Token: adminToken})
	if err != nil {
		t.Fatal(err)
	}
	var page mgmt.Page
	if err := c.Get(context.Background(), "/instances", admin.Values(mgmt.Query{Process: process, State: mgmt.StateWaiting}), &page); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(page.Instances))
	for _, in := range page.Instances {
		ids = append(ids, in.ID)
	}
	return ids
}

// sessionCallback posts the partner's callback go with n, carrying
// session as ODE's odesession:session header block.
func sessionCallback(t *testing.T, url, session, n string) response {
	t.Helper()
	body := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Header>` +
		`<odesession:session xmlns:odesession="http://www.apache.org/ode/type/session">` + session + `</odesession:session>` +
		`</soapenv:Header><soapenv:Body><req xmlns="urn:e2e"><id>cb</id><n>` + n + `</n></req></soapenv:Body></soapenv:Envelope>`
	return post(t, &http.Client{Timeout: 30 * time.Second}, url, textXML, `"urn:e2e#go"`, []byte(body))
}

// sessionToken is what a session identifier orchd mints looks like: 128
// random bits in hex.
var sessionToken = regexp.MustCompile(`^[0-9a-f]{32}$`)

// TestWSASessionUnguessable: the session identifier of ODE's implicit
// correlation is a random token, not the instance id: of two instances
// waiting at a receive without correlation set, a callback carrying the
// first one's instance id (what a client could guess: in memory it is
// "m" and a counter) does not reach it; one carrying the token its
// partner call carried does. Both modes: in a persistent process the
// token is kept in the instance's frames, and each waiting instance is
// stored under its own session key (two of them can wait at once).
func TestWSASessionUnguessable(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			partner := startRecorder(t)
			deploy := t.TempDir()
			dir := writeSessionBundle(t, deploy, "WsaSession", sessionBPEL, partner.addr)
			if !m.inMemory {
				editBundle(t, dir, "deploy.xml", "<in-memory>true</in-memory>", "<in-memory>false</in-memory>")
			}
			args := []string{"--deploy", deploy, "--admin-token-file", tokenFile(t, adminToken)}
			if !m.inMemory {
				args = append(args, "--data", t.TempDir())
			}
			o := startOrchd(t, args...)
			url := o.base + "/processes/WsaSession"

			type answer struct {
				id string
				r  response
			}
			replies := make(chan answer, 2)
			var first string // instance id of A
			for i, id := range []string{"A", "B"} {
				go func() { replies <- answer{id, callRunAsync(o.base, "WsaSession", id, "0")} }()
				var ids []string
				if !eventually(func() bool { ids = waitingIDs(t, o, "WsaSession"); return len(ids) == i+1 }) {
					t.Fatalf("%s does not wait for its callback (waiting: %v)\n%s", id, ids, o.log())
				}
				if i == 0 {
					first = ids[0]
				}
			}
			sessions := map[string]string{}
			partner.mu.Lock()
			for i, doc := range partner.got {
				cb := soapHeader(doc, "http://www.apache.org/ode/type/session", "callback")
				if cb == nil || cb.FindElement("session") == nil {
					t.Fatalf("call %d has no session:\n%s", i, partner.raw[i])
				}
				sessions[between(partner.raw[i], "<id>", "</id>")] = cb.FindElement("session").Text()
			}
			partner.mu.Unlock()
			for id, s := range sessions {
				if !sessionToken.MatchString(s) || s == first {
					t.Errorf("session of %s is %q, want a random 128-bit token (instance id of A: %s)", id, s, first)
				}
			}
			if len(sessions) != 2 || sessions["A"] == sessions["B"] {
				t.Fatalf("sessions %v, want two different ones", sessions)
			}

			// The guess reaches no instance by its session; in memory the
			// correlation-less route may still give it to the instance
			// that waits there last (B), never by A's id.
			guess := sessionCallback(t, url, first, "guess")
			t.Logf("callback with A's instance id: status %d", guess.status)
			if r := sessionCallback(t, url, sessions["A"], "for-A"); r.status != http.StatusAccepted {
				t.Fatalf("callback for A: status %d body %s\n%s", r.status, r.body, o.log())
			}
			got := map[string]string{}
			a := <-replies
			got[a.id] = between(a.r.body, "<tns:a>", "</tns:a>")
			if a.id == "A" && slices.Contains(waitingIDs(t, o, "WsaSession"), first) {
				t.Fatalf("A answered and waits still")
			}
			if a.id == "B" {
				if got["B"] != "guess" {
					t.Fatalf("B answered %q before A\n%s", got["B"], a.r.body)
				}
			} else if len(waitingIDs(t, o, "WsaSession")) == 1 {
				if r := sessionCallback(t, url, sessions["B"], "for-B"); r.status != http.StatusAccepted {
					t.Fatalf("callback for B: status %d body %s\n%s", r.status, r.body, o.log())
				}
			}
			b := <-replies
			got[b.id] = between(b.r.body, "<tns:a>", "</tns:a>")
			if got["A"] != "for-A" {
				t.Errorf("A answered %q, want for-A (the callback with its token; the one with its instance id must not reach it)\n%s", got["A"], o.log())
			}
			if got["B"] != "for-B" && got["B"] != "guess" {
				t.Errorf("B answered %q\n%s", got["B"], o.log())
			}
		})
	}
}

// sessionRestartBPEL answers its client at once, then waits for the
// partner's callback (go) with no correlation set and calls the partner
// again.
const sessionRestartBPEL = `<?xml version="1.0" encoding="UTF-8"?>
<process name="WsaSessionRestart" targetNamespace="urn:e2e:process"
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
    ` + initOut + `
    <reply partnerLink="client" operation="run" variable="out"/>
    <receive partnerLink="client" operation="go" variable="more"/>
    <invoke partnerLink="client" operation="call" inputVariable="more" outputVariable="p1"/>
  </sequence>
</process>
`

// TestWSASessionSurvivesRestart: two persistent instances wait for
// their callbacks without correlation set; orchd is killed and started
// again; each callback, carrying the token its instance's first call
// carried, reaches that instance, whose next call carries the same
// token (kept in its frames, not minted anew).
func TestWSASessionSurvivesRestart(t *testing.T) {
	partner := startRecorder(t)
	deploy, data := t.TempDir(), t.TempDir()
	dir := writeSessionBundle(t, deploy, "WsaSessionRestart", sessionRestartBPEL, partner.addr)
	editBundle(t, dir, "deploy.xml", "<in-memory>true</in-memory>", "<in-memory>false</in-memory>")
	o := startOrchd(t, "--deploy", deploy, "--data", data)
	for _, id := range []string{"A", "B"} {
		if r := callRun(t, o.base, "WsaSessionRestart", id, "0"); r.status != http.StatusOK {
			t.Fatalf("run %s: status %d body %s\n%s", id, r.status, r.body, o.log())
		}
	}
	session := func(i int) (id, s string) {
		partner.mu.Lock()
		defer partner.mu.Unlock()
		cb := soapHeader(partner.got[i], "http://www.apache.org/ode/type/session", "callback")
		if cb == nil || cb.FindElement("session") == nil {
			t.Fatalf("call %d has no session:\n%s", i, partner.raw[i])
		}
		return between(partner.raw[i], "<id>", "</id>"), cb.FindElement("session").Text()
	}
	sessions := map[string]string{}
	for i := range 2 {
		id, s := session(i)
		sessions[id] = s
	}
	if len(sessions) != 2 || sessions["A"] == sessions["B"] || !sessionToken.MatchString(sessions["A"]) {
		t.Fatalf("sessions %v, want two different tokens", sessions)
	}
	kill9(t, o)
	o = startOrchd(t, "--deploy", deploy, "--data", data)
	url := o.base + "/processes/WsaSessionRestart"
	for i, id := range []string{"B", "A"} {
		if r := sessionCallback(t, url, sessions[id], "after-"+id); r.status != http.StatusAccepted {
			t.Fatalf("callback for %s: status %d body %s\n%s", id, r.status, r.body, o.log())
		}
		if !eventually(func() bool { return partner.count() == 3+i }) {
			t.Fatalf("instance %s made no call after its callback\n%s", id, o.log())
		}
		_, raw := partner.last()
		if _, s := session(2 + i); s != sessions[id] || !strings.Contains(raw, ">after-"+id+"<") {
			t.Errorf("the call after %s's callback carries session %q (want %q) or another's data:\n%s", id, s, sessions[id], raw)
		}
	}
}
