package main

import (
	"context"
	"net/http"
	"regexp"
	"slices"
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
