package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/etcdstore"
)

// heldGauge reads orchd_held_messages of the orchd at base.
func heldGauge(t *testing.T, base string) string {
	t.Helper()
	_, m := get(t, base+"/metrics")
	return metricValue(t, m, "orchd_held_messages")
}

// earlyDecision is a decide sent before its approval exists: held by the
// node it reached (--message-hold) until an instance there waits for it.
type earlyDecision struct {
	id   string
	c    *approvalCase
	done chan bool // whether it was acknowledged
}

// decideEarly records a decision for approval id (which does not exist
// yet) and sends it on its own goroutine through send.
func decideEarly(led *loadLedger, send sendFunc, id string) *earlyDecision {
	d := &earlyDecision{id: id, c: &approvalCase{decided: "APPROVED"}, done: make(chan bool, 1)}
	led.mu.Lock()
	led.approvals[id] = d.c
	led.mu.Unlock()
	go func() {
		acked, _ := led.decide(send, id, d.c)
		d.done <- acked
	}()
	return d
}

// TestClusterCrashMessageHold is the cluster crash with held messages
// (issue 20): three orchd nodes with --message-hold on one embedded etcd.
// In each round, decisions for approvals that do not exist yet are sent to
// the victim node, which holds them (its orchd_held_messages says so);
// then half of those approvals are requested there, and their instances
// take the held decisions: each decision is acknowledged with its status.
// The victim is SIGKILLed with the other half still held: their senders
// get no answer. After the kill the acknowledged held decisions are found
// delivered exactly once (one instance each, completed with that status),
// and the dropped ones had no effect: their approvals, requested on the
// survivors, wait undecided, and are decided there. A decision held by a
// survivor for an approval nobody requests ends when its hold does: a
// Client fault naming its correlation, counted as expired. Each round,
// the crash loop's invariants and etcdstore.Check hold on the store.
func TestClusterCrashMessageHold(t *testing.T) {
	const name, rounds, hold = "crashheld", 2, "15s"
	ids := []string{"a", "b", "c"}
	ec, deploy, plog, nodes := startCrashCluster(t, name, ids, "--message-hold", hold)
	st := openClusterStore(t, ec, name)
	led := newLedger()
	start := time.Now()

	// A decision nobody requests the approval of, held by a node that is
	// never killed (c: the victims are a and b), to expire there.
	lost := make(chan string, 1)
	go func() {
		send, closeIdle := newSender(nodes["c"].base)
		defer closeIdle()
		body, _ := send(approvalPath, "", approvalBody("decide", "nobody", "<appr:approved>true</appr:approved><appr:approver>bob</appr:approver>"))
		lost <- body
	}()

	for r := 1; r <= rounds; r++ {
		victim := ids[r-1]
		var survivors []*orchd
		for _, id := range ids {
			if id != victim {
				survivors = append(survivors, nodes[id])
			}
		}
		send, closeIdle := newSender(nodes[victim].base)
		var early []*earlyDecision
		for k := range 4 {
			early = append(early, decideEarly(led, send, fmt.Sprintf("R%d%s-early-%d", r, victim, k)))
		}
		waitUntil(t, fmt.Sprintf("round %d: %s to hold the four early decisions", r, victim), func() bool { return heldGauge(t, nodes[victim].base) == "4" })

		// The first two approvals are requested on the victim: their
		// instances take the held decisions, which are acknowledged.
		for _, d := range early[:2] {
			if acked, _ := led.request(send, d.id, "PT1H", false, false); !acked {
				t.Fatalf("round %d: approval %s on %s not acknowledged", r, d.id, victim)
			}
			led.mu.Lock()
			c := led.approvals[d.id]
			led.approvals[d.id] = d.c // the case the decision is recorded in
			d.c.acked = c.acked
			led.mu.Unlock()
			select {
			case acked := <-d.done:
				if !acked {
					t.Fatalf("round %d: the decision held for %s was not acknowledged once its approval was requested on %s\n%s", r, d.id, victim, nodes[victim].log())
				}
			case <-time.After(time.Minute):
				t.Fatalf("round %d: the decision held for %s never answered after its approval was requested", r, d.id)
			}
		}
		// (The offer that handed a message over ends after its answer.)
		waitUntil(t, fmt.Sprintf("round %d: %s to hold two messages after two were taken", r, victim), func() bool { return heldGauge(t, nodes[victim].base) == "2" })

		// The kill drops the two still held: not acknowledged.
		kill9(t, nodes[victim])
		closeIdle()
		for _, d := range early[2:] {
			if acked := <-d.done; acked {
				t.Errorf("round %d: the decision for %s, held on %s when it was killed, was acknowledged", r, d.id, victim)
			}
		}
		// Their approvals, requested on the survivors, wait undecided
		// (checked below with the invariants), then are decided there.
		for k, d := range early[2:] {
			send, closeIdle := newSender(survivors[k%2].base)
			if acked, _ := led.request(send, d.id, "PT1H", false, true); !acked {
				t.Errorf("round %d: approval %s on a survivor not acknowledged", r, d.id)
			}
			closeIdle()
		}
		var bad []string
		var rep etcdstore.CheckReport
		pollFor(20*time.Second, func() bool {
			bad, rep = checkClusterStore(st, name, led, plog, false, len(ids)-1)
			return len(bad) == 0
		})
		for _, b := range bad {
			t.Errorf("round %d, after the kill: %s", r, b)
		}
		view, err := readInstances(st)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range early {
			ins := view.approvals[d.id]
			ok := len(ins) == 1 && ins[0].state == "waiting"
			want := "waiting (its held decision dropped)"
			if i < 2 {
				ok = len(ins) == 1 && ins[0].state == "completed" && ins[0].status == "APPROVED"
				want = "completed APPROVED (its held decision taken once)"
			}
			if !ok {
				t.Errorf("round %d: approval %s after the kill is %+v, want one instance, %s", r, d.id, ins, want)
			}
		}
		for k := 0; ; k++ {
			id, c := led.takeUndecided(nil, k%2 == 0)
			if c == nil {
				break
			}
			send, closeIdle := newSender(survivors[k%2].base)
			if acked, _ := led.decide(send, id, c); !acked {
				t.Errorf("round %d: decision for %s on a survivor not acknowledged", r, id)
			}
			closeIdle()
		}
		pollFor(20*time.Second, func() bool {
			bad, rep = checkClusterStore(st, name, led, plog, true, len(ids)-1)
			return len(bad) == 0
		})
		for _, b := range bad {
			t.Errorf("round %d, decided: %s", r, b)
		}
		if t.Failed() {
			for _, o := range survivors {
				t.Logf("survivor log:\n%s", o.log())
			}
			t.FailNow()
		}
		nodes[victim] = startClusterNode(t, ec, deploy, name, victim, "--message-hold", hold)
		t.Logf("round %d: %s killed holding 2 decisions after 2 held ones were taken; etcd %s", r, victim, rep)
	}

	body := <-lost
	if code, reason := faultCode(t, body); code != "Client" || !strings.Contains(reason, "nobody") {
		t.Errorf("the decision for an approval nobody requested: %s %q, want a Client fault naming its correlation", code, reason)
	}
	_, m := get(t, nodes["c"].base+"/metrics")
	if v := metricWith(m, "orchd_held_messages_total", `outcome="expired"`, `process="OrderApproval"`); v != "1" {
		t.Errorf(`node c: orchd_held_messages_total{process="OrderApproval",outcome="expired"} = %q, want 1`, v)
	}
	t.Logf("%d rounds in %v", rounds, time.Since(start).Round(time.Millisecond))
}
