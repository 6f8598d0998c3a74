package main

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"
	"time"
)

var (
	recoveredRE = regexp.MustCompile(`msg=recovered `)
	resumedRE   = regexp.MustCompile(`msg=recovered .*resumed=(\d+)`)
)

// TestKillDuringRecovery: orchd runs the crash loop's mixed load and is
// SIGKILLed while one instance of a process that answers its client and
// then calls its partner is inside that call (the partner holds it), so
// that there is an interrupted run to resume (a PO killed inside its CRM
// call would leave nothing: a new instance not answered yet is stored
// before none of its calls); then each restart is killed
// again once it logs what recovery found (the first time at once, then at
// a random moment up to 100 ms later), while the interrupted runs resume,
// the outbox is sent and the timers are scheduled. After the rounds, a last restart must recover it all: the
// crash loop's invariants hold in the file the killed recoveries left and,
// once the timers and outbox are done, the final ones; the data file is
// consistent; and the load did its work.
func TestKillDuringRecovery(t *testing.T) {
	const rounds, recoveryKills = 3, 2
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 3))
	crm, erp, notify, plog := startRecordingPartners(t)
	deploy := crashDeploy(t, crm, erp, notify, false)
	held := startSlowPartner(t, time.Hour)
	replyEarly, _ := crashReplies(true)
	writeProcess(t, deploy, "Resume", held.addr, `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+replyEarly+`
    <invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="p1"/>
  </sequence>`, false)
	data := t.TempDir()
	led := newLedger()
	args := []string{"--deploy", deploy, "--data", data, "--message-hold", "-1s"}
	resumed := 0
	for r := 1; r <= rounds; r++ {
		o := startOrchd(t, args...)
		before := led.acknowledged()
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			mixedLoad(o.base, fmt.Sprintf("K%d", r), led, stop, rnd.Uint64())
			close(done)
		}()
		waitUntil(t, fmt.Sprintf("round %d: 20 exchanges acknowledged", r), func() bool { return led.acknowledged() >= before+20 })
		// A run the kill interrupts for certain.
		id := fmt.Sprintf("K%d-resume", r)
		calls := held.received()
		if a := callRun(t, o.base, "Resume", id, "1"); a.status != 200 {
			t.Fatalf("%s: %d %s", id, a.status, a.body)
		}
		waitUntil(t, "the partner call of "+id, func() bool { return held.received() == calls+1 && held.inFlight.Load() == 1 })
		kill9(t, o)
		close(stop)
		<-done
		for k := 1; k <= recoveryKills; k++ {
			ro := startOrchdAt(t, recoveredRE, args...)
			if k > 1 {
				// A random moment inside the work recovery started (as
				// the crash loop's kills), not only right at its start.
				time.Sleep(time.Duration(rnd.IntN(100)) * time.Millisecond)
			}
			kill9(t, ro)
			line := recoveredLine(ro.log())
			if m := resumedRE.FindStringSubmatch(ro.log()); m != nil {
				n, _ := strconv.Atoi(m[1])
				resumed += n
			}
			view, rep, err := readDataFile(data)
			if err != nil {
				t.Fatalf("round %d, recovery %d killed: data file: %v", r, k, err)
			}
			bad := checkInvariants(led, plog, view, false)
			t.Logf("round %d: recovery %d killed once it logged %s; store %s", r, k, line, rep)
			for _, b := range append(bad, rep.Problems...) {
				t.Errorf("round %d, recovery %d killed: %s", r, k, b)
			}
			if len(bad) > 0 || rep.NProblems != 0 {
				t.FailNow()
			}
		}
	}
	if resumed == 0 {
		t.Error("no killed recovery had an interrupted run to resume: the test did not kill a recovery in its work")
	}
	if n := held.received(); n != rounds {
		t.Errorf("the held partner got %d calls, want the %d of the interrupted runs (none sent again by a recovery)", n, rounds)
	}
	o := startOrchd(t, args...)
	rep, _ := finalCheck(t, o, data, led, plog, 20*time.Second)
	t.Logf("after %d rounds of %d killed recoveries: acknowledged po=%d request=%d decision=%d oneway=%d, refused %d; final store %s",
		rounds, recoveryKills, led.acks.po.Load(), led.acks.request.Load(), led.acks.decision.Load(), led.acks.oneway.Load(), led.refused.Load(), rep)
	led.requireProgress(t, 1, 20)
}
