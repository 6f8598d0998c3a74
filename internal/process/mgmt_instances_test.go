package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/soap"
)

// eventLog is an events listener that keeps what it gets.
type eventLog struct {
	mu  sync.Mutex
	evs []events.Event
}

func (l *eventLog) Name() string { return "test" }

func (l *eventLog) Deliver(_ context.Context, batch []events.Event) error {
	l.mu.Lock()
	l.evs = append(l.evs, batch...)
	l.mu.Unlock()
	return nil
}

// all returns the events that came.
func (l *eventLog) all() []events.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.evs)
}

// has reports whether an event of kind k for instance id came.
func (l *eventLog) has(k events.Kind, id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.evs, func(ev events.Event) bool { return ev.Kind == k && ev.Instance == id })
}

// mgmtEnv is a real engine on a real store, with the persistent approval
// example and the mgmt-recover fixture, whose partner is a real SOAP
// server on loopback that fails while failing is set. restart closes
// everything and starts again on the same file, as orchd does.
type mgmtEnv struct {
	t       *testing.T
	path    string
	st      *persist.Store
	e       *Engine
	ap, rec *interp.Version
	events  *eventLog
	failing atomic.Bool
	calls   atomic.Int32
	partner *httptest.Server
}

func newMgmtEnv(t *testing.T) *mgmtEnv {
	m := &mgmtEnv{t: t, path: filepath.Join(t.TempDir(), "orchd.db"), events: &eventLog{}}
	m.partner = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.calls.Add(1)
		if m.failing.Load() {
			http.Error(w, "partner down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		fmt.Fprint(w, `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>`+
			`<t:resp xmlns:t="urn:test"><t:a>P-ok</t:a></t:resp></s:Body></s:Envelope>`)
	}))
	t.Cleanup(m.partner.Close)
	t.Cleanup(func() { m.stop() })
	m.start()
	return m
}

