package main

import (
	"strings"
	"testing"
)

// runawayBody receives, then loops forever without waiting, inside a scope
// whose catchAll would reply: the budget's fault must not reach it.
const runawayBody = `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    ` + initOut + `
    <scope>
      <faultHandlers><catchAll><reply partnerLink="client" operation="run" variable="out"/></catchAll></faultHandlers>
      <while><condition>true()</condition><empty/></while>
    </scope>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`

// TestStepBudget: serve --max-steps is the step budget of a process whose
// deploy.xml sets none; an in-memory process that loops without waiting
// is stopped by it, its client gets a Server fault naming
// orchd:stepBudgetExceeded and the flag, and no fault handler catches it.
// (The budget's rules, orchd:maxSteps in deploy.xml, the suspension of a
// persistent instance, resume, waits refilling the budget, are the sem
// cases steps/*; this is the flag.)
func TestStepBudget(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "Loop", "127.0.0.1:1", runawayBody, true)
	o := startOrchd(t, "--deploy", deploy, "--max-steps", "5000")
	r := callRun(t, o.base, "Loop", "L1", "1")
	code, reason := faultCode(t, r.body)
	if r.status != 500 || code != "Server" || !strings.Contains(reason, "orchd:stepBudgetExceeded") || !strings.Contains(reason, "serve --max-steps") || !strings.Contains(reason, "5000") {
		t.Errorf("%d %s %q, want a Server fault naming orchd:stepBudgetExceeded, serve --max-steps and 5000", r.status, code, reason)
	}
}
