package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/etcdstore"
	"github.com/orchd/orchd/internal/etcdtest"
	"github.com/orchd/orchd/internal/persist"
)

// startClusterNode starts orchd as node id of cluster name on ec, serving
// deploy, with a 2 s lease so that a killed node's share moves quickly.
func startClusterNode(t *testing.T, ec *etcdtest.Cluster, deploy, name, id string, extra ...string) *orchd {
	t.Helper()
	return startOrchd(t, append([]string{"--deploy", deploy, "--data", t.TempDir(), "--store", "etcd",
		"--etcd-endpoints", strings.Join(ec.Endpoints(), ","), "--etcd-prefix", cluster.Prefix(name),
		"--cluster", name, "--node-id", id, "--cluster-ttl", "2s"}, extra...)...)
}

// startCrashCluster starts an embedded 3-member etcd, the recording
// partners, and orchd nodes ids of cluster name serving the crash loop's
// processes (crashDeploy), each with extra flags.
func startCrashCluster(t *testing.T, name string, ids []string, extra ...string) (*etcdtest.Cluster, string, *partnerLog, map[string]*orchd) {
	t.Helper()
	ec := etcdtest.Start(t, 3)
	crm, erp, notify, plog := startRecordingPartners(t)
	deploy := crashDeploy(t, crm, erp, notify, false)
	nodes := map[string]*orchd{}
	for _, id := range ids {
		nodes[id] = startClusterNode(t, ec, deploy, name, id, extra...)
	}
	return ec, deploy, plog, nodes
}

