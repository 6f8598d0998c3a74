package process

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// faultyStore is a real store whose Commit fails when told to, as a full
// or failing disk would make it: the failed call writes nothing.
type faultyStore struct {
	*persist.Store
	mu     sync.Mutex
	skip   int                   // commits to let through before failing
	fail   int                   // commits to fail after those
	chance float64               // else, the probability that a commit fails
	rnd    *rand.Rand            // for chance
	failed int                   // commits failed so far
	seen   []*persist.Checkpoint // checkpoints of the failed commits
}

// plan lets the next skip commits through, then fails fail of them.
func (s *faultyStore) plan(skip, fail int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.skip, s.fail = skip, fail
}

func (s *faultyStore) failures() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

func (s *faultyStore) Commit(cps ...*persist.Checkpoint) error {
	s.mu.Lock()
	fail := false
	switch {
	case s.skip > 0:
		s.skip--
	case s.fail > 0:
		s.fail--
		fail = true
	case s.chance > 0:
		fail = s.rnd.Float64() < s.chance
	}
	if fail {
		s.failed++
		s.seen = append(s.seen, cps...)
	}
	s.mu.Unlock()
	if fail {
		return fmt.Errorf("injected: %w", syscall.EIO)
	}
	return s.Store.Commit(cps...)
}

