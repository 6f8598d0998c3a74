package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
)

// These tests operate a real orchd (real bbolt store, loopback HTTP)
// through orchd ctl, run in-process on its run entry point.

const adminToken = "e2e-admin-token-0123456789"

// tokenFile writes the admin token to a file only its owner reads.
func tokenFile(t *testing.T, token string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// ctlResult is one orchd ctl run.
type ctlResult struct {
	code           int
	stdout, stderr string
}

func (r ctlResult) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// runCtl runs orchd ctl against server with args.
func runCtl(t *testing.T, server string, args ...string) ctlResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, append([]string{"ctl", "--server", server}, args...), &out, &errOut)
	return ctlResult{code, out.String(), errOut.String()}
}

// mustCtl runs orchd ctl and fails the test unless it exits 0.
func mustCtl(t *testing.T, server string, args ...string) string {
	t.Helper()
	r := runCtl(t, server, args...)
	if r.code != 0 {
		t.Fatalf("orchd ctl %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// ctlInstances lists instances through orchd ctl --json --all.
func ctlInstances(t *testing.T, server string, filters ...string) []mgmt.Instance {
	t.Helper()
	out := mustCtl(t, server, append([]string{"instances", "--json", "--all"}, filters...)...)
	var p mgmt.Page
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("instances --json: %v\n%s", err, out)
	}
	return p.Instances
}

// ctlInstance describes one instance through orchd ctl --json.
func ctlInstance(t *testing.T, server, id string) mgmt.InstanceDetail {
	t.Helper()
	out := mustCtl(t, server, "instance", "--json", id)
	var d mgmt.InstanceDetail
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("instance --json: %v\n%s", err, out)
	}
	return d
}

// oneInstance is the one instance the filters select.
func oneInstance(t *testing.T, server string, filters ...string) mgmt.Instance {
	t.Helper()
	ins := ctlInstances(t, server, filters...)
	if len(ins) != 1 {
		t.Fatalf("instances %v: %d, want 1: %+v", filters, len(ins), ins)
	}
	return ins[0]
}

func requestApproval(t *testing.T, base, id string) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	r := post(t, client, base+approvalPath, textXML, `"urn:example:approval#requestApproval"`,
		approvalBody("requestApproval", id, "<appr:amount>10</appr:amount><appr:requester>ann</appr:requester>"))
	if st := approvalStatus(t, r); st != "PENDING" {
		t.Fatalf("%s: %s", id, st)
	}
}

func decide(t *testing.T, base, id string) response {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	return post(t, client, base+approvalPath, textXML, "", approvalBody("decide", id, "<appr:approved>true</appr:approved><appr:approver>bob</appr:approver>"))
}

// approvalServer runs orchd with the approval example (persistent, a
// waiting instance per request) on a real store, with an admin token.
func approvalServer(t *testing.T, extra ...string) *orchd {
	t.Helper()
	deploy := t.TempDir()
	copyBundleFrom(t, "../../deploy/order-approval", deploy, "order-approval", "", "", nil)
	args := append([]string{"--deploy", deploy, "--data", t.TempDir(), "--admin-token-file", tokenFile(t, adminToken),
		"--message-hold", "200ms"}, extra...)
	return startOrchd(t, args...)
}

