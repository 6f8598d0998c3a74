package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
)

// Event handlers (WS-BPEL 2.0 section 12.7) on scopes and on the process,
// end to end: real orchd, real SOAP over loopback.

// startRun posts run in the background; the returned func waits for its
// answer (status 0, the error as body, if there was none).
func startRun(t *testing.T, base, name, id, n string) func() response {
	t.Helper()
	var r response
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r = callRunAsync(base, name, id, n)
	}()
	return func() response {
		wg.Wait()
		return r
	}
}

// postGo sends the one-way go, retrying until an instance takes it.
func postGo(t *testing.T, base, name, id, n string) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	var g response
	eventually(func() bool {
		g = post(t, client, base+"/processes/"+name, textXML, `"urn:e2e#go"`, e2eRequest(id, n))
		return g.status == 202
	})
	if g.status != 202 {
		t.Fatalf("go %s/%s: status %d body %s", id, n, g.status, g.body)
	}
}

// runWithEvents starts an instance with run (correlated on id), sends it
// go with each of ns, and returns the a of the reply to run.
func runWithEvents(t *testing.T, o *orchd, name, id string, ns ...string) string {
	t.Helper()
	run := startRun(t, o.base, name, id, "1")
	time.Sleep(200 * time.Millisecond)
	for _, n := range ns {
		postGo(t, o.base, name, id, n)
	}
	r := run()
	if r.status != 200 {
		t.Fatalf("run: status %d body %s\n%s", r.status, r.body, o.log())
	}
	return between(r.body, "<tns:a>", "</tns:a>")
}

// eventBody: after answering "started", the main activity waits for go
// while an onEvent on run answers each further run of the instance from
// its own handler instance: its event variable ev and its scope variable
// r are its own, and it calls the partner between reading ev and
// replying, so two events overlap (the partner sees both calls at once).
const eventBody = `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes">
      <correlations><correlation set="cs" initiate="yes"/></correlations>
    </receive>
    ` + initOut + `
    <assign><copy><from>'started'</from><to>$out.payload/tns:a</to></copy></assign>
    <reply partnerLink="client" operation="run" variable="out"/>
    <scope>
      <eventHandlers>
        <onEvent partnerLink="client" operation="run" messageType="tns:req" variable="ev">
          <correlations><correlation set="cs"/></correlations>
          <scope>
            <variables><variable name="r" messageType="tns:resp"/><variable name="pr" messageType="tns:resp"/></variables>
            <sequence>
              <assign><copy><from><literal><tns:resp><tns:a/></tns:resp></literal></from><to variable="r" part="payload"/></copy>
                      <copy><from>concat('event ', $ev.payload/tns:n)</from><to>$r.payload/tns:a</to></copy></assign>
              <invoke partnerLink="partner" operation="call" inputVariable="ev" outputVariable="pr"/>
              <assign><copy><from>concat($r.payload/tns:a, ' saw ', $ev.payload/tns:n, ' main ', $in.payload/tns:n)</from><to>$r.payload/tns:a</to></copy></assign>
              <reply partnerLink="client" operation="run" variable="r"/>
            </sequence>
          </scope>
        </onEvent>
      </eventHandlers>
      <receive partnerLink="client" operation="go" variable="more">
        <correlations><correlation set="cs"/></correlations>
      </receive>
    </scope>
  </sequence>`

// Request-response events are answered while the main activity waits,
// each from its own handler instance: two overlapping events do not see
// each other's variables.
func TestOnEventConcurrentInstances(t *testing.T) {
	deploy := t.TempDir()
	partner, release := startGatedPartner(t)
	writeProcess(t, deploy, "Events", partner.addr, eventBody, true)
	o := startOrchd(t, "--deploy", deploy)
	if r := callRun(t, o.base, "Events", "E1", "0"); r.status != 200 || !strings.Contains(r.body, ">started<") {
		t.Fatalf("start: status %d body %s\n%s", r.status, r.body, o.log())
	}
	first := startRun(t, o.base, "Events", "E1", "1")
	if !eventually(func() bool { return partner.inFlight.Load() == 1 }) {
		t.Fatalf("event 1's handler did not call the partner\n%s", o.log())
	}
	second := startRun(t, o.base, "Events", "E1", "2")
	// Overlapping, the second handler calls the partner while the first's
	// call is held; one after the other, it never could.
	if !eventually(func() bool { return partner.inFlight.Load() == 2 }) {
		t.Errorf("%d partner calls in flight: the handler instances did not overlap", partner.inFlight.Load())
	}
	release()
	r1, r2 := first(), second()
	if r1.status != 200 || !strings.Contains(r1.body, ">event 1 saw 1 main 0<") {
		t.Errorf("event 1: status %d body %s", r1.status, r1.body)
	}
	if r2.status != 200 || !strings.Contains(r2.body, ">event 2 saw 2 main 0<") {
		t.Errorf("event 2: status %d body %s", r2.status, r2.body)
	}
	postGo(t, o.base, "Events", "E1", "9")
	// The main activity ended: the handlers stopped with it, so a run for
	// E1 now starts a new instance instead of reaching an event handler.
	if r := callRun(t, o.base, "Events", "E1", "3"); r.status != 200 || !strings.Contains(r.body, ">started<") {
		t.Errorf("run after the instance ended: status %d body %s, want a new instance", r.status, r.body)
	}
}

