package main

import (
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
)

// Compensation and termination handlers (WS-BPEL 2.0 12.4 to 12.6): each
// test deploys a process whose handlers append to the reply's a, so the
// order in which they ran is what the client reads. The compensation
// rules themselves are sem cases (internal/process/interp/testdata/sem/
// compensation); these tests keep what needs the server: metrics, the
// management API, a restart.

// correlatedStart starts an instance on run, correlated on id, with an
// empty reply in out.
const correlatedStart = `<receive partnerLink="client" operation="run" variable="in" createInstance="yes">
      <correlations><correlation set="cs" initiate="yes"/></correlations>
    </receive>
    ` + initOut

// appendA is an assign appending the XPath string expression x to a.
func appendA(x string) string {
	return `<assign><copy><from>concat($out.payload/tns:a, ` + x + `)</from><to>$out.payload/tns:a</to></copy></assign>`
}

// A fault terminates the scope's running branches: one blocked in a
// receive, one waiting for a real partner on the network, whose late
// answer is dropped and counted (orchd_late_answers_dropped_total). (The
// handlers' order is the sem case termination/fault-terminates-running-
// branches; this is the metric.)
func TestTerminationHandlers(t *testing.T) {
	partner := startSlowPartner(t, 1500*time.Millisecond)
	deploy := t.TempDir()
	writeProcess(t, deploy, "Term", partner.addr, `
  <sequence>
    `+correlatedStart+`
    <scope name="work">
      <faultHandlers><catchAll>`+appendA(`'caught'`)+`</catchAll></faultHandlers>
      <flow>
        <scope name="calling">
          <terminationHandler><sequence>`+appendA(`'termCalling '`)+`<throw faultName="tns:ignored"/></sequence></terminationHandler>
          <invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="p1"/>
        </scope>
        <scope name="waiting">
          <terminationHandler>`+appendA(`'termWaiting '`)+`</terminationHandler>
          <receive partnerLink="client" operation="go" variable="more"><correlations><correlation set="cs"/></correlations></receive>
        </scope>
        <throw faultName="tns:boom"/>
      </flow>
    </scope>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, true)
	o := startOrchd(t, "--deploy", deploy)
	r := callRun(t, o.base, "Term", "T1", "1")
	a := between(r.body, "a>", "</")
	if r.status != 200 || !strings.HasSuffix(a, "caught") || !strings.Contains(a, "termCalling ") || !strings.Contains(a, "termWaiting ") || len(a) != len("termCalling termWaiting caught") {
		t.Fatalf("status %d a = %q, want both termination handlers, then the fault handler\n%s", r.status, a, o.log())
	}
	if !eventually(func() bool { return lateAnswers(t, o) == "1" }) {
		t.Errorf("late answers dropped: %s, want 1", lateAnswers(t, o))
	}
}

func lateAnswers(t *testing.T, o *orchd) string {
	_, m := get(t, o.base+"/metrics")
	for _, l := range strings.Split(m, "\n") {
		if strings.HasPrefix(l, "orchd_late_answers_dropped_total{") && strings.Contains(l, "Term") {
			return l[strings.LastIndexByte(l, ' ')+1:]
		}
	}
	return ""
}

// A persistent instance holding completed scopes (with a snapshot of a
// scope variable) survives kill -9 and compensates them after the
// restart.
func TestCompensationSurvivesRestart(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "CompPersist", "127.0.0.1:1", `
  <sequence>
    `+correlatedStart+`
    <scope name="work">
      <faultHandlers><catchAll><sequence><compensate/>`+appendA(`'caught'`)+`</sequence></catchAll></faultHandlers>
      <sequence>
        <scope name="A">
          <variables><variable name="x" type="xsd:string"/></variables>
          <compensationHandler>`+appendA(`'undo ', $x, ' '`)+`</compensationHandler>
          <assign><copy><from>concat('A-', $in.payload/tns:n)</from><to variable="x"/></copy></assign>
        </scope>
        <scope name="B">
          <compensationHandler>`+appendA(`'undoB '`)+`</compensationHandler>
          <empty/>
        </scope>
        <assign><copy><from>'started '</from><to>$out.payload/tns:a</to></copy></assign>
        <reply partnerLink="client" operation="run" variable="out"/>
        <receive partnerLink="client" operation="go" variable="more"><correlations><correlation set="cs"/></correlations></receive>
        <throw faultName="tns:boom"/>
      </sequence>
    </scope>
  </sequence>`, false)
	data := t.TempDir()
	o := startOrchd(t, "--deploy", deploy, "--data", data)
	if r := callRun(t, o.base, "CompPersist", "K1", "7"); r.status != 200 || !strings.Contains(r.body, ">started <") {
		t.Fatalf("start: status %d body %s\n%s", r.status, r.body, o.log())
	}
	kill9(t, o)
	o2 := startOrchd(t, "--deploy", deploy, "--data", data)
	postGo(t, o2.base, "CompPersist", "K1", "2")
	var ins []mgmt.InstanceDetail
	if !eventually(func() bool {
		ins = listInstances(t, o2, mgmt.Query{Process: "CompPersist"})
		return len(ins) == 1 && ins[0].State == "completed"
	}) {
		t.Fatalf("instances %+v, want one completed\n%s", ins, o2.log())
	}
	if a := between(ins[0].Variables["out"], "a>", "</"); a != "started undoB undo A-7 caught" {
		t.Errorf("a = %q, want the completed scopes compensated after the restart, last first", a)
	}
}