// Suspend, resume, terminate and bulk terminate waiting instances, found
// by filters, through orchd ctl.
func TestCtlInstanceActions(t *testing.T) {
	o := approvalServer(t)
	tok := tokenFile(t, adminToken)
	// With a token configured, reads need it too.
	t.Setenv("ORCHD_TOKEN_FILE", tok)
	for _, id := range []string{"R-1", "R-2", "R-3"} {
		requestApproval(t, o.base, id)
	}

	// The listing, filtered, as text and as JSON.
	if ins := ctlInstances(t, o.base, "--process", "OrderApproval", "--state", "waiting"); len(ins) != 3 {
		t.Fatalf("waiting approvals: %+v", ins)
	}
	text := mustCtl(t, o.base, "instances", "--process", "OrderApproval", "--correlation", "R-2")
	if !strings.Contains(text, "byRequest=R-2") || strings.Contains(text, "R-1") || !strings.HasPrefix(text, "ID ") {
		t.Fatalf("instances --correlation R-2:\n%s", text)
	}
	if ins := ctlInstances(t, o.base, "--state", "waiting", "--started-after", "1h", "--started-before", time.Now().Add(time.Hour).Format(time.RFC3339)); len(ins) != 3 {
		t.Fatalf("started in the last hour: %+v", ins)
	}
	if ins := ctlInstances(t, o.base, "--started-before", "1h"); len(ins) != 0 {
		t.Fatalf("started over an hour ago: %+v", ins)
	}
	// Paging: one a page, following the cursor.
	if ins := ctlInstances(t, o.base, "--process", "OrderApproval", "--limit", "1"); len(ins) != 3 {
		t.Fatalf("--all over pages of 1: %+v", ins)
	}
	r2 := oneInstance(t, o.base, "--correlation", "R-2", "--correlation-set", "byRequest")

	// Suspended, its decision is refused; resumed, it is taken.
	if out := mustCtl(t, o.base, "--token-file", tok, "suspend", r2.ID); strings.TrimSpace(out) != r2.ID+": suspended" {
		t.Fatalf("suspend: %q", out)
	}
	if d := ctlInstance(t, o.base, r2.ID); d.State != mgmt.StateSuspended || !slices.Contains(d.Actions, mgmt.Resume) {
		t.Fatalf("suspended instance: state %s, actions %v", d.State, d.Actions)
	}
	if r := decide(t, o.base, "R-2"); r.status == 200 || !strings.Contains(r.body, "suspended") {
		t.Fatalf("a decision for a suspended instance: %d %s", r.status, r.body)
	}
	if out := mustCtl(t, o.base, "--token-file", tok, "resume", r2.ID); strings.TrimSpace(out) != r2.ID+": waiting" {
		t.Fatalf("resume: %q", out)
	}
	if st := approvalStatus(t, decide(t, o.base, "R-2")); st != "APPROVED" {
		t.Fatalf("R-2 after resume: %s", st)
	}
	if d := ctlInstance(t, o.base, r2.ID); d.State != mgmt.StateCompleted {
		t.Fatalf("R-2 decided: %s", d.State)
	}
	// A second resume does not apply: the server says why.
	if r := runCtl(t, o.base, "--token-file", tok, "resume", r2.ID); r.code != 1 || !strings.Contains(r.stderr, "409") {
		t.Fatalf("resume of a completed instance: %s", r)
	}

	// Terminated, its decision finds no instance.
	r3 := oneInstance(t, o.base, "--correlation", "R-3")
	if out := mustCtl(t, o.base, "--token-file", tok, "terminate", r3.ID); strings.TrimSpace(out) != r3.ID+": terminated" {
		t.Fatalf("terminate: %q", out)
	}
	if r := decide(t, o.base, "R-3"); r.status == 200 {
		t.Fatalf("a decision for a terminated instance: %d %s", r.status, r.body)
	}
	text = mustCtl(t, o.base, "instance", r3.ID)
	if !strings.Contains(text, "state terminated") || !strings.Contains(text, "byRequest=R-3") {
		t.Fatalf("instance %s:\n%s", r3.ID, text)
	}

	// Bulk terminate by filter, bounded by --max.
	for _, id := range []string{"B-1", "B-2", "B-3"} {
		requestApproval(t, o.base, id)
	}
	out := mustCtl(t, o.base, "--token-file", tok, "bulk", "terminate", "--process", "OrderApproval", "--state", "waiting", "--max", "3")
	if !strings.Contains(out, "terminate: 3 matched, 3 done, 0 failed") || !strings.Contains(out, "more instances match") {
		t.Fatalf("bulk terminate --max 3 of 4 waiting:\n%s", out)
	}
	out = mustCtl(t, o.base, "--token-file", tok, "bulk", "terminate", "--process", "OrderApproval", "--state", "waiting")
	if !strings.Contains(out, "terminate: 1 matched, 1 done, 0 failed") || strings.Contains(out, "more instances match") {
		t.Fatalf("bulk terminate of the last waiting one:\n%s", out)
	}
	if ins := ctlInstances(t, o.base, "--state", "waiting"); len(ins) != 0 {
		t.Fatalf("still waiting after bulk terminate: %+v", ins)
	}
	if ins := ctlInstances(t, o.base, "--state", "terminated"); len(ins) != 5 {
		t.Fatalf("terminated: %d, want 5 (R-3, R-1, B-1..3)", len(ins))
	}
	// Delete removes an ended instance.
	mustCtl(t, o.base, "--token-file", tok, "delete", r3.ID)
	if r := runCtl(t, o.base, "instance", r3.ID); r.code != 1 || !strings.Contains(r.stderr, "404") {
		t.Fatalf("a deleted instance: %s", r)
	}
}

