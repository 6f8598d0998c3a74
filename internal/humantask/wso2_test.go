package humantask_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/hotdeploy"
	"github.com/orchd/orchd/internal/htclient"
	"github.com/orchd/orchd/internal/humantask"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process"
	"github.com/orchd/orchd/internal/soap"
)

// wso2Bundle is a bundle laid out as WSO2 BPS's ClaimsApproval sample:
// ClaimsApprovalProcess.bpel invoking the ApproveClaim task's service
// through a partner link with both roles, ClaimsApprovalTask.ht,
// htconfig.xml, the task's and the process's WSDLs, and an Apache ODE
// deploy.xml with nothing orchd-only in it.
const wso2Bundle = "../../testdata/wso2-humantask/ClaimsApproval"

// wso2Server is orchd serve's wiring of the process engine, the task
// engine, the SOAP front door, the WS-HT client API and the hot deployer
// over one bbolt store, on loopback.
type wso2Server struct {
	url    string
	engine *process.Engine
	tasks  *humantask.Engine
	events *recorder
	// deployer watches deploy, the deploy directory.
	deployer *hotdeploy.Deployer
	deploy   string
	// logs are the process engine's.
	logs *syncBuffer
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// recorder is an events.Listener keeping what it is given.
type recorder struct {
	mu  sync.Mutex
	evs []events.Event
}

func (r *recorder) Name() string { return "recorder" }

func (r *recorder) Deliver(_ context.Context, batch []events.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, batch...)
	return nil
}

// has reports whether an event of kind was delivered for instance whose
// name (the activity's name, when it has one) is name.
func (r *recorder) has(kind events.Kind, instance, name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.evs {
		if e.Kind == kind && e.Instance == instance && e.Name == name {
			return true
		}
	}
	return false
}

// startWSO2Server serves bundle; fallback binds the partner endpoints
// no task publishes (nil: none).
func startWSO2Server(t *testing.T, bundle string, fallback func(ep *exchange.Endpoint) exchange.Partner) *wso2Server {
	t.Helper()
	s := serveWSO2(t, fallback, map[string]string{"ClaimsApproval": bundle})
	bs, err := s.deployer.Bundles()
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || bs[0].State != "deployed" {
		t.Fatalf("bundles %+v, want ClaimsApproval deployed", bs)
	}
	return s
}

