package interp

import (
	"context"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/compile"
)

// waitingInstance runs an instance of the process of the engine tests'
// bundle (in memory, sampled for timing) until it waits after its reply,
// and returns it.
func waitingInstance(t *testing.T, bundle string) *Instance {
	t.Helper()
	pls, err := compile.LoadBundleWith("../testdata/bundles/"+bundle, compile.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pls[0].InMemory = true
	p := NewVersions(pls)[0]
	ep := p.Endpoints[0]
	op := ep.Operations[0]
	req := exchange.NewMessage(op.Input.Name)
	payload := etree.NewElement("tns:req")
	payload.CreateAttr("xmlns:tns", "urn:test")
	payload.CreateElement("tns:id").SetText("S-1")
	req.Parts["payload"] = payload
	replies := 0
	ex := &exchange.Exchange{Endpoint: ep, Operation: op, Input: req, Respond: func(*exchange.Message, *exchange.Fault) { replies++ }}
	in := NewInstance(sampledHost{}, p, context.Background())
	if out := in.Begin(Delivery{Ex: ex}); out.Result != ResBlocked || out.Answer != nil || replies != 1 {
		t.Fatalf("run ended %v (%v), %d replies; want blocked after the reply", out.Result, out.Answer, replies)
	}
	if in.timing == nil {
		t.Fatal("the instance is not sampled for timing")
	}
	return in
}

// statusCase is an activity's expected status.
type statusCase struct {
	kind, name string
	want       ActStatus
}

// checkStatuses compares the statuses of s's activities with want.
func checkStatuses(t *testing.T, s *Snapshot, want []statusCase) {
	t.Helper()
	for _, c := range want {
		if a := statusOf(t, s, c.kind, c.name); a.Status != c.want {
			t.Errorf("%s %s: %v, want %v", c.kind, c.name, a.Status, c.want)
		}
	}
}

// statusOf finds the status of the activity kind name in s.
func statusOf(t *testing.T, s *Snapshot, kind, name string) ActivitySnap {
	t.Helper()
	for _, a := range s.Activities {
		if a.Kind == kind && a.Name == name {
			return a
		}
	}
	t.Fatalf("no activity %s %s", kind, name)
	return ActivitySnap{}
}

func TestSnapshotOfWaitingInstance(t *testing.T) {
	in := waitingInstance(t, "mgmt-snapshot")
	s := in.Snapshot()
	if s.State != "waiting" || !s.InMemory || s.Process.Local != "Snapshot" || s.Alarm.IsZero() || len(s.Requests) != 0 {
		t.Errorf("snapshot %+v", s)
	}
	for id, a := range s.Activities {
		if a.ID != id || a.ID != in.proc.Acts[id].ID() {
			t.Fatalf("activity %d has id %d: not indexed by plan id", id, a.ID)
		}
	}
	if r := s.Activities[s.Root]; s.Root != in.proc.Root.ID() || r.Status != ActRunning || r.Parent != -1 || r.Kind != "process" || r.Name != "Snapshot" {
		t.Errorf("root %d: %+v", s.Root, s.Activities[s.Root])
	}
	checkStatuses(t, s, []statusCase{
		{"receive", "start", ActCompleted},
		{"assign", "prepare", ActCompleted},
		{"if", "early", ActCompleted},
		{"empty", "earlyYes", ActUnknown},
		{"reply", "ack", ActCompleted},
		{"flow", "branches", ActRunning},
		{"empty", "source", ActCompleted},
		{"empty", "deadEnd", ActSkipped},
		{"if", "choose", ActRunning},
		{"wait", "pause", ActWaiting},
		{"empty", "afterPause", ActNotReached},
		{"empty", "notChosen", ActSkipped},
		{"empty", "finish", ActNotReached},
	})
	// Sampled: the running activities have their start, the others none.
	if a := statusOf(t, s, "wait", "pause"); a.Start.IsZero() {
		t.Errorf("wait pause: no start in a sampled instance")
	}
	if a := statusOf(t, s, "empty", "afterPause"); !a.Start.IsZero() {
		t.Errorf("empty afterPause: start %v", a.Start)
	}
	if len(s.Threads) != 2 || s.Threads[0].State != ThreadJoining || s.Threads[1].State != ThreadWaiting ||
		s.Threads[1].At.Kind != "wait" || len(s.Threads[1].Awaits) != 1 || !s.Threads[1].Awaits[0].Due.Equal(s.Alarm) {
		t.Errorf("threads %+v", s.Threads)
	}
	vars := map[string]string{}
	for _, v := range s.Variables {
		vars[v.Name] = v.Value
	}
	if !strings.Contains(vars["in"], "S-1") || !strings.Contains(vars["out"], ">ok<") {
		t.Errorf("variables %v", vars)
	}
	// A summary leaves out what a listing does not need.
	if sum := in.Summary(); sum.State != "waiting" || sum.Threads != nil || sum.Activities != nil || sum.Variables != nil {
		t.Errorf("summary %+v", sum)
	}
}

// TestSnapshotFaultHandlerAndForEach: a scope whose fault handler runs
// has its body faulted, one whose compensation handler runs (from that
// fault handler) is compensated, and a parallel forEach joining its branches
// after two completed is not a failure.
func TestSnapshotFaultHandlerAndForEach(t *testing.T) {
	s := waitingInstance(t, "mgmt-snapshot-fault").Snapshot()
	for _, th := range s.Threads {
		if th.Failure != nil {
			t.Errorf("thread at %s %s: failure %+v", th.Top.Kind, th.Top.Name, th.Failure)
		}
	}
	checkStatuses(t, s, []statusCase{
		{"reply", "ack", ActCompleted},
		{"scope", "guarded", ActRunning},
		{"sequence", "body", ActFaulted},
		{"empty", "beforeThrow", ActUnknown},
		{"empty", "neverRun", ActUnknown},
		{"sequence", "handling", ActRunning},
		{"compensateScope", "undo", ActRunning},
		{"scope", "undoable", ActCompensated},
		{"empty", "undoBody", ActCompleted},
		{"wait", "undoWait", ActWaiting},
		{"forEach", "each", ActRunning},
		{"scope", "branch", ActRunning},
		{"wait", "lastWait", ActWaiting},
	})
	if a := statusOf(t, s, "sequence", "body"); a.Fault != "{urn:test}boom" {
		t.Errorf("body's fault %q", a.Fault)
	}
}

func TestActStatusNames(t *testing.T) {
	for s := ActNotReached; s <= ActUnknown; s++ {
		if s.String() == "" || (s != ActUnknown && s.String() == "unknown") {
			t.Errorf("status %d is named %q", s, s.String())
		}
	}
	if ActStatus(200).String() != "unknown" {
		t.Error("an out-of-range status is not unknown")
	}
}

// sampledHost is testHost sampling every instance for timing.
type sampledHost struct{ testHost }

func (sampledHost) Sample(uint64) bool { return true }