// flakyPartner answers the e2e partner call, or fails with a 503 while
// failing is set.
type flakyPartner struct {
	*slowPartner
	failing atomic.Bool
	calls   atomic.Int32
}

// startFlakyPartner serves a partner that fails until told otherwise.
func startFlakyPartner(t *testing.T) *flakyPartner {
	t.Helper()
	p := &flakyPartner{slowPartner: &slowPartner{}}
	p.failing.Store(true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(p.serveHTTP)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

func (p *flakyPartner) serveHTTP(w http.ResponseWriter, r *http.Request) {
	p.calls.Add(1)
	if p.failing.Load() {
		http.Error(w, "partner down for maintenance", http.StatusServiceUnavailable)
		return
	}
	p.serve(w, r)
}

// An instance suspended on a failed invoke is retried, through orchd
// ctl, once its partner works again, and completes.
func TestCtlRetryFailedInvoke(t *testing.T) {
	partner := startFlakyPartner(t)

	deploy := t.TempDir()
	writeProcess(t, deploy, "Flaky", partner.addr, `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    <reply partnerLink="client" operation="run" variable="out"/>
    <invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="p1"/>
  </sequence>`, false)
	o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir(), "--admin-token-file", tokenFile(t, adminToken))
	tok := tokenFile(t, adminToken)
	// With a token configured, reads need it too.
	t.Setenv("ORCHD_TOKEN_FILE", tok)
	if r := callRun(t, o.base, "Flaky", "F1", "1"); r.status != 200 {
		t.Fatalf("run: %d %s", r.status, r.body)
	}
	var ins []mgmt.Instance
	if !eventually(func() bool {
		ins = ctlInstances(t, o.base, "--process", "Flaky", "--state", "suspended")
		return len(ins) == 1
	}) {
		t.Fatalf("no instance suspended on the failed invoke: %+v\n%s", ctlInstances(t, o.base, "--process", "Flaky"), o.log())
	}
	id := ins[0].ID
	d := ctlInstance(t, o.base, id)
	if d.Failure == nil || !strings.Contains(d.Failure.Reason, "503") && !strings.Contains(d.Failure.Reason, "maintenance") || !slices.Contains(d.Actions, mgmt.Retry) {
		t.Fatalf("suspended instance: failure %+v, actions %v", d.Failure, d.Actions)
	}
	text := mustCtl(t, o.base, "instance", id)
	if !strings.Contains(text, "failed: ") || !strings.Contains(text, "actions: ") {
		t.Fatalf("instance text:\n%s", text)
	}
	// Retried while the partner still fails: suspended again.
	before := partner.calls.Load()
	mustCtl(t, o.base, "--token-file", tok, "retry", id)
	if !eventually(func() bool {
		return partner.calls.Load() > before && ctlInstance(t, o.base, id).State == mgmt.StateSuspended
	}) {
		t.Fatalf("retry against a failing partner: %d calls, state %s", partner.calls.Load(), ctlInstance(t, o.base, id).State)
	}
	partner.failing.Store(false)
	mustCtl(t, o.base, "--token-file", tok, "retry", id)
	if !eventually(func() bool { return ctlInstance(t, o.base, id).State == mgmt.StateCompleted }) {
		t.Fatalf("retried instance: %+v\n%s", ctlInstance(t, o.base, id), o.log())
	}
	if got := ctlInstance(t, o.base, id).Variables["p1"]; !strings.Contains(got, "P-F1") {
		t.Errorf("the retried call's answer: p1 = %s", got)
	}
}

// Deploy a folder (zipped on the fly) and a zip through orchd ctl, call
// them, see them listed, undeploy one; a broken bundle is refused with
// its errors and nothing changes.
func TestCtlDeploy(t *testing.T) {
	partner := startSlowPartner(t, 0)
	o := startOrchd(t, "--deploy", t.TempDir(), "--data", t.TempDir(), "--admin-token-file", tokenFile(t, adminToken))
	tok := tokenFile(t, adminToken)
	// With a token configured, reads need it too.
	t.Setenv("ORCHD_TOKEN_FILE", tok)
	src := t.TempDir()
	body := `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    ` + initOut + `
    <invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="out"/>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`
	writeProcess(t, src, "Echo", partner.addr, body, true)
	writeProcess(t, src, "Zipped", partner.addr, body, true)
	zipped, err := zipBundle(filepath.Join(src, "Zipped"))
	if err != nil {
		t.Fatal(err)
	}
	zipFile := filepath.Join(t.TempDir(), "zipped.zip")
	if err := os.WriteFile(zipFile, zipped, 0o644); err != nil {
		t.Fatal(err)
	}

	out := mustCtl(t, o.base, "--token-file", tok, "deploy", "echo", filepath.Join(src, "Echo"))
	if !strings.Contains(out, "bundle echo deployed") || !strings.Contains(out, "Echo") {
		t.Fatalf("deploy a folder: %q", out)
	}
	mustCtl(t, o.base, "--token-file", tok, "deploy", "zipped", zipFile)
	for _, name := range []string{"Echo", "Zipped"} {
		if r := callRun(t, o.base, name, "D1", "1"); r.status != 200 || !strings.Contains(r.body, "P-D1") {
			t.Fatalf("call %s: %d %s", name, r.status, r.body)
		}
	}
	out = mustCtl(t, o.base, "bundles")
	if !regexp.MustCompile(`(?m)^echo +deployed`).MatchString(out) || !regexp.MustCompile(`(?m)^zipped +deployed`).MatchString(out) {
		t.Fatalf("bundles:\n%s", out)
	}
	out = mustCtl(t, o.base, "processes")
	if !regexp.MustCompile(`(?m)^Echo +\d+ +active +in-memory +1 `).MatchString(out) {
		t.Fatalf("processes (Echo started once):\n%s", out)
	}
	out = mustCtl(t, o.base, "process", "Echo")
	for _, want := range []string{"{urn:e2e:process}Echo version", "endpoint /processes/Echo", "exchanges: 1", "ACTIVITY", "receive", "invoke", "Echo.bpel:"} {
		if !strings.Contains(out, want) {
			t.Fatalf("process Echo lacks %q:\n%s", want, out)
		}
	}

	// A broken bundle: refused with file:line errors, the old one serves.
	writeProcess(t, src, "Broken", partner.addr, `
  <sequence>
    <receive partnerLink="nowhere" operation="run" variable="in" createInstance="yes"/>
  </sequence>`, true)
	r := runCtl(t, o.base, "--token-file", tok, "deploy", "echo", filepath.Join(src, "Broken"))
	if r.code != 1 || !strings.Contains(r.stderr, "(422)") || !strings.Contains(r.stderr, "Broken.bpel:") {
		t.Fatalf("deploy a broken bundle: %s", r)
	}
	if r := callRun(t, o.base, "Echo", "D2", "1"); r.status != 200 {
		t.Fatalf("Echo after a broken redeploy: %d %s", r.status, r.body)
	}
	out = mustCtl(t, o.base, "bundles")
	if !regexp.MustCompile(`(?m)^echo +failed`).MatchString(out) || !strings.Contains(out, "Broken.bpel:") {
		t.Fatalf("bundles after a broken redeploy:\n%s", out)
	}

	mustCtl(t, o.base, "--token-file", tok, "undeploy", "zipped")
	if r := callRun(t, o.base, "Zipped", "D3", "1"); r.status == 200 {
		t.Fatalf("an undeployed process answered: %s", r.body)
	}
	if r := runCtl(t, o.base, "--token-file", tok, "undeploy", "nothing-here"); r.code != 1 || !strings.Contains(r.stderr, "404") {
		t.Fatalf("undeploy an unknown bundle: %s", r)
	}
}

// Mutations need the token; without --admin-token-file the API is
// read-only; reads are open either way.
func TestCtlAuth(t *testing.T) {
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", "127.0.0.1:1", "127.0.0.1:1", nil)
	withToken := startOrchd(t, "--deploy", deploy, "--admin-token-file", tokenFile(t, adminToken))
	readOnly := startOrchd(t, "--deploy", deploy)
	tests := []struct {
		name   string
		o      *orchd
		token  string // "" sends none
		code   int
		stderr string
	}{
		{"read-only server", readOnly, adminToken, 1, "the API is read-only: start orchd with --admin-token-file (403)"},
		{"no token", withToken, "", 1, "this needs a token"},
		{"wrong token", withToken, "not-the-token", 1, "wrong token (401)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, args := range [][]string{
				{"suspend", "some-id"},
				{"bulk", "terminate", "--process", "PurchaseOrder"},
				{"retire", "PurchaseOrder", "1"},
				{"undeploy", "purchase-order"},
			} {
				if tc.token != "" {
					args = append([]string{"--token-file", tokenFile(t, tc.token)}, args...)
				}
				r := runCtl(t, tc.o.base, args...)
				if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
					t.Errorf("%v: %s", args, r)
				}
			}
		})
	}
	// The refusals changed nothing: the process still serves.
	for _, o := range []*orchd{withToken, readOnly} {
		status, body := get(t, o.base+"/processes/PurchaseOrder?wsdl")
		if status != 200 {
			t.Fatalf("the process after refused mutations: %d %s", status, body)
		}
		// Reads are open without a token configured; with one they
		// need it.
		var args []string
		if o == withToken {
			if r := runCtl(t, o.base, "processes"); r.code == 0 || !strings.Contains(r.stderr, "(401)") {
				t.Errorf("a read without the token: %s", r)
			}
			args = []string{"--token-file", tokenFile(t, adminToken)}
		}
		out := mustCtl(t, o.base, append(args, "processes")...)
		if !strings.Contains(out, "PurchaseOrder") {
			t.Fatalf("processes:\n%s", out)
		}
	}
	// The WWW-Authenticate challenge and the read-only flag, over plain HTTP.
	req, _ := http.NewRequest(http.MethodPost, withToken.base+"/api/v1/instances/x/suspend", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if _, body := get(t, readOnly.base+"/api/v1/"); !strings.Contains(body, `"readOnly": true`) {
		t.Fatalf("read-only server's /api/v1/: %s", body)
	}
}