// serveWSO2 serves the folders of bundles (deploy directory name ->
// source folder), copied into a deploy directory and polled in; fallback
// binds the partner endpoints no task publishes (nil: none).
func serveWSO2(t *testing.T, fallback func(ep *exchange.Endpoint) exchange.Partner, bundles map[string]string) *wso2Server {
	t.Helper()
	data := t.TempDir()
	st, err := persist.Open(filepath.Join(data, "orchd.db"), persist.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	var lines []string
	for _, p := range [][2]string{{"clerk1", "regionalClerksRole"}, {"manager1", "regionalManagerRole"}} {
		h, err := bcrypt.GenerateFromPassword([]byte(p[0]+"-pw"), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, p[0]+":"+string(h)+":"+p[1])
	}
	pf := filepath.Join(data, "people")
	if err := os.WriteFile(pf, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	people, err := humantask.LoadDirectory(pf, nil)
	if err != nil {
		t.Fatal(err)
	}
	var engine *process.Engine
	tasks := humantask.New(humantask.Options{Store: st, Directory: people,
		Callbacks: func(ep *exchange.Endpoint) exchange.Partner { return engine.CallbackPartner(ep) }})
	t.Cleanup(tasks.Close)
	front := soap.NewServer(soap.ServerOptions{})
	mux := http.NewServeMux()
	mux.Handle("/", front)
	mux.Handle(htclient.Path, &htclient.Handler{Tasks: tasks})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	rec := &recorder{}
	disp, err := events.NewDispatcher(events.Options{Budget: 10 * time.Second}, rec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = disp.Close(context.Background()) })
	logs := &syncBuffer{}
	engine = process.NewEngine(process.Options{Store: st, BaseURL: srv.URL, Events: disp, OutboxRetry: 20 * time.Millisecond,
		Logger:   slog.New(slog.NewTextHandler(logs, nil)),
		Partners: tasks.Partners(fallback), InstanceEnded: tasks.InstanceEnded})
	t.Cleanup(engine.Close)
	dir := t.TempDir()
	d, err := hotdeploy.New(hotdeploy.Options{Dir: dir, Data: data, Engine: engine, Front: front, Tasks: tasks})
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range bundles {
		if err := os.CopyFS(filepath.Join(dir, name), os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	d.Poll()
	d.Poll()
	return &wso2Server{url: srv.URL, engine: engine, tasks: tasks, events: rec, deployer: d, deploy: dir, logs: logs}
}

// copyBundle copies the WSO2 bundle to a new directory, without the
// files named in drop, and returns the directory.
func copyBundle(t *testing.T, drop ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(wso2Bundle)); err != nil {
		t.Fatal(err)
	}
	for _, f := range drop {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// post sends a SOAP 1.1 request and returns the status and body.
func post(t *testing.T, url, action, user, body string) (int, string) {
	t.Helper()
	env := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` + body + `</soapenv:Body></soapenv:Envelope>`
	req, err := http.NewRequest("POST", url, strings.NewReader(env))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	req.Header.Set("SOAPAction", `"`+action+`"`)
	if user != "" {
		req.SetBasicAuth(user, user+"-pw")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// postClaim posts WSO2's sample claim to the process.
func postClaim(t *testing.T, s *wso2Server) {
	t.Helper()
	code, body := post(t, s.url+"/services/ClaimsApprovalProcessService",
		"http://www.wso2.org/humantask/claimsapprovalprocessservice.wsdl/claimsApprovalProcessOperation", "",
		`<cla:ClaimApprovalProcessInput xmlns:cla="http://www.wso2.org/humantask/claimsapprovalprocessservice.wsdl">
  <cla:custID>C002</cla:custID><cla:custFName>Waruna</cla:custFName><cla:custLName>Ranasinghe</cla:custLName>
  <cla:amount>10000</cla:amount><cla:region>Gampaha</cla:region><cla:priority>2</cla:priority>
</cla:ClaimApprovalProcessInput>`)
	if code != http.StatusAccepted && code != http.StatusOK {
		t.Fatalf("claim: status %d: %s", code, body)
	}
}

// api calls an operation of WSO2's HumanTaskClientAPIAdmin as user.
func api(t *testing.T, s *wso2Server, user, op string) string {
	t.Helper()
	code, body := post(t, s.url+htclient.Path, "", user, strings.Replace(op, "<api:", `<api:`, 1))
	if code != http.StatusOK {
		t.Fatalf("%s as %s: status %d: %s", op, user, code, body)
	}
	return body
}

// TestWSO2ClaimsApprovalBundle: the WSO2-shaped bundle deploys unchanged
// (persistent, WSO2's default, and in memory when its deploy.xml says
// so); a claim posted over SOAP creates the ApproveClaim task for the
// regional managers (not the clerks), with the priority and subject from
// the claim; manager1 claims, starts and completes it through WSO2's
// client API; the outcome reaches the waiting instance by ODE's session
// alone (no WS-Addressing in the bundle), which completes with
// approved=true in b4pOutput.
func TestWSO2ClaimsApprovalBundle(t *testing.T) {
	for _, inMemory := range []bool{false, true} {
		name := "persistent"
		if inMemory {
			name = "in-memory"
		}
		t.Run(name, func(t *testing.T) {
			bundle := wso2Bundle
			if inMemory {
				bundle = copyBundle(t)
				dd := filepath.Join(bundle, "deploy.xml")
				b, err := os.ReadFile(dd)
				if err != nil {
					t.Fatal(err)
				}
				b = []byte(strings.Replace(string(b), "<active>true</active>", "<in-memory>true</in-memory>\n    <active>true</active>", 1))
				if err := os.WriteFile(dd, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s := startWSO2Server(t, bundle, nil)
			postClaim(t, s)
			taskID, list := readyTask(t, s)
			for _, w := range []string{">tn:ApproveClaim</htt:name>", "<htt:priority>2</htt:priority>", "EUR 10000 on behalf of Waruna Ranasinghe"} {
				if !strings.Contains(list, w) {
					t.Errorf("manager1's task list lacks %q: %s", w, list)
				}
			}
			// The instance waits for the outcome (in memory or stored as
			// its deploy.xml says).
			inst := instanceOf(t, s, inMemory)
			id := "<api:identifier>" + taskID + "</api:identifier>"
			ns := `xmlns:api="` + htclient.API + `"`
			if code, body := post(t, s.url+htclient.Path, "", "clerk1", `<api:claim `+ns+`>`+id+`</api:claim>`); code == http.StatusOK || !strings.Contains(body, "<api:illegalAccess ") {
				t.Errorf("clerk1 (a stakeholder, no potential owner) claims: status %d: %s", code, body)
			}
			api(t, s, "manager1", `<api:claim `+ns+`>`+id+`</api:claim>`)
			api(t, s, "manager1", `<api:start `+ns+`>`+id+`</api:start>`)
			if in := api(t, s, "manager1", `<api:getInput `+ns+`>`+id+`</api:getInput>`); !strings.Contains(in, ">C002<") {
				t.Errorf("the task's input lacks the customer: %s", in)
			}
			api(t, s, "manager1", `<api:complete `+ns+`>`+id+`<api:taskData><sch:ClaimApprovalResponse xmlns:sch="http://www.example.com/claims/schema"><sch:approved>true</sch:approved></sch:ClaimApprovalResponse></api:taskData></api:complete>`)

			// The instance: waiting at receiveOutcome until the outcome
			// came, then completed. An in-memory instance is gone when it
			// ends: its events say it completed after receiveOutcome; a
			// persistent one's record keeps b4pOutput.
			waitApproved(t, s, inst, !inMemory)
			if info := api(t, s, "manager1", `<api:getTaskInfo `+ns+`>`+id+`</api:getTaskInfo>`); !strings.Contains(info, "<htt:status>COMPLETED</htt:status>") {
				t.Errorf("task info: %s", info)
			}
		})
	}
}

// readyTask waits (up to 10 s) for a READY task manager1 may claim
// whose id is none of skip, and returns its id and manager1's list.
func readyTask(t *testing.T, s *wso2Server, skip ...string) (string, string) {
	t.Helper()
	var list string
	deadline := time.Now().Add(10 * time.Second)
	for {
		list = api(t, s, "manager1", `<api:getMyTaskAbstracts xmlns:api="`+htclient.API+`"><api:status>READY</api:status></api:getMyTaskAbstracts>`)
		for _, m := range regexp.MustCompile(`<htt:id>([^<]+)</htt:id>`).FindAllStringSubmatch(list, -1) {
			if !slices.Contains(skip, m[1]) {
				return m[1], list
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("manager1 sees no new READY task (not %v): %s", skip, list)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitApproved waits (up to 10 s) for instance inst to complete after
// receiveOutcome, as its events say; stored, its record must hold the
// manager's approved=true in b4pOutput.
func waitApproved(t *testing.T, s *wso2Server, inst string, stored bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !s.events.has(events.InstanceCompleted, inst, "") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !s.events.has(events.ActivityCompleted, inst, "receiveOutcome") || !s.events.has(events.InstanceCompleted, inst, "") {
		t.Fatalf("instance %s did not complete after receiveOutcome", inst)
	}
	if !stored {
		return
	}
	det, err := s.engine.InstanceDetail(context.Background(), inst)
	if err != nil {
		t.Fatal(err)
	}
	if det.State != mgmt.StateCompleted {
		t.Fatalf("instance %+v, want completed", det.Instance)
	}
	if out := det.Variables["b4pOutput"]; !strings.Contains(out, ">true<") {
		t.Fatalf("b4pOutput %q, want the manager's approved=true (variables %v)", out, det.Variables)
	}
}

// instanceOf is the id of the one ClaimsApprovalProcess instance, which
// is waiting (for the task's outcome), in memory or stored as inMemory
// says.
func instanceOf(t *testing.T, s *wso2Server, inMemory bool) string {
	t.Helper()
	page, err := s.engine.QueryInstances(context.Background(), mgmt.Query{Process: "ClaimsApprovalProcess"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Instances) != 1 || page.Instances[0].State != mgmt.StateWaiting || page.Instances[0].InMemory != inMemory {
		t.Fatalf("instances %+v, want one waiting (in memory: %v)", page.Instances, inMemory)
	}
	return page.Instances[0].ID
}

// TestNoSessionToAPartnerNoTaskPublishes: the session goes only where a
// task is published. With the bundle's task files gone, ClaimService is
// an ordinary partner (no WS-Addressing): the process's call reaches it
// without ODE's session header blocks and without a wsa:ReplyTo, as
// before tasks existed.
func TestNoSessionToAPartnerNoTaskPublishes(t *testing.T) {
	got := make(chan *exchange.Call, 1)
	partner := exchange.PartnerFunc(func(_ context.Context, c *exchange.Call) (*exchange.Message, error) {
		got <- c
		return nil, nil
	})
	s := startWSO2Server(t, copyBundle(t, "ClaimsApprovalTask.ht", "htconfig.xml"),
		func(*exchange.Endpoint) exchange.Partner { return partner })
	postClaim(t, s)
	select {
	case c := <-got:
		if c.Operation.Name != "approve" {
			t.Fatalf("operation %s, want approve", c.Operation.Name)
		}
		for _, h := range c.Headers {
			if h.Tag == "callback" || h.Tag == "session" {
				t.Errorf("the call carries a %s header block {%s}", h.Tag, h.NamespaceURI())
			}
		}
		if c.ReplyTo != nil {
			t.Errorf("the call carries a ReplyTo %+v", c.ReplyTo)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the partner was not called")
	}
}