func (m *mgmtEnv) start() {
	t := m.t
	t.Helper()
	st, err := persist.Open(m.path, persist.Options{MaxBatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	d, err := events.NewDispatcher(events.Options{Budget: 10 * time.Second}, m.events)
	if err != nil {
		t.Fatal(err)
	}
	client := soap.NewClient(soap.ClientOptions{Timeout: 5 * time.Second})
	e := NewEngine(Options{Store: st, Events: d, Partners: func(ep *exchange.Endpoint) exchange.Partner {
		c := *ep
		c.Address = m.partner.URL + "/partner"
		return client.Partner(&c)
	}})
	m.st, m.e = st, e
	for _, dir := range []string{"../../deploy/order-approval", filepath.Join(bundlesDir, "mgmt-recover")} {
		procs, err := loadBundle(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range procs {
			p.Number = 3
			p.Events = events.All
		}
		if err := e.Deploy(procs...); err != nil {
			t.Fatal(err)
		}
		if procs[0].Name.Local == "OrderApproval" {
			m.ap = procs[0]
		} else {
			m.rec = procs[0]
		}
	}
	if _, err := e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func (m *mgmtEnv) stop() {
	if m.e == nil {
		return
	}
	m.e.Close()
	if err := m.e.opts.Events.Close(context.Background()); err != nil {
		m.t.Error(err)
	}
	if err := m.st.Close(); err != nil {
		m.t.Error(err)
	}
	m.e = nil
}

func (m *mgmtEnv) restart() {
	m.t.Helper()
	m.stop()
	m.start()
}

// request starts an approval with requestId id (and timeout, if set).
func (m *mgmtEnv) request(id, timeout string) {
	m.t.Helper()
	f := map[string]string{"requestId": id, "amount": "3", "requester": "ann"}
	if timeout != "" {
		f["timeout"] = timeout
	}
	if st, err := approvalCall(m.t, m.e, m.ap, "requestApproval", f); err != nil || st != "PENDING" {
		m.t.Fatalf("request %s: %q %v", id, st, err)
	}
}

func (m *mgmtEnv) decide(id string) (string, error) {
	m.t.Helper()
	return approvalCall(m.t, m.e, m.ap, "decide", map[string]string{"requestId": id, "approved": "true", "approver": "bob"})
}

// soapDecide posts a decision for request id to the approval's
// endpoint through the real SOAP front door (soap.Server over loopback).
func (m *mgmtEnv) soapDecide(id string) (int, string) {
	m.t.Helper()
	fd := soap.NewServer(soap.ServerOptions{})
	if err := fd.Handle(m.ap.Endpoints[0], m.e); err != nil {
		m.t.Fatal(err)
	}
	srv := httptest.NewServer(fd)
	defer srv.Close()
	body := `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>` +
		`<a:decision xmlns:a="urn:example:approval"><a:requestId>` + id + `</a:requestId><a:approved>true</a:approved><a:approver>bob</a:approver></a:decision>` +
		`</s:Body></s:Envelope>`
	req, err := http.NewRequest(http.MethodPost, srv.URL+m.ap.Endpoints[0].Path, strings.NewReader(body))
	if err != nil {
		m.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	req.Header.Set("SOAPAction", `"urn:example:approval#decide"`)
	resp, err := srv.Client().Do(req)
	if err != nil {
		m.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// idOf finds the approval instance of request id by its correlation value.
func (m *mgmtEnv) idOf(id string) string {
	m.t.Helper()
	pg, err := m.e.QueryInstances(context.Background(), mgmt.Query{Process: "OrderApproval", Correlation: id})
	if err != nil || len(pg.Instances) != 1 {
		m.t.Fatalf("instance of request %s: %+v %v", id, pg, err)
	}
	return pg.Instances[0].ID
}

func (m *mgmtEnv) detail(id string) *mgmt.InstanceDetail {
	m.t.Helper()
	d, err := m.e.InstanceDetail(context.Background(), id)
	if err != nil {
		m.t.Fatalf("detail %s: %v", id, err)
	}
	return d
}

func (m *mgmtEnv) act(id string, a mgmt.Action) {
	m.t.Helper()
	if err := m.e.Act(context.Background(), id, a); err != nil {
		m.t.Fatalf("%s %s: %v", a, id, err)
	}
}

func TestQueryInstancesFiltersAndPaging(t *testing.T) {
	m := newMgmtEnv(t)
	ctx := context.Background()
	before := time.Now()
	for i := range 25 {
		m.request(fmt.Sprintf("Q-%02d", i), "")
	}
	for i := range 5 {
		if st, err := m.decide(fmt.Sprintf("Q-%02d", i)); err != nil || st != "APPROVED" {
			t.Fatalf("decide: %q %v", st, err)
		}
	}
	mid := m.idOf("Q-12")
	midStarted := m.detail(mid).Started
	tests := []struct {
		name  string
		q     mgmt.Query
		want  int // instances over all pages
		pages int
	}{
		{name: "all, pages of 10", q: mgmt.Query{Limit: 10}, want: 25, pages: 3},
		{name: "waiting", q: mgmt.Query{State: "waiting", Limit: 7}, want: 20, pages: 3},
		{name: "completed by {ns}local", q: mgmt.Query{State: "completed", Process: "{urn:example:approval:process}OrderApproval"}, want: 5, pages: 1},
		{name: "correlation in a set", q: mgmt.Query{Correlation: "Q-07", CorrelationSet: "byRequest"}, want: 1, pages: 1},
		{name: "correlation in another set", q: mgmt.Query{Correlation: "Q-07", CorrelationSet: "other"}, want: 0, pages: 1},
		{name: "version", q: mgmt.Query{Version: 3, Limit: 20}, want: 25, pages: 2},
		{name: "other version", q: mgmt.Query{Version: 4}, want: 0, pages: 1},
		{name: "other process", q: mgmt.Query{Process: "Recover"}, want: 0, pages: 1},
		{name: "started from the middle", q: mgmt.Query{StartedAfter: midStarted}, want: 13, pages: 1},
		{name: "started up to the middle", q: mgmt.Query{StartedAfter: before, StartedBefore: midStarted, Limit: 5}, want: 13, pages: 3},
		{name: "active in the future", q: mgmt.Query{ActiveAfter: time.Now().Add(time.Hour)}, want: 0, pages: 1},
		{name: "in-memory only (scope local)", q: mgmt.Query{Scope: mgmt.ScopeLocal}, want: 0, pages: 1},
		{name: "scope local from the store's cursor", q: mgmt.Query{Scope: mgmt.ScopeLocal, After: "~"}, want: 0, pages: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			seen := map[string]bool{}
			var last string
			pages := 0
			for {
				pages++
				pg, err := m.e.QueryInstances(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				limit := max(q.Limit, 1)
				if q.Limit == 0 {
					limit = defaultPageSize
				}
				if len(pg.Instances) > limit || pg.Scanned > maxPageScan || pg.Scanned < len(pg.Instances) {
					t.Fatalf("page of %d instances scanned %d (limit %d)", len(pg.Instances), pg.Scanned, limit)
				}
				for _, in := range pg.Instances {
					if seen[in.ID] {
						t.Fatalf("instance %s listed twice", in.ID)
					}
					if last != "" && in.ID > last {
						t.Fatalf("%s listed after %s: not newest first", in.ID, last)
					}
					seen[in.ID], last = true, in.ID
					if in.Process != m.ap.Name.String() || in.Version != 3 || in.Correlations["byRequest"] == "" || in.Started.IsZero() {
						t.Errorf("listed %+v", in)
					}
				}
				if pg.Next == "" {
					break
				}
				if pages > 10 {
					t.Fatal("paging does not end")
				}
				q.After = pg.Next
			}
			if len(seen) != tc.want || pages != tc.pages {
				t.Errorf("%d instances in %d pages, want %d in %d", len(seen), pages, tc.want, tc.pages)
			}
		})
	}
	// A page of 10 with no filter reads 10 records, not the store.
	if pg, err := m.e.QueryInstances(ctx, mgmt.Query{Limit: 10}); err != nil || pg.Scanned != 10 || pg.Next == "" {
		t.Errorf("first page: %+v %v", pg, err)
	}
	if _, err := m.e.QueryInstances(ctx, mgmt.Query{State: "sleeping"}); !errors.Is(err, mgmt.ErrInvalid) {
		t.Errorf("unknown state: %v", err)
	}
}

func TestQueryInMemoryInstances(t *testing.T) {
	e, p := approvalInMemory(t)
	ctx := context.Background()
	for _, id := range []string{"M-1", "M-2", "M-3"} {
		if st, err := approvalCall(t, e, p, "requestApproval", map[string]string{"requestId": id, "amount": "1", "requester": "ann"}); err != nil || st != "PENDING" {
			t.Fatal(st, err)
		}
	}
	pg, err := e.QueryInstances(ctx, mgmt.Query{Limit: 2})
	if err != nil || len(pg.Instances) != 2 || pg.Next == "" || !pg.Instances[0].InMemory || pg.Instances[0].State != "waiting" ||
		pg.Instances[0].Correlations["byRequest"] != "M-3" {
		t.Fatalf("first page: %+v %v", pg, err)
	}
	pg2, err := e.QueryInstances(ctx, mgmt.Query{Limit: 2, After: pg.Next})
	if err != nil || len(pg2.Instances) != 1 || pg2.Next != "" || pg2.Instances[0].Correlations["byRequest"] != "M-1" {
		t.Fatalf("second page: %+v %v", pg2, err)
	}
	d, err := e.InstanceDetail(ctx, pg2.Instances[0].ID)
	if err != nil || !strings.Contains(d.Variables["request"], "M-1") || len(d.Branches) != 1 ||
		!strings.Contains(d.Branches[0].Waiting, "message decide on client") || len(d.Alarms) != 1 {
		t.Fatalf("detail: %+v %v", d, err)
	}
}

func TestInstanceDetailOfWaitingInstance(t *testing.T) {
	m := newMgmtEnv(t)
	m.request("D-1", "P1D")
	id := m.idOf("D-1")
	for round := range 2 {
		d := m.detail(id)
		if d.State != "waiting" || d.Version != 3 || d.Fingerprint != m.ap.Fingerprint || d.Correlations["byRequest"] != "D-1" || !strings.Contains(d.Variables["status"], "PENDING") ||
			!strings.Contains(d.Variables["request"], "D-1") {
			t.Fatalf("round %d: %+v", round, d)
		}
		if len(d.Branches) != 1 || d.Branches[0].Activity != "pick awaitDecision" || !strings.Contains(d.Branches[0].Position, ".bpel:") ||
			!strings.Contains(d.Branches[0].Waiting, "message decide on client or alarm at ") {
			t.Errorf("round %d: branches %+v", round, d.Branches)
		}
		if len(d.Alarms) != 1 || d.Alarms[0].Sub(d.Started) < 23*time.Hour || d.Alarms[0].Sub(d.Started) > 25*time.Hour {
			t.Errorf("round %d: alarms %v (started %v)", round, d.Alarms, d.Started)
		}
		if !slices.Equal(d.Actions, []mgmt.Action{mgmt.Suspend, mgmt.Terminate, mgmt.Delete}) || d.Failure != nil {
			t.Errorf("round %d: actions %v failure %+v", round, d.Actions, d.Failure)
		}
		m.restart()
	}
	if _, err := m.e.InstanceDetail(context.Background(), "01NOSUCHINSTANCE0000000000"); !errors.Is(err, mgmt.ErrNotFound) {
		t.Errorf("unknown instance: %v", err)
	}
}

func TestSuspendRefusesMessagesUntilResume(t *testing.T) {
	m := newMgmtEnv(t)
	m.request("S-1", "")
	id := m.idOf("S-1")
	m.act(id, mgmt.Suspend)
	if err := m.e.Act(context.Background(), id, mgmt.Suspend); !errors.Is(err, mgmt.ErrConflict) {
		t.Errorf("suspend twice: %v", err)
	}
	for round := range 2 {
		d := m.detail(id)
		if d.State != "suspended" || !slices.Contains(d.Actions, mgmt.Resume) || slices.Contains(d.Actions, mgmt.Retry) {
			t.Fatalf("round %d: %s %v", round, d.State, d.Actions)
		}
		_, err := m.decide("S-1")
		if err == nil || !strings.Contains(err.Error(), "is suspended") || exchange.KindOf(err) == exchange.KindClient {
			t.Fatalf("round %d: a message for a suspended instance: %v (kind %v)", round, err, exchange.KindOf(err))
		}
		// Through the SOAP front door: a Server fault that says so.
		if code, body := m.soapDecide("S-1"); code != http.StatusInternalServerError ||
			!strings.Contains(body, "<faultcode>soapenv:Server</faultcode>") && !strings.Contains(body, ":Server</faultcode>") ||
			!strings.Contains(body, "instance "+id+" of process OrderApproval is suspended (suspended by an operator)") {
			t.Fatalf("round %d: front door answered %d %s", round, code, body)
		}
		m.restart()
	}
	if !m.events.has(events.InstanceSuspended, id) {
		t.Error("no instanceSuspended event")
	}
	m.act(id, mgmt.Resume)
	if d := m.detail(id); d.State != "waiting" {
		t.Fatalf("resumed: %s", d.State)
	}
	if st, err := m.decide("S-1"); err != nil || st != "APPROVED" {
		t.Fatalf("decide after resume: %q %v", st, err)
	}
	if d := m.detail(id); d.State != "completed" {
		t.Errorf("after decision: %s", d.State)
	}
	m.stop() // delivers the events
	if !m.events.has(events.InstanceResumed, id) {
		t.Error("no instanceResumed event")
	}
}

func TestTimerDueWhileSuspendedFiresOnResume(t *testing.T) {
	m := newMgmtEnv(t)
	m.request("T-1", "PT1S")
	id := m.idOf("T-1")
	m.act(id, mgmt.Suspend)
	due := m.detail(id).Alarms[0]
	// Let the timer come due and fire (it finds the instance suspended),
	// and restart: recovery schedules it again, and it fires at once.
	// Each firing is waited for, not a time.
	if m.e.pendingTimers() != 1 {
		t.Fatalf("%d timers pending, want the suspended instance's", m.e.pendingTimers())
	}
	waitTimersFired(t, m.e)
	if time.Now().Before(due) {
		t.Fatalf("the timer fired before it was due (%v)", due)
	}
	m.restart()
	waitTimersFired(t, m.e)
	if d := m.detail(id); d.State != "suspended" || !strings.Contains(d.Variables["status"], "PENDING") {
		t.Fatalf("a suspended instance's timer ran it: %s %q", d.State, d.Variables["status"])
	}
	m.act(id, mgmt.Resume)
	if d := m.detail(id); d.State != "completed" || !strings.Contains(d.Variables["status"], "EXPIRED") || len(d.Alarms) != 0 {
		t.Fatalf("after resume: %s %q %v", d.State, d.Variables["status"], d.Alarms)
	}
}

func TestTerminateWaitingInstances(t *testing.T) {
	t.Run("persistent", func(t *testing.T) {
		m := newMgmtEnv(t)
		m.request("X-1", "P1D")
		id := m.idOf("X-1")
		m.act(id, mgmt.Terminate)
		m.restart()
		d := m.detail(id)
		if d.State != "terminated" || len(d.Alarms) != 0 || !slices.Equal(d.Actions, []mgmt.Action{mgmt.Delete}) {
			t.Fatalf("terminated: %+v", d)
		}
		if _, err := m.decide("X-1"); err == nil || exchange.KindOf(err) != exchange.KindClient {
			t.Errorf("a message for a terminated instance: %v", err)
		}
		if err := m.e.Act(context.Background(), id, mgmt.Resume); !errors.Is(err, mgmt.ErrConflict) {
			t.Errorf("resume a terminated instance: %v", err)
		}
		m.act(id, mgmt.Delete)
		if _, err := m.e.InstanceDetail(context.Background(), id); !errors.Is(err, mgmt.ErrNotFound) {
			t.Errorf("deleted: %v", err)
		}
		// Delete of a live instance terminates it first.
		m.request("X-2", "")
		id2 := m.idOf("X-2")
		m.act(id2, mgmt.Delete)
		if pg, err := m.e.QueryInstances(context.Background(), mgmt.Query{}); err != nil || len(pg.Instances) != 0 {
			t.Errorf("after delete: %+v %v", pg, err)
		}
		m.stop()
		if !m.events.has(events.InstanceTerminated, id) || !m.events.has(events.InstanceTerminated, id2) {
			t.Error("no instanceTerminated event")
		}
	})
	t.Run("in-memory", func(t *testing.T) {
		e, p := approvalInMemory(t)
		ctx := context.Background()
		for _, id := range []string{"Y-1", "Y-2"} {
			if _, err := approvalCall(t, e, p, "requestApproval", map[string]string{"requestId": id, "amount": "1", "requester": "ann"}); err != nil {
				t.Fatal(err)
			}
		}
		pg, err := e.QueryInstances(ctx, mgmt.Query{Correlation: "Y-1"})
		if err != nil || len(pg.Instances) != 1 {
			t.Fatalf("%+v %v", pg, err)
		}
		id := pg.Instances[0].ID
		if err := e.Act(ctx, id, mgmt.Suspend); err != nil {
			t.Fatal(err)
		}
		if pg, _ := e.QueryInstances(ctx, mgmt.Query{State: "suspended"}); len(pg.Instances) != 1 || pg.Instances[0].ID != id {
			t.Fatalf("suspended: %+v", pg)
		}
		if _, err := approvalCall(t, e, p, "decide", map[string]string{"requestId": "Y-1", "approved": "true"}); err == nil || !strings.Contains(err.Error(), "is suspended") {
			t.Fatalf("a message for a suspended in-memory instance: %v", err)
		}
		if err := e.Act(ctx, id, mgmt.Terminate); err != nil {
			t.Fatal(err)
		}
		if pg, _ := e.QueryInstances(ctx, mgmt.Query{}); len(pg.Instances) != 1 || pg.Instances[0].Correlations["byRequest"] != "Y-2" {
			t.Fatalf("after terminate: %+v", pg)
		}
		if _, err := e.InstanceDetail(ctx, id); !errors.Is(err, mgmt.ErrNotFound) {
			t.Errorf("terminated in-memory instance: %v", err)
		}
		if _, err := approvalCall(t, e, p, "decide", map[string]string{"requestId": "Y-1", "approved": "true"}); err == nil {
			t.Error("a decision reached a terminated instance")
		}
	})
}

func TestRecoveryActionsOnFailedInvoke(t *testing.T) {
	tests := []struct {
		action mgmt.Action
		state  string
		status string
		calls  int32 // partner calls, the failed one included
	}{
		{mgmt.Retry, "completed", "ok:P-ok/end", 2},
		// The fault no handler catches (that is why the instance was
		// suspended) ends the instance.
		{mgmt.Fault, "faulted", "init", 1},
		// The invoke completes without effect: the activity after it runs
		// with no answer in $presp.
		{mgmt.Cancel, "completed", "ok:/end", 1},
	}
	for _, tc := range tests {
		t.Run(string(tc.action), func(t *testing.T) {
			m := newMgmtEnv(t)
			m.failing.Store(true)
			r := dispatch(t, m.e, m.rec, testReq("R-1", "1", ""))
			if r.err != nil || r.out == nil || childText(r.out.Part("payload"), "a") != "accepted" {
				t.Fatalf("start: %+v", r)
			}
			pg, err := m.e.QueryInstances(context.Background(), mgmt.Query{Process: "Recover"})
			if err != nil || len(pg.Instances) != 1 {
				t.Fatalf("%+v %v", pg, err)
			}
			id := pg.Instances[0].ID
			for round := range 2 {
				d := m.detail(id)
				f := d.Failure
				if d.State != "suspended" || f == nil || f.Activity != "invoke callPartner" || !strings.Contains(f.Position, "Recover.bpel:") ||
					!strings.Contains(f.Reason, "503") || f.Attempts != 1 || !strings.Contains(d.Fault, "503") {
					t.Fatalf("round %d: %+v failure %+v", round, d, f)
				}
				if !slices.Contains(d.Actions, tc.action) || slices.Contains(d.Actions, mgmt.Resume) {
					t.Errorf("round %d: actions %v", round, d.Actions)
				}
				if len(d.Branches) != 1 || d.Branches[0].Activity != "invoke callPartner" || !strings.Contains(d.Branches[0].Waiting, "operator") {
					t.Errorf("round %d: branches %+v", round, d.Branches)
				}
				if st := activityStatus(d, "invoke", "callPartner"); st != mgmt.ActivityFailed {
					t.Errorf("round %d: invoke callPartner is %s, want failed", round, st)
				}
				if st := activityStatus(d, "reply", "accepted"); st != mgmt.ActivityCompleted {
					t.Errorf("round %d: reply accepted is %s, want completed", round, st)
				}
				if err := m.e.Act(context.Background(), id, mgmt.Resume); !errors.Is(err, mgmt.ErrConflict) {
					t.Errorf("round %d: resume of a failed instance: %v", round, err)
				}
				m.restart()
			}
			m.failing.Store(false)
			m.act(id, tc.action)
			d := m.detail(id)
			if d.State != tc.state || d.Variables["status"] != tc.status {
				t.Errorf("after %s: %s %q", tc.action, d.State, d.Variables["status"])
			}
			if n := m.calls.Load(); n != tc.calls {
				t.Errorf("%d partner calls, want %d", n, tc.calls)
			}
		})
	}
}

func TestRetryThatFailsAgainSuspendsAgain(t *testing.T) {
	m := newMgmtEnv(t)
	m.failing.Store(true)
	dispatch(t, m.e, m.rec, testReq("R-2", "1", ""))
	pg, _ := m.e.QueryInstances(context.Background(), mgmt.Query{State: "suspended"})
	if len(pg.Instances) != 1 {
		t.Fatalf("%+v", pg)
	}
	id := pg.Instances[0].ID
	m.act(id, mgmt.Retry)
	if d := m.detail(id); d.State != "suspended" || d.Failure == nil || d.Failure.Attempts != 2 {
		t.Fatalf("after a failed retry: %s %+v", d.State, d.Failure)
	}
	m.failing.Store(false)
	m.act(id, mgmt.Retry)
	if d := m.detail(id); d.State != "completed" || d.Variables["status"] != "ok:P-ok/end" {
		t.Fatalf("after retry: %s %q", d.State, d.Variables["status"])
	}
}

func TestInMemoryInstanceListedWhileItWaitsForPartners(t *testing.T) {
	release := make(chan struct{})
	e, procs := deployBundle(t, "mgmt-flow", func(*exchange.Endpoint) exchange.Partner {
		return exchange.PartnerFunc(func(ctx context.Context, c *exchange.Call) (*exchange.Message, error) {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return partnerAnswer(c)
		})
	})
	ctx := context.Background()
	done := make(chan clientResult, 1)
	go func() { done <- dispatch(t, e, procs[0], testReq("F-1", "1", "")) }()
	var id string
	for deadline := time.Now().Add(10 * time.Second); id == ""; {
		pg, err := e.QueryInstances(ctx, mgmt.Query{State: "running"})
		if err != nil {
			t.Fatal(err)
		}
		if len(pg.Instances) == 1 {
			id = pg.Instances[0].ID
			if !pg.Instances[0].InMemory || pg.Instances[0].Process != procs[0].Name.String() {
				t.Errorf("listed %+v", pg.Instances[0])
			}
		} else if time.Now().After(deadline) {
			t.Fatal("the instance was never listed as running")
		} else {
			time.Sleep(5 * time.Millisecond)
		}
	}
	d, err := e.InstanceDetail(ctx, id)
	if err != nil || d.State != "running" || len(d.Branches) < 2 || !slices.ContainsFunc(d.Branches, func(b mgmt.Branch) bool {
		return b.Activity == "invoke first" && b.Waiting == "partner answer"
	}) {
		t.Errorf("detail: %+v %v", d, err)
	}
	for act, want := range map[[2]string]string{{"receive", "start"}: mgmt.ActivityCompleted, {"flow", "both"}: mgmt.ActivityRunning,
		{"invoke", "first"}: mgmt.ActivityRunning, {"invoke", "second"}: mgmt.ActivityRunning, {"reply", "done"}: mgmt.ActivityNotReached} {
		if st := activityStatus(d, act[0], act[1]); st != want {
			t.Errorf("%s %s is %s, want %s", act[0], act[1], st, want)
		}
	}
	if err := e.Act(ctx, id, mgmt.Terminate); !errors.Is(err, mgmt.ErrConflict) {
		t.Errorf("terminate while running: %v", err)
	}
	close(release)
	if r := <-done; r.err != nil || r.out == nil {
		t.Fatalf("run: %+v", r)
	}
	if pg, err := e.QueryInstances(ctx, mgmt.Query{}); err != nil || len(pg.Instances) != 0 {
		t.Errorf("after the run: %+v %v", pg, err)
	}
}

func TestInMemoryTimerWaitsForResume(t *testing.T) {
	e, p := approvalInMemory(t)
	ctx := context.Background()
	if st, err := approvalCall(t, e, p, "requestApproval", map[string]string{"requestId": "W-1", "amount": "1", "requester": "ann", "timeout": "PT0.5S"}); err != nil || st != "PENDING" {
		t.Fatal(st, err)
	}
	pg, err := e.QueryInstances(ctx, mgmt.Query{})
	if err != nil || len(pg.Instances) != 1 {
		t.Fatalf("%+v %v", pg, err)
	}
	id := pg.Instances[0].ID
	if err := e.Act(ctx, id, mgmt.Suspend); err != nil {
		t.Fatal(err)
	}
	d, err := e.InstanceDetail(ctx, id)
	if err != nil || len(d.Alarms) != 1 || d.State != "suspended" {
		t.Fatalf("%+v %v", d, err)
	}
	// Once its timer has fired (and found it suspended), it is still
	// there, waiting.
	if e.pendingTimers() != 1 {
		t.Fatalf("%d timers pending, want the suspended instance's", e.pendingTimers())
	}
	waitTimersFired(t, e)
	if pg, _ := e.QueryInstances(ctx, mgmt.Query{State: "suspended"}); len(pg.Instances) != 1 {
		t.Fatalf("the timer ran a suspended instance: %+v", pg)
	}
	if err := e.Act(ctx, id, mgmt.Resume); err != nil {
		t.Fatal(err)
	}
	// Resume ran the alarm that came due: the instance ended (EXPIRED).
	if pg, _ := e.QueryInstances(ctx, mgmt.Query{}); len(pg.Instances) != 0 {
		t.Fatalf("after resume: %+v", pg)
	}
}

// waitTimersFired waits until every timer scheduled on e has fired: the
// event a check that a timer did nothing must follow, rather than a
// sleep past the due time (timers run late on a busy machine). Its bound,
// a minute, is for a hang.
func waitTimersFired(t *testing.T, e *Engine) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); e.pendingTimers() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d timers still pending after a minute", e.pendingTimers())
		}
	}
}
