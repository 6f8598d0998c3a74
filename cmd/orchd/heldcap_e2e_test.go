package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// heldBody is a process whose go waits for run's instance (correlation
// set cs): a go under a key no instance has is held (--message-hold).
const heldBody = `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes">
      <correlations><correlation set="cs" initiate="yes"/></correlations>
    </receive>
    ` + initOut + `
    <receive partnerLink="client" operation="go" variable="more">
      <correlations><correlation set="cs"/></correlations>
    </receive>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`

// TestMessageHoldMax fills --message-hold-max (3) with held messages: two
// one-way messages to an in-memory process (acknowledged while held) and
// one to a persistent process, whose sender waits. The next message that
// would be held is refused at once with a Server fault (HTTP 503) naming
// the limit, not held (the gauge stays at 3) and counted as
// orchd_held_messages_total{outcome="refused"}. When the waiting sender
// gives up, its place is free and a message is held again. The hold (a
// minute) outlasts the test: no place frees itself meanwhile.
func TestMessageHoldMax(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "HeldMem", deadAddr(t), heldBody, true)
	writeProcess(t, deploy, "HeldStored", deadAddr(t), heldBody, false)
	o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir(), "--message-hold", "1m", "--message-hold-max", "3")
	client := &http.Client{Timeout: 30 * time.Second}
	send := func(process, id string) response {
		return post(t, client, o.base+"/processes/"+process, textXML, `"urn:e2e#go"`, e2eRequest(id, "1"))
	}
	metric := func(name string, labels ...string) string {
		_, m := get(t, o.base+"/metrics")
		return metricWith(m, name, labels...)
	}
	heldNow := func() string {
		_, m := get(t, o.base+"/metrics")
		return metricValue(t, m, "orchd_held_messages")
	}

	for _, id := range []string{"M1", "M2"} {
		if r := send("HeldMem", id); r.status != 202 {
			t.Fatalf("one-way go %s to the in-memory process under the limit: status %d %s, want 202", id, r.status, r.body)
		}
	}
	// The persistent process's go is answered once taken: its sender waits.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waited := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.base+"/processes/HeldStored", bytes.NewReader(e2eRequest("S1", "1")))
		if err == nil {
			req.Header.Set("Content-Type", textXML)
			req.Header.Set("SOAPAction", `"urn:e2e#go"`)
			var resp *http.Response
			if resp, err = http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		waited <- err
	}()
	waitUntil(t, "three messages held", func() bool { return heldNow() == "3" })

	r := send("HeldMem", "M3")
	code, reason := faultCode(t, r.body)
	if r.status != 503 || code != "Server" || !strings.Contains(reason, "limit of 3 held messages") || !strings.Contains(reason, "cs=M3") {
		t.Errorf("go over --message-hold-max: status %d %s %q, want 503, a Server fault naming the limit and the correlation", r.status, code, reason)
	}
	if v := metric("orchd_held_messages_total", `outcome="refused"`, `process="HeldMem"`); v != "1" {
		t.Errorf(`orchd_held_messages_total{process="HeldMem",outcome="refused"} = %q, want 1`, v)
	}
	if v := heldNow(); v != "3" {
		t.Errorf("orchd_held_messages = %s after the refusal, want 3: the refused message was held", v)
	}
	// The persistent one is refused alike: the bound is over all processes.
	if r := send("HeldStored", "S2"); r.status != 503 {
		t.Errorf("go to the persistent process at the limit: status %d %s, want 503", r.status, r.body)
	}

	// The waiting sender gives up: its message is no longer held.
	cancel()
	if err := <-waited; err == nil {
		t.Error("the held persistent go was answered while no instance could take it")
	}
	waitUntil(t, "the abandoned message to leave the hold", func() bool { return heldNow() == "2" })
	if r := send("HeldMem", "M4"); r.status != 202 {
		t.Errorf("go once a place is free: status %d %s, want 202", r.status, r.body)
	}
	if v := metric("orchd_held_messages_total", `outcome="refused"`); v != "1" {
		t.Errorf("refused (first series) = %q, want 1", v)
	}
	if v := metric("orchd_held_messages_total", `outcome="refused"`, `process="HeldStored"`); v != "1" {
		t.Errorf(`orchd_held_messages_total{process="HeldStored",outcome="refused"} = %q, want 1`, v)
	}
}
