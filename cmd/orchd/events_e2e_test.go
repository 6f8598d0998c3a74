package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
)

// Event handlers (WS-BPEL 2.0 section 12.7) across a restart of the
// binary. (Their rules are the sem cases events/* in
// internal/process/interp.)

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