// openClusterStore opens the test's own view of cluster name's store on
// ec, to read what the nodes stored and check it (etcdstore.Check).
func openClusterStore(t *testing.T, ec *etcdtest.Cluster, name string) *etcdstore.Store {
	t.Helper()
	st, err := etcdstore.Open(etcdstore.Options{Endpoints: ec.Endpoints(), Prefix: cluster.Prefix(name)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// runningInstances counts the stored instances in state running.
func runningInstances(t *testing.T, st *etcdstore.Store) int {
	t.Helper()
	n := 0
	if err := st.Instances(func(rec *persist.Instance) bool {
		if rec.State == persist.Running {
			n++
		}
		return true
	}); err != nil {
		t.Errorf("reading instances: %v", err)
	}
	return n
}

// pollFor polls cond every 100 ms until it holds or wait has passed;
// it reports whether it held.
func pollFor(wait time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(wait); ; time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// checkClusterStore reads the cluster's store and checks the crash loop's
// invariants (final: every timer fired, every RELIABLE send delivered)
// and etcdstore.Check's consistency, with no lock held and every outbox
// message sent (the nodes are idle). It returns the violations.
func checkClusterStore(st *etcdstore.Store, name string, led *loadLedger, plog *partnerLog, final bool, members int) ([]string, etcdstore.CheckReport) {
	view, err := readInstances(st)
	if err != nil {
		return []string{err.Error()}, etcdstore.CheckReport{}
	}
	bad := checkInvariants(led, plog, view, final)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := st.Check(ctx, cluster.Prefix(name))
	if err != nil {
		bad = append(bad, err.Error())
	}
	if rep.Members != members || rep.Locks != 0 || (final && (rep.Outbox != 0 || rep.OutboxOrphans != 0)) {
		bad = append(bad, fmt.Sprintf("etcd: %s; want %d members, no lock, (final) no outbox message", rep, members))
	}
	return bad, rep
}

// TestClusterCrash is the crash loop on a cluster (issue 11): three orchd
// nodes on one embedded 3-member etcd, the crash loop's persistent mix on
// every node at once; in each round one node is SIGKILLed at a random
// moment under load, right after it acknowledged two approvals waiting for
// a decision and two whose 2 s timeout expires after the kill, and while
// it is inside the CRM call of a PO (the partner holds it), a run the
// survivors must resume (taken over: no longer running, CRM called once). The
// survivors' load goes on past the dead node's lease; the dead node's
// undecided approvals are then decided on the survivors, its timers must
// fire there (timeout path: EXPIRED) and its outbox must be delivered from
// there, before it restarts with the same node ID. Each round and at the end:
// every acknowledged exchange stored exactly once, no partner called twice
// for one PO, every acknowledged RELIABLE send delivered, and
// etcdstore.Check finds no orphaned route, timer, index entry, variable
// or lock; and the load did its work (loadLedger.requireProgress).
func TestClusterCrash(t *testing.T) {
	const name, rounds = "crash", 3
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 1))
	ids := []string{"a", "b", "c"}
	ec, deploy, plog, nodes := startCrashCluster(t, name, ids, "--message-hold", "-1s")
	st := openClusterStore(t, ec, name)
	led := newLedger()
	start := time.Now()
	decidedOnSurvivors, resumedOnSurvivors, takenOver := 0, 0, 0
	for r := 1; r <= rounds; r++ {
		before := [4]int64{led.acks.po.Load(), led.acks.request.Load(), led.acks.decision.Load(), led.acks.oneway.Load()}
		stops, dones := map[string]chan struct{}{}, map[string]chan struct{}{}
		for _, id := range ids {
			stops[id], dones[id] = make(chan struct{}), make(chan struct{})
			go func(base, prefix string, stop, done chan struct{}, seed uint64) {
				mixedLoad(base, prefix, led, stop, seed)
				close(done)
			}(nodes[id].base, fmt.Sprintf("R%d%s", r, id), stops[id], dones[id], rnd.Uint64())
		}
		run := time.Duration(500+rnd.IntN(1000)) * time.Millisecond
		time.Sleep(run)
		victim := ids[rnd.IntN(len(ids))]
		var survivors []*orchd
		for _, id := range ids {
			if id != victim {
				survivors = append(survivors, nodes[id])
			}
		}
		// Right before the kill, under load: approvals on the victim that
		// its own load cannot decide (not queued yet), and approvals
		// whose 2 s timeout expires after the kill, for the survivors to
		// take over.
		send, closeIdle := newSender(nodes[victim].base)
		var held []string
		for k := range 4 {
			id := fmt.Sprintf("R%d%s-held-%d", r, victim, k)
			timeout, short := "PT1H", k%2 == 1
			if short {
				timeout = "PT2S"
			}
			if acked, _ := led.request(send, id, timeout, short, false); !acked {
				t.Errorf("round %d: approval %s on %s not acknowledged", r, id, victim)
			} else if !short {
				held = append(held, id)
			}
		}
		// And a run the kill interrupts for certain: a PO whose CRM call
		// the partner holds (the instance is stored as running, checkpointed
		// before the call); the survivors must resume it.
		resumeID := fmt.Sprintf("R%d%s-resume", r, victim)
		release := plog.hold(resumeID)
		ordered := make(chan struct{})
		go func() {
			defer close(ordered)
			led.order(send, readPO(), resumeID) // its answer never comes: the kill ends it
		}()
		waitUntil(t, fmt.Sprintf("round %d: the CRM call of %s on %s", r, resumeID, victim), func() bool { return plog.count(plog.crm, resumeID) == 1 })
		kill9(t, nodes[victim])
		<-ordered
		release()
		closeIdle()
		if n := runningInstances(t, st); n == 0 {
			t.Errorf("round %d: no instance stored as running right after the kill, though %s was inside its CRM call on %s", r, resumeID, victim)
		}
		close(stops[victim])
		<-dones[victim]
		// Its acknowledged approvals that wait for a decision: from now
		// on only the survivors can take them.
		mine := func(id string) bool { return strings.HasPrefix(id, fmt.Sprintf("R%d%s-", r, victim)) }
		led.mu.Lock()
		led.undecided = append(led.undecided, held...)
		waiting := slices.DeleteFunc(slices.Clone(led.undecided), func(id string) bool { return !mine(id) })
		led.mu.Unlock()

		// The survivors' load goes on until the victim's lease is gone
		// (it is also what a restart with the same ID waits for).
		nodeKey := cluster.Prefix(name) + "nodes/" + victim
		gone := pollFor(15*time.Second, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			resp, err := st.Client().Get(ctx, nodeKey, clientv3.WithCountOnly())
			return err == nil && resp.Count == 0
		})
		time.Sleep(500 * time.Millisecond) // and a little longer: the survivors adopt
		for _, id := range ids {
			if id != victim {
				close(stops[id])
				<-dones[id]
			}
		}
		if !gone {
			t.Fatalf("round %d: node %s's key outlived its 2 s lease by 15 s", r, victim)
		}

		// The survivors' load decided some of them; the test decides the
		// rest on the survivors. Every decision must be acknowledged.
		for k := 0; ; k++ {
			id, c := led.takeUndecided(mine, k%2 == 0)
			if c == nil {
				break
			}
			send, closeIdle := newSender(survivors[k%2].base)
			led.decide(send, id, c)
			closeIdle()
		}
		led.mu.Lock()
		for _, id := range waiting {
			if c := led.approvals[id]; !c.decAcked {
				t.Errorf("round %d: decision %q for %s (waiting on the dead node %s) not acknowledged by a survivor", r, c.decided, id, victim)
			}
		}
		led.mu.Unlock()
		decidedOnSurvivors += len(waiting)

		// Its timers fire on the survivors, its outbox is drained there,
		// the runs it was inside (stored as running: their clients got
		// no answer) are resumed there, and nothing is orphaned.
		interrupted := runningInstances(t, st)
		var bad []string
		var rep etcdstore.CheckReport
		pollFor(20*time.Second, func() bool {
			bad, rep = checkClusterStore(st, name, led, plog, true, len(ids)-1)
			if n := runningInstances(t, st); n > 0 {
				bad = append(bad, fmt.Sprintf("%d instances still running: the dead node's interrupted runs were not resumed by the survivors", n))
			}
			return len(bad) == 0
		})
		resumedOnSurvivors += interrupted
		// The held run was taken over: stored once, no longer running
		// (its CRM call may have happened, so its failure policy decided
		// its next step), its CRM called once.
		if view, err := readInstances(st); err != nil {
			t.Errorf("round %d: %v", r, err)
		} else if ins := view.pos[resumeID]; len(ins) != 1 || ins[0].state == "running" || plog.count(plog.crm, resumeID) != 1 {
			t.Errorf("round %d: %s, interrupted on %s inside its CRM call, is %+v after the takeover (CRM called %d times); want one instance, resumed by a survivor",
				r, resumeID, victim, ins, plog.count(plog.crm, resumeID))
		} else {
			takenOver++
		}
		nodes[victim] = startClusterNode(t, ec, deploy, name, victim, "--message-hold", "-1s")
		t.Logf("round %d: %s killed after %v; acknowledged po=%d request=%d decision=%d oneway=%d; %d of its waiting approvals decided on the survivors; %d runs still stored as running at its lease's end (then resumed there); its held run taken over; etcd %s",
			r, victim, run, led.acks.po.Load()-before[0], led.acks.request.Load()-before[1], led.acks.decision.Load()-before[2], led.acks.oneway.Load()-before[3],
			len(waiting), interrupted, rep)
		for _, b := range bad {
			t.Error(b)
		}
		if len(bad) > 0 {
			for _, o := range survivors {
				t.Logf("survivor log:\n%s", o.log())
			}
			t.FailNow()
		}
	}
	led.requireProgress(t, int64(rounds), 20)
	if takenOver != rounds {
		t.Errorf("%d of %d runs interrupted inside a partner call were taken over by the survivors", takenOver, rounds)
	}
	if decidedOnSurvivors == 0 {
		t.Error("no approval started on a killed node was left to decide on the survivors: the takeover of waiting instances was not exercised")
	}
	// The restarted nodes recover what the kills interrupted; then all is
	// settled.
	var bad []string
	var rep etcdstore.CheckReport
	pollFor(20*time.Second, func() bool {
		bad, rep = checkClusterStore(st, name, led, plog, true, len(ids))
		return len(bad) == 0
	})
	for _, b := range bad {
		t.Error(b)
	}
	t.Logf("%d rounds in %v: acknowledged po=%d request=%d decision=%d oneway=%d, refused %d; %d decisions and %d runs still running at the lease's end on survivors, %d held runs taken over; final etcd %s",
		rounds, time.Since(start).Round(time.Millisecond), led.acks.po.Load(), led.acks.request.Load(), led.acks.decision.Load(), led.acks.oneway.Load(),
		led.refused.Load(), decidedOnSurvivors, resumedOnSurvivors, takenOver, rep)
}