var adminAddrRE = regexp.MustCompile(`msg="management API" addr=(\S+)`)

// --admin-listen serves the API on its own address, and only there.
func TestAdminListen(t *testing.T) {
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", "127.0.0.1:1", "127.0.0.1:1", nil)
	o := startOrchd(t, "--deploy", deploy, "--admin-listen", "127.0.0.1:0", "--admin-token-file", tokenFile(t, adminToken))
	m := adminAddrRE.FindStringSubmatch(o.log())
	if m == nil {
		t.Fatalf("no management API address logged:\n%s", o.log())
	}
	admin := "http://" + m[1]
	if admin == o.base {
		t.Fatalf("the API is on the SOAP listener %s", o.base)
	}
	if status, body := get(t, admin+"/api/v1/", "Authorization", "Bearer "+adminToken); status != 200 || !strings.Contains(body, `"readOnly": false`) {
		t.Fatalf("API on --admin-listen: %d %s", status, body)
	}
	if status, _ := get(t, o.base+"/api/v1/"); status == 200 {
		t.Fatalf("the API is served on --listen too")
	}
	if status, body := get(t, admin+"/processes/PurchaseOrder?wsdl"); status == 200 {
		t.Fatalf("a SOAP endpoint on --admin-listen: %s", body)
	}
	if status, _ := get(t, o.base+"/processes/PurchaseOrder?wsdl"); status != 200 {
		t.Fatalf("the SOAP endpoint on --listen: %d", status)
	}
	if r := runCtl(t, admin, "--token-file", tokenFile(t, "wrong"), "suspend", "x"); r.code != 1 || !strings.Contains(r.stderr, "wrong token") {
		t.Fatalf("ctl on --admin-listen: %s", r)
	}
}