// faultyEngine deploys the approval and persistent PO examples, a
// persistent RELIABLE one-way process and mgmt-recover (it answers its
// client, then calls its partner) on a faulty store.
func faultyEngine(t *testing.T, path string) (*Engine, *faultyStore, map[string]*interp.Version, *inProcessPartners, *flakyPartner) {
	t.Helper()
	st, err := persist.Open(path, persist.Options{MaxBatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fs := &faultyStore{Store: st}
	ip := &inProcessPartners{}
	ow := &flakyPartner{ch: make(chan struct{}, 16)}
	oneway := persistentOneWay(t)
	e := NewEngine(Options{Store: fs, MessageHold: 10 * time.Millisecond, OutboxRetry: 20 * time.Millisecond,
		Partners: func(ep *exchange.Endpoint) exchange.Partner {
			if ep.Service.Local == "PartnerService" {
				return ow.bind(ep)
			}
			return ip.bind(ep)
		}})
	procs := deployExamples(t, e)
	if err := e.Deploy(oneway); err != nil {
		t.Fatal(err)
	}
	procs["OneWay"] = oneway
	rec, err := loadBundle(editedBundle(t, "mgmt-recover", map[string][]string{"test.wsdl": {
		`location="http://localhost:8080/test"`, `location="http://localhost:8080/recover"`}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Deploy(rec...); err != nil {
		t.Fatal(err)
	}
	procs["Recover"] = rec[0]
	if _, err := e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e, fs, procs, ip, ow
}

// verifyStore checks the store's consistency and returns its instances.
func verifyStore(t *testing.T, e *Engine, fs *faultyStore) []*mgmt.InstanceDetail {
	t.Helper()
	if _, err := fs.Verify(); err != nil {
		t.Errorf("store: %v", err)
	}
	return storedInstances(t, e, mgmt.Query{})
}

// TestFailedCommit fails commits at the points that matter and checks that
// the client never gets an acknowledgement for what the store lacks, that
// nothing of the failed run is stored, and that the next message or timer
// starts from the stored state.
func TestFailedCommit(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, e *Engine, fs *faultyStore, procs map[string]*interp.Version, ip *inProcessPartners, ow *flakyPartner)
	}{
		{"a new instance's only commit", func(t *testing.T, e *Engine, fs *faultyStore, procs map[string]*interp.Version, _ *inProcessPartners, _ *flakyPartner) {
			ap := procs["OrderApproval"]
			fs.plan(0, 1)
			st, err := approvalCall(t, e, ap, "requestApproval", map[string]string{"requestId": "N-1", "amount": "3", "requester": "ann"})
			if err == nil || st != "" {
				t.Fatalf("request acknowledged although its commit failed: %q %v", st, err)
			}
			if list := verifyStore(t, e, fs); len(list) != 0 {
				t.Fatalf("stored after a failed commit: %+v", list)
			}
			if _, err := approvalCall(t, e, ap, "decide", map[string]string{"requestId": "N-1", "approved": "true", "approver": "bob"}); err == nil {
				t.Fatal("a decision found the instance whose commit failed")
			}
			if st, err := approvalCall(t, e, ap, "requestApproval", map[string]string{"requestId": "N-1", "amount": "3", "requester": "ann"}); err != nil || st != "PENDING" {
				t.Fatalf("request sent again: %q %v", st, err)
			}
		}},
		{"a waiting instance's next run", func(t *testing.T, e *Engine, fs *faultyStore, procs map[string]*interp.Version, _ *inProcessPartners, _ *flakyPartner) {
			ap := procs["OrderApproval"]
			if st, err := approvalCall(t, e, ap, "requestApproval", map[string]string{"requestId": "W-1", "amount": "3", "requester": "ann"}); err != nil || st != "PENDING" {
				t.Fatalf("request: %q %v", st, err)
			}
			before := verifyStore(t, e, fs)
			fs.plan(0, 1)
			if st, err := approvalCall(t, e, ap, "decide", map[string]string{"requestId": "W-1", "approved": "true", "approver": "bob"}); err == nil || st != "" {
				t.Fatalf("decision acknowledged although its commit failed: %q %v", st, err)
			}
			after := verifyStore(t, e, fs)
			if len(after) != 1 || after[0].State != "waiting" || after[0].Variables["decision"] != before[0].Variables["decision"] ||
				!strings.Contains(after[0].Variables["status"], "PENDING") {
				t.Fatalf("the failed run changed the stored instance:\nbefore %+v\nafter  %+v", before, after)
			}
			if _, ok, _ := fs.Route(interp.RouteKey(ap, "decide", "byRequest", "W-1")); !ok {
				t.Fatal("the route of the still waiting instance is gone")
			}
			if st, err := approvalCall(t, e, ap, "decide", map[string]string{"requestId": "W-1", "approved": "false", "approver": "bob"}); err != nil || st != "REJECTED" {
				t.Fatalf("decision sent again: %q %v", st, err)
			}
			if list := verifyStore(t, e, fs); len(list) != 1 || list[0].State != "completed" || !strings.Contains(list[0].Variables["status"], "REJECTED") {
				t.Fatalf("after the second decision: %+v", list)
			}
		}},
		{"a timer's run", func(t *testing.T, e *Engine, fs *faultyStore, procs map[string]*interp.Version, _ *inProcessPartners, _ *flakyPartner) {
			ap := procs["OrderApproval"]
			fs.plan(1, 1) // the request's commit, then the timer's
			if st, err := approvalCall(t, e, ap, "requestApproval", map[string]string{"requestId": "T-1", "amount": "3", "requester": "ann", "timeout": "PT0.1S"}); err != nil || st != "PENDING" {
				t.Fatalf("request: %q %v", st, err)
			}
			var list []*mgmt.InstanceDetail
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				list = verifyStore(t, e, fs)
				if len(list) == 1 && list[0].State == "completed" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the timer whose run could not be stored never fired again (%d failed): %+v", fs.failures(), list)
				}
			}
			if fs.failures() != 1 || !strings.Contains(list[0].Variables["status"], "EXPIRED") {
				t.Fatalf("%d failures; %+v", fs.failures(), list)
			}
		}},
		{"no commit before a new instance's calls", func(t *testing.T, e *Engine, fs *faultyStore, procs map[string]*interp.Version, ip *inProcessPartners, _ *flakyPartner) {
			// The PO, unanswered until it ends, is stored before neither
			// call, and its end (cleanup deletes it) writes nothing: the
			// commit that would fail is never asked for.
			fs.plan(0, 1)
			out, fault, err := submit(t, e, procs["PurchaseOrderPersistent"], poMessage(t, "po-request.xml"))
			if err != nil || fault != nil || out == nil {
				t.Fatalf("PO: %v %v %v", out, fault, err)
			}
			if ip.crm.Load() != 1 || ip.erp.Load() != 1 || fs.failures() != 0 {
				t.Errorf("partner calls: crm %d erp %d, failed commits %d; want 1 1 0", ip.crm.Load(), ip.erp.Load(), fs.failures())
			}
			if list := verifyStore(t, e, fs); len(list) != 0 {
				t.Fatalf("stored: %+v", list)
			}
		}},
		{"the commit before a partner call", func(t *testing.T, e *Engine, fs *faultyStore, procs map[string]*interp.Version, _ *inProcessPartners, ow *flakyPartner) {
			// Recover's reply waits for the checkpoint before its call.
			fs.plan(0, 1)
			if r := dispatch(t, e, procs["Recover"], testReq("CB-1", "1", "")); r.err == nil || r.out != nil || r.fault != nil {
				t.Fatalf("answered although the commit before the call failed: %+v", r)
			}
			ow.mu.Lock()
			got := len(ow.got)
			ow.mu.Unlock()
			if got != 0 {
				t.Errorf("the partner was called %d times after the commit before the call failed", got)
			}
			if list := verifyStore(t, e, fs); len(list) != 0 {
				t.Fatalf("stored after a failed commit: %+v", list)
			}
		}},
		{"the commit after a partner call", func(t *testing.T, e *Engine, fs *faultyStore, procs map[string]*interp.Version, _ *inProcessPartners, ow *flakyPartner) {
			fs.plan(1, 1) // before the call (the reply leaves); the end's fails
			// (The run's error comes after the reply: the end's commit.)
			if r := dispatch(t, e, procs["Recover"], testReq("CA-1", "1", "")); r.out == nil || r.err == nil {
				t.Fatalf("reply: %+v", r)
			}
			ow.mu.Lock()
			got := len(ow.got)
			ow.mu.Unlock()
			if got != 1 || fs.failures() != 1 {
				t.Errorf("partner calls %d, failed commits %d; want 1 1", got, fs.failures())
			}
			// The store keeps the checkpoint before the call: the failed
			// run's state after it is not stored, no later commit of the
			// run was made.
			list := verifyStore(t, e, fs)
			if len(list) != 1 || list[0].State != "running" || list[0].Variables["presp"] != "" {
				t.Fatalf("stored instance: %+v", list)
			}
			if s := fs.Stats(); s.Checkpoints != 1 {
				t.Errorf("%d checkpoints stored, want 1", s.Checkpoints)
			}
		}},
		{"a reliable one-way send", func(t *testing.T, e *Engine, fs *faultyStore, procs map[string]*interp.Version, _ *inProcessPartners, ow *flakyPartner) {
			fs.plan(0, 1)
			if r := dispatch(t, e, procs["OneWay"], testReq("OW-1", "1", "")); r.err == nil {
				t.Fatalf("one-way run acknowledged although its commit failed: %+v", r)
			}
			if len(fs.seen) != 1 || len(fs.seen[0].Outbox) != 1 {
				t.Fatalf("the failed commit did not carry the outbox message: %+v", fs.seen)
			}
			runOneWay(t, e, procs["OneWay"], "OW-2")
			select {
			case <-ow.ch:
			case <-time.After(5 * time.Second):
				t.Fatal("the stored outbox message was not delivered")
			}
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				n := 0
				_ = fs.Outbox(func(persist.OutboxMessage) bool { n++; return true })
				if n == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the delivered message was not acknowledged")
				}
			}
			ow.mu.Lock()
			defer ow.mu.Unlock()
			if len(ow.got) != 1 || ow.got[0] != "OW-2" {
				t.Errorf("partner received %v, want only OW-2 (OW-1's commit failed)", ow.got)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, fs, procs, ip, ow := faultyEngine(t, filepath.Join(t.TempDir(), "orchd.db"))
			tt.run(t, e, fs, procs, ip, ow)
			verifyStore(t, e, fs)
		})
	}
}