// onAlarm for fires once, repeatEvery repeats, and both stop when the
// main activity ends (the scope then goes on, and nothing fires during
// the wait after it).
func TestOnAlarmForAndRepeatEvery(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "Alarms", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    <scope>
      <eventHandlers>
        <onAlarm><for>'PT0.3S'</for>
          <scope><assign><copy><from>concat($out.payload/tns:a, 'F')</from><to>$out.payload/tns:a</to></copy></assign></scope>
        </onAlarm>
        <onAlarm><repeatEvery>'PT0.2S'</repeatEvery>
          <scope><assign><copy><from>concat($out.payload/tns:a, 'R')</from><to>$out.payload/tns:a</to></copy></assign></scope>
        </onAlarm>
      </eventHandlers>
      <wait><for>'PT2.1S'</for></wait>
    </scope>
    <assign><copy><from>concat($out.payload/tns:a, '|')</from><to>$out.payload/tns:a</to></copy></assign>
    <wait><for>'PT1S'</for></wait>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, true)
	o := startOrchd(t, "--deploy", deploy)
	r := callRun(t, o.base, "Alarms", "A1", "1")
	a := between(r.body, "<tns:a>", "</tns:a>")
	if r.status != 200 {
		t.Fatalf("status %d body %s\n%s", r.status, r.body, o.log())
	}
	during, after, _ := strings.Cut(a, "|")
	if n := strings.Count(during, "F"); n != 1 {
		t.Errorf("onAlarm for fired %d times, want once (a = %q)", n, a)
	}
	// 2.1s / 0.2s: 10 at most; timers may be late (a loaded machine
	// delays each cycle), never early: at least three firings.
	if n := strings.Count(during, "R"); n < 3 || n > 10 {
		t.Errorf("repeatEvery fired %d times while the main activity ran, want 3..10 (a = %q)", n, a)
	}
	if after != "" {
		t.Errorf("alarms fired after the main activity ended: a = %q", a)
	}
}

// A fault thrown in the scope's main activity ends the handler instances
// running: the one that waits never gets to its last assign, though the
// process goes on well past the moment it would have.
func TestFaultEndsRunningHandlers(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "EvFault", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes">
      <correlations><correlation set="cs" initiate="yes"/></correlations>
    </receive>
    `+initOut+`
    <scope>
      <faultHandlers>
        <catch faultName="tns:stop"><assign><copy><from>concat($out.payload/tns:a, 'caught ')</from><to>$out.payload/tns:a</to></copy></assign></catch>
      </faultHandlers>
      <eventHandlers>
        <onEvent partnerLink="client" operation="go" messageType="tns:req" variable="ev">
          <correlations><correlation set="cs"/></correlations>
          <scope><sequence>
            <assign><copy><from>concat($out.payload/tns:a, 'ev', $ev.payload/tns:n, ' ')</from><to>$out.payload/tns:a</to></copy></assign>
            <wait><for>'PT1.5S'</for></wait>
            <assign><copy><from>concat($out.payload/tns:a, 'late ')</from><to>$out.payload/tns:a</to></copy></assign>
          </sequence></scope>
        </onEvent>
      </eventHandlers>
      <sequence>
        <wait><for>'PT1S'</for></wait>
        <throw faultName="tns:stop"/>
      </sequence>
    </scope>
    <wait><for>'PT2S'</for></wait>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, true)
	o := startOrchd(t, "--deploy", deploy)
	if a := runWithEvents(t, o, "EvFault", "X1", "1"); a != "ev1 caught " {
		t.Fatalf("a = %q, want the handler started and ended by the fault\n%s", a, o.log())
	}
}