// Usage errors exit 2 without asking the server.
func TestCtlUsage(t *testing.T) {
	tests := [][]string{
		{},
		{"frobnicate"},
		{"instance"},
		{"instances", "--state"},
		{"instances", "--started-after", "last tuesday"},
		{"retire", "PurchaseOrder", "two"},
		{"suspend"},
		{"bulk", "explode"},
		{"deploy", "x", "/no/such/bundle"},
		{"--token-file", "/no/such/file", "suspend", "x"},
	}
	for _, args := range tests {
		// A server that is not there: usage errors never reach it.
		if r := runCtl(t, "http://127.0.0.1:1", args...); r.code != 2 || r.stderr == "" {
			t.Errorf("%v: %s", args, r)
		}
	}
	if r := runCtl(t, "http://127.0.0.1:1", "processes"); r.code != 1 || !strings.Contains(r.stderr, "127.0.0.1:1") {
		t.Errorf("no server: %s", r)
	}
}

// The event stream relays the runtime's events as they happen, with the
// process list every second; without --timeline it says how to get it.
func TestEventStreamE2E(t *testing.T) {
	o := approvalServer(t, "--timeline", "1000", "--shutdown-timeout", "60s")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, o.base+"/api/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken) // every read needs the token
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	frames := make(chan [2]string, 64)
	go func() {
		defer close(frames)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var ev string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				frames <- [2]string{ev, line[len("data: "):]}
			}
		}
	}()
	next := func(want string) string {
		t.Helper()
		for {
			select {
			case f, ok := <-frames:
				if !ok {
					t.Fatalf("the stream ended before %s", want)
				}
				if f[0] == want {
					return f[1]
				}
			case <-ctx.Done():
				t.Fatalf("no %s event", want)
			}
		}
	}
	if stats := next("stats"); !strings.Contains(stats, `"local":"OrderApproval"`) {
		t.Fatalf("stats: %s", stats)
	}
	requestApproval(t, o.base, "S-1")
	var ev struct {
		Kind, Process, Instance string
	}
	for ev.Kind != "instanceCreated" {
		if err := json.Unmarshal([]byte(next("instance")), &ev); err != nil {
			t.Fatal(err)
		}
	}
	if ev.Process != "{urn:example:approval:process}OrderApproval" || ev.Instance == "" {
		t.Fatalf("instanceCreated: %+v", ev)
	}
	// orchd shuts down while the stream is open: the stream ends, and
	// the shutdown does not wait for it (it would fail after its 60 s).
	if err := o.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range frames {
	}
	err = <-o.done
	o.done <- err
	if err != nil || !strings.Contains(o.log(), "msg=stopped") {
		t.Fatalf("shutdown with an open event stream: %v\n%s", err, o.log())
	}
	cancel()

	// Without --timeline: 503 naming the flag.
	plain := approvalServer(t)
	if status, body := get(t, plain.base+"/api/v1/events", "Authorization", "Bearer "+adminToken); status != 503 || !strings.Contains(body, "--timeline N") {
		t.Fatalf("events without --timeline: %d %s", status, body)
	}
}