// TestFailedCommitsAtRandom runs approvals while a fifth of the commits
// fail, at whatever point of a run they come, and retries each exchange
// until it is acknowledged: at every step the store agrees with the
// answers, and in the end every approval is decided exactly as its one
// acknowledged decision said.
func TestFailedCommitsAtRandom(t *testing.T) {
	e, fs, procs, _, _ := faultyEngine(t, filepath.Join(t.TempDir(), "orchd.db"))
	fs.mu.Lock()
	fs.chance, fs.rnd = 0.2, rand.New(rand.NewPCG(1, 2))
	fs.mu.Unlock()
	ap := procs["OrderApproval"]
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := fmt.Sprintf("RND-%d", i)
			want := map[bool]string{true: "APPROVED", false: "REJECTED"}[i%2 == 0]
			for try := 0; ; try++ {
				st, err := approvalCall(t, e, ap, "requestApproval", map[string]string{"requestId": id, "amount": "3", "requester": "ann"})
				if err == nil && st == "PENDING" {
					break
				}
				if err == nil || try > 50 {
					errs <- fmt.Errorf("%s: request: %q %v", id, st, err)
					return
				}
			}
			for try := 0; ; try++ {
				st, err := approvalCall(t, e, ap, "decide", map[string]string{"requestId": id, "approved": fmt.Sprint(i%2 == 0), "approver": "bob"})
				if err == nil && st == want {
					return
				}
				if err == nil || try > 50 {
					errs <- fmt.Errorf("%s: decision: %q %v", id, st, err)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	list := verifyStore(t, e, fs)
	byID := map[string]int{}
	for _, in := range list {
		id := in.Correlations["byRequest"]
		byID[id]++
		want := map[bool]string{true: "APPROVED", false: "REJECTED"}[strings.HasSuffix(id, "0") || strings.HasSuffix(id, "2") || strings.HasSuffix(id, "4") || strings.HasSuffix(id, "6") || strings.HasSuffix(id, "8")]
		if in.State != "completed" || !strings.Contains(in.Variables["status"], want) {
			t.Errorf("%s: %s %s, want completed %s", id, in.State, in.Variables["status"], want)
		}
	}
	if len(byID) != n {
		t.Errorf("%d approvals stored, want %d", len(byID), n)
	}
	for id, k := range byID {
		if k != 1 {
			t.Errorf("%s stored %d times", id, k)
		}
	}
	t.Logf("%d commits failed, %d instances stored", fs.failures(), len(list))
}

// replyLaterBPEL receives run, waits for a correlated notify, and only
// then replies to run: its client waits across two runs.
const replyLaterBPEL = `<?xml version="1.0" encoding="UTF-8"?>
<process name="Later" targetNamespace="urn:test:process"
    xmlns="http://docs.oasis-open.org/wsbpel/2.0/process/executable"
    xmlns:tns="urn:test">
  <import importType="http://schemas.xmlsoap.org/wsdl/" location="test.wsdl" namespace="urn:test"/>
  <partnerLinks>
    <partnerLink name="client" partnerLinkType="tns:TestLT" myRole="provider"/>
    <partnerLink name="go" partnerLinkType="tns:PartnerLT" myRole="partner"/>
  </partnerLinks>
  <variables>
    <variable name="in" messageType="tns:req"/>
    <variable name="in2" messageType="tns:req"/>
    <variable name="out" messageType="tns:resp"/>
  </variables>
  <correlationSets><correlationSet name="byId" properties="tns:orderId"/></correlationSets>
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes">
      <correlations><correlation set="byId" initiate="yes"/></correlations>
    </receive>
    <receive partnerLink="go" operation="notify" variable="in2">
      <correlations><correlation set="byId" initiate="no"/></correlations>
    </receive>
    <assign>
      <copy><from><literal><tns:resp><tns:a>done</tns:a></tns:resp></literal></from><to variable="out" part="payload"/></copy>
    </assign>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>
</process>`

const replyLaterDeploy = `<?xml version="1.0" encoding="UTF-8"?>
<deploy xmlns="http://www.apache.org/ode/schemas/dd/2007/03" xmlns:pns="urn:test:process" xmlns:tns="urn:test">
  <process name="pns:Later">
    <in-memory>false</in-memory>
    <provide partnerLink="client"><service name="tns:TestService" port="TestPort"/></provide>
    <provide partnerLink="go"><service name="tns:PartnerService" port="PartnerPort"/></provide>
  </process>
</deploy>`

// TestFailedCommitKeepsEarlierRequests: a request whose reply a later run
// gives keeps waiting when the run in between fails to commit, and gets
// its reply from the run after that.
func TestFailedCommitKeepsEarlierRequests(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "later")
	copyDir(t, filepath.Join(bundlesDir, "rt-oneway"), dir)
	for name, text := range map[string]string{"Test.bpel": replyLaterBPEL, "deploy.xml": replyLaterDeploy} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	procs, err := loadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := procs[0]
	st, err := persist.Open(filepath.Join(t.TempDir(), "orchd.db"), persist.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fs := &faultyStore{Store: st}
	e := NewEngine(Options{Store: fs, MessageHold: -1})
	if err := e.Deploy(p); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	send := func(service, op string, n string, respond func(*exchange.Message, *exchange.Fault)) error {
		for _, ep := range p.Endpoints {
			if ep.Service.Local == service {
				o := opNamed(ep, op)
				m := exchange.NewMessage(o.Input.Name)
				m.Parts["payload"] = testReq("L-1", n, "")
				return e.Dispatch(context.Background(), &exchange.Exchange{Endpoint: ep, Operation: o, Input: m, Respond: respond})
			}
		}
		return fmt.Errorf("no service %s", service)
	}
	ran := make(chan clientResult, 1)
	go func() {
		var r clientResult
		r.err = send("TestService", "run", "1", func(m *exchange.Message, f *exchange.Fault) { r.out, r.fault = m, f })
		ran <- r
	}()
	notify := func() error { return send("PartnerService", "notify", "2", nil) }
	// The instance waits for notify once its first commit holds.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if list := storedInstances(t, e, mgmt.Query{State: "waiting"}); len(list) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the instance never waited for notify")
		}
	}
	fs.plan(0, 1)
	if err := notify(); err == nil {
		t.Fatal("notify acknowledged although its commit failed")
	}
	select {
	case r := <-ran:
		t.Fatalf("the waiting client was answered by the run that failed: %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
	if err := notify(); err != nil {
		t.Fatalf("notify sent again: %v", err)
	}
	select {
	case r := <-ran:
		if r.err != nil || r.out == nil || childText(r.out.Part("payload"), "a") != "done" {
			t.Fatalf("the waiting client got %+v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting client never got the reply the later run gave")
	}
	verifyStore(t, e, fs)
}
