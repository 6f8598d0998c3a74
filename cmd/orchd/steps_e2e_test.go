package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
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

// TestStepBudget runs processes that loop without waiting: the in-memory
// one is stopped by serve --max-steps, the persistent one by its
// deploy.xml orchd:maxSteps and suspended with the reason; each client
// gets a Server fault naming orchd:stepBudgetExceeded and the setting, no
// fault handler catches it, and a process that does not loop is served
// as before.
func TestStepBudget(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "Loop", "127.0.0.1:1", runawayBody, true)
	writeProcess(t, deploy, "LoopStored", "127.0.0.1:1", runawayBody, false)
	setMaxSteps(t, deploy, "LoopStored", 2000)
	// 50 partner calls in one run, more steps than its budget of 100: each
	// answer is a wait, which refills the budget.
	partner := startSlowPartner(t, 0)
	writeProcess(t, deploy, "Calls", partner.addr, `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    <forEach counterName="i" parallel="no"><startCounterValue>1</startCounterValue><finalCounterValue>50</finalCounterValue>
      <scope><sequence>
        <invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="p1"/>
        <assign><copy><from>'called'</from><to>$out.payload/tns:a</to></copy></assign>
      </sequence></scope></forEach>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, true)
	setMaxSteps(t, deploy, "Calls", 100)
	writeProcess(t, deploy, "Counted", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    <forEach counterName="i" parallel="no"><startCounterValue>1</startCounterValue><finalCounterValue>100</finalCounterValue>
      <scope><empty/></scope></forEach>
    <assign><copy><from>'done'</from><to>$out.payload/tns:a</to></copy></assign>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, true)
	s := startMgmt(t, deploy, "--max-steps", "5000")

	tests := []struct {
		name, setting string
	}{
		{"Loop", "serve --max-steps"},
		{"LoopStored", "orchd:maxSteps"},
	}
	for _, tc := range tests {
		r := callRun(t, s.base, tc.name, "L1", "1")
		code, reason := faultCode(t, r.body)
		if r.status != 500 || code != "Server" || !strings.Contains(reason, "orchd:stepBudgetExceeded") || !strings.Contains(reason, tc.setting) {
			t.Errorf("%s: %d %s %q, want a Server fault naming orchd:stepBudgetExceeded and %s", tc.name, r.status, code, reason, tc.setting)
		}
	}
	if r := callRun(t, s.base, "Counted", "C1", "1"); r.status != 200 || !strings.Contains(r.body, ">done<") {
		t.Errorf("a process that loops 100 times: %d %s", r.status, r.body)
	}
	if r := callRun(t, s.base, "Calls", "P1", "1"); r.status != 200 || !strings.Contains(r.body, ">called<") || partner.done.Load() != 50 {
		t.Errorf("a process that calls a partner 50 times: %d %s (%d calls)", r.status, r.body, partner.done.Load())
	}
	ctx := context.Background()
	page, err := s.b.Instances(ctx, mgmt.Query{Process: "LoopStored"})
	if err != nil || len(page.Instances) != 1 {
		t.Fatalf("stored instances of LoopStored: %+v %v", page, err)
	}
	in := page.Instances[0]
	if in.State != mgmt.StateSuspended || !strings.Contains(in.Fault, "orchd:stepBudgetExceeded") || !strings.Contains(in.Fault, "2000") {
		t.Errorf("the persistent looping instance: %s %q, want suspended with the budget as the reason", in.State, in.Fault)
	}
	det, err := s.b.Instance(ctx, in.ID)
	if err != nil || !strings.Contains(det.Fault, "orchd:stepBudgetExceeded") || !slices.Contains(det.Actions, mgmt.Resume) {
		t.Fatalf("its detail: %+v %v", det, err)
	}
	// Resumed, it gets a fresh budget, loops again and is suspended again.
	if err := s.b.Act(ctx, in.ID, mgmt.Resume); err != nil {
		t.Fatalf("resume: %v", err)
	}
	before := det.LastActive
	for deadline := time.Now().Add(20 * time.Second); ; {
		det, err := s.b.Instance(ctx, in.ID)
		if err == nil && det.State == mgmt.StateSuspended && strings.Contains(det.Fault, "orchd:stepBudgetExceeded") && det.LastActive.After(before) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after resume: %+v %v", det, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// setMaxSteps gives process name of the deploy directory an orchd:maxSteps.
func setMaxSteps(t *testing.T, deploy, name string, n int) {
	t.Helper()
	dd := filepath.Join(deploy, name, "deploy.xml")
	b, err := os.ReadFile(dd)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), "<in-memory>", fmt.Sprintf(`<orchd:maxSteps xmlns:orchd="urn:orchd:deploy">%d</orchd:maxSteps><in-memory>`, n), 1))
	if err := os.WriteFile(dd, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