// Process-level event handlers, with an element variable: a one-way
// event runs its handler while the process's main activity waits.
func TestProcessEventHandlers(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "ProcEvents", "127.0.0.1:1", `
  <eventHandlers>
    <onEvent partnerLink="client" operation="go" element="tns:req" variable="ev">
      <correlations><correlation set="cs"/></correlations>
      <scope><assign><copy><from>concat($out.payload/tns:a, 'ev', $ev/tns:n, ' ')</from><to>$out.payload/tns:a</to></copy></assign></scope>
    </onEvent>
  </eventHandlers>
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes">
      <correlations><correlation set="cs" initiate="yes"/></correlations>
    </receive>
    `+initOut+`
    <wait><for>'PT1S'</for></wait>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, true)
	o := startOrchd(t, "--deploy", deploy)
	if a := runWithEvents(t, o, "ProcEvents", "P1", "5", "6"); a != "ev5 ev6 " {
		t.Fatalf("a = %q, want both events handled before the reply\n%s", a, o.log())
	}
}

// A persistent instance waiting in an onEvent (and on a repeatEvery
// alarm) survives kill -9: after the restart the event reaches its
// handler, which sees the variables from before, and the alarm goes on
// firing.
func TestOnEventSurvivesRestart(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "EvPersist", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes">
      <correlations><correlation set="cs" initiate="yes"/></correlations>
    </receive>
    `+initOut+`
    <assign><copy><from>'started'</from><to>$out.payload/tns:a</to></copy></assign>
    <reply partnerLink="client" operation="run" variable="out"/>
    <assign><copy><from>''</from><to>$out.payload/tns:a</to></copy></assign>
    <scope>
      <eventHandlers>
        <onEvent partnerLink="client" operation="run" messageType="tns:req" variable="ev">
          <correlations><correlation set="cs"/></correlations>
          <scope>
            <variables><variable name="r" messageType="tns:resp"/><variable name="pr" messageType="tns:resp"/></variables>
            <sequence>
              <assign><copy><from><literal><tns:resp><tns:a/></tns:resp></literal></from><to variable="r" part="payload"/></copy>
                      <copy><from>concat('event ', $ev.payload/tns:n, ' of ', $in.payload/tns:n)</from><to>$r.payload/tns:a</to></copy></assign>
              <reply partnerLink="client" operation="run" variable="r"/>
            </sequence>
          </scope>
        </onEvent>
        <onAlarm><repeatEvery>'PT0.3S'</repeatEvery>
          <scope><assign><copy><from>concat($out.payload/tns:a, 'R')</from><to>$out.payload/tns:a</to></copy></assign></scope>
        </onAlarm>
      </eventHandlers>
      <receive partnerLink="client" operation="go" variable="more">
        <correlations><correlation set="cs"/></correlations>
      </receive>
    </scope>
  </sequence>`, false)
	data := t.TempDir()
	o := startOrchd(t, "--deploy", deploy, "--data", data)
	if r := callRun(t, o.base, "EvPersist", "K1", "1"); r.status != 200 || !strings.Contains(r.body, ">started<") {
		t.Fatalf("start: status %d body %s\n%s", r.status, r.body, o.log())
	}
	alarms := func(o *orchd) int {
		ins := listInstances(t, o, mgmt.Query{Process: "EvPersist"})
		if len(ins) != 1 {
			t.Fatalf("instances: %+v", ins)
		}
		return strings.Count(between(ins[0].Variables["out"], "a>", "</"), "R")
	}
	if !eventually(func() bool { return alarms(o) >= 2 }) {
		t.Fatalf("the repeatEvery alarm did not fire before the restart: %d", alarms(o))
	}
	kill9(t, o)
	o2 := startOrchd(t, "--deploy", deploy, "--data", data)
	if !strings.Contains(o2.log(), "waiting=1") {
		t.Errorf("recovery did not find the waiting instance:\n%s", o2.log())
	}
	before := alarms(o2)
	if !eventually(func() bool { return alarms(o2) >= before+2 }) {
		t.Errorf("the repeatEvery alarm did not go on after the restart: %d, then %d", before, alarms(o2))
	}
	if r := callRun(t, o2.base, "EvPersist", "K1", "2"); r.status != 200 || !strings.Contains(r.body, ">event 2 of 1<") {
		t.Fatalf("event after restart: status %d body %s\n%s", r.status, r.body, o2.log())
	}
	postGo(t, o2.base, "EvPersist", "K1", "3")
	var state string
	if !eventually(func() bool {
		ins := listInstances(t, o2, mgmt.Query{Process: "EvPersist"})
		state = fmt.Sprint(ins[0].State)
		return len(ins) == 1 && ins[0].State == "completed"
	}) {
		t.Errorf("the instance did not complete after go: %s", state)
	}
}
