package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/mgmt"
)

// A purchase order whose CRM answers a SOAP fault fails in memory; the
// failure is an incident (orchd ctl incidents) with its fault, where it
// was thrown and the variables then, and its id is the one the log line
// and the events name.
func TestIncidentsFailedPurchaseOrder(t *testing.T) {
	crm := serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><soapenv:Fault>`+
			`<faultcode>soapenv:Client</faultcode><faultstring>account ACME-7 is on hold</faultstring></soapenv:Fault></soapenv:Body></soapenv:Envelope>`)
	}))
	_, erp := startMocks(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	evFile := filepath.Join(t.TempDir(), "events.jsonl")
	o := startOrchd(t, "--deploy", deploy, "--admin-token-file", tokenFile(t, adminToken), "--events-file", evFile)
	t.Setenv("ORCHD_TOKEN_FILE", tokenFile(t, adminToken))

	r := post(t, &http.Client{}, o.base+"/processes/PurchaseOrder", textXML, poAction, readWorkload(t, "po-request.xml"))
	if r.status != 500 {
		t.Fatalf("a PO whose CRM faults: %d %s", r.status, r.body)
	}
	var l mgmt.IncidentList
	if err := json.Unmarshal([]byte(mustCtl(t, o.base, "incidents", "--json")), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Incidents) != 1 {
		t.Fatalf("incidents: %+v", l)
	}
	inc := l.Incidents[0]
	if inc.Kind != mgmt.IncidentFailed || !strings.HasSuffix(inc.Process, "}PurchaseOrder") || inc.ID == "" ||
		!strings.Contains(inc.Reason, "on hold") || !strings.HasPrefix(inc.Activity, "invoke") || !strings.Contains(inc.Position, ".bpel:") {
		t.Fatalf("the incident: %+v", inc)
	}
	if !slices.ContainsFunc(mapValues(inc.Variables), func(v string) bool { return strings.Contains(v, "PO-000123") }) {
		t.Fatalf("the incident's variables lack the order: %v", inc.Variables)
	}
	text := mustCtl(t, o.base, "incidents")
	for _, want := range []string{inc.ID, "failed", "PurchaseOrder", "invoke", "on hold", "PO-000123"} {
		if !strings.Contains(text, want) {
			t.Fatalf("orchd ctl incidents lacks %q:\n%s", want, text)
		}
	}
	// Filters: by fault and activity, and one that selects nothing.
	name := inc.Activity[strings.IndexByte(inc.Activity, ' ')+1:]
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--activity", name}, 1},
		{[]string{"--activity", "nothing"}, 0},
		{[]string{"--fault", inc.Fault[strings.LastIndexByte(inc.Fault, '}')+1:]}, 1},
		{[]string{"--fault", "otherFault"}, 0},
		{[]string{"--process", "OrderApproval"}, 0},
	} {
		var got mgmt.IncidentList
		if err := json.Unmarshal([]byte(mustCtl(t, o.base, append([]string{"incidents", "--json"}, tc.args...)...)), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Incidents) != tc.want {
			t.Errorf("incidents %v: %d, want %d", tc.args, len(got.Incidents), tc.want)
		}
	}
	// The log line and the events name the same instance.
	if !eventually(func() bool { return strings.Contains(o.log(), "instance="+inc.ID+" ") }) {
		t.Errorf("no log line names instance %s:\n%s", inc.ID, o.log())
	}
	if !eventually(func() bool { return eventOf(t, evFile, inc.ID, events.InstanceFaulted) }) {
		t.Errorf("no instanceFaulted event of %s in the events file", inc.ID)
	}

	// The console's incidents page lists it, with its variables.
	b := newBrowser(t)
	b.open(o.base + "/console/incidents")
	b.do("giving the token", chromedp.SendKeys(chromedp.CSS("#token"), adminToken), chromedp.Click(chromedp.CSS("#token-save")))
	b.open(o.base + "/console/incidents")
	b.wait("the failed exchange listed", `(() => { const r = document.querySelector('#incidents-table tr[data-id="`+inc.ID+`"][data-kind="failed"]');
		return !!r && r.querySelector('.activity').textContent.startsWith('invoke') && r.querySelector('.reason').textContent.includes('on hold'); })()`)
	b.wait("its variables shown", `(document.querySelector('details.incident-vars[data-id="`+inc.ID+`"]') || {textContent: ''}).textContent.includes('PO-000123')`)
	b.shot("console-incidents")
	b.noScriptErrors()
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// eventOf reports whether the events file holds an event of kind k of
// instance id.
func eventOf(t *testing.T, file, id string, k events.Kind) bool {
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev events.Event
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Instance == id && ev.Kind == k {
			return true
		}
	}
	return false
}

// A persistent instance suspended on a failed invoke (its partner
// refuses the request's n) gets its input variable fixed through orchd
// ctl set-variable; the change survives a kill -9, and the retry then
// completes with the fixed value.
func TestIncidentsSetVariableThenRetry(t *testing.T) {
	var seen atomic.Value
	seen.Store("")
	partner := serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n := between(string(body), "n>", "</")
		seen.Store(n)
		if n == "bad" {
			http.Error(w, "partner refuses n=bad", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		fmt.Fprintf(w, `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><resp xmlns="urn:e2e"><a>P-%s</a></resp></soapenv:Body></soapenv:Envelope>`, n)
	}))
	deploy, data := t.TempDir(), t.TempDir()
	writeProcess(t, deploy, "Fixable", partner, `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    <reply partnerLink="client" operation="run" variable="out"/>
    <invoke name="callPartner" partnerLink="partner" operation="call" inputVariable="in" outputVariable="p1"/>
  </sequence>`, false)
	args := []string{"--deploy", deploy, "--data", data, "--admin-token-file", tokenFile(t, adminToken)}
	o := startOrchd(t, args...)
	tok := tokenFile(t, adminToken)
	t.Setenv("ORCHD_TOKEN_FILE", tok)
	if r := callRun(t, o.base, "Fixable", "S1", "bad"); r.status != 200 {
		t.Fatalf("run: %d %s", r.status, r.body)
	}
	var l mgmt.IncidentList
	if !eventually(func() bool {
		l = mgmt.IncidentList{}
		_ = json.Unmarshal([]byte(mustCtl(t, o.base, "incidents", "--json", "--process", "Fixable")), &l)
		return len(l.Incidents) == 1
	}) {
		t.Fatalf("no incident of the suspended instance: %+v\n%s", l, o.log())
	}
	inc := l.Incidents[0]
	if inc.Kind != mgmt.IncidentSuspended || inc.Activity != "invoke callPartner" || !strings.HasSuffix(inc.Fault, "}activityFailure") ||
		!slices.Contains(inc.Actions, mgmt.Retry) {
		t.Fatalf("the incident: %+v", inc)
	}
	id := inc.ID
	in := ctlInstance(t, o.base, id).Variables["in"]
	if !strings.Contains(in, "<n>bad</n>") {
		t.Fatalf("variable in: %s", in)
	}
	// Refused: without the admin token, a variable that does not exist,
	// a message variable given something other than its parts.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--token-file", tokenFile(t, "not-the-token-0123456789"), "set-variable", id, "in", "x"}, "(401)"},
		{[]string{"set-variable", id, "nothing", "x"}, "(404)"},
		{[]string{"set-variable", id, "in", "<foo/>"}, "(400)"},
	} {
		if r := runCtl(t, o.base, tc.args...); r.code != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("set-variable %v: %s", tc.args, r)
		}
	}
	mustCtl(t, o.base, "set-variable", id, "in", strings.Replace(in, "<n>bad</n>", "<n>good</n>", 1))
	if got := ctlInstance(t, o.base, id); got.State != mgmt.StateSuspended || !strings.Contains(got.Variables["in"], "<n>good</n>") {
		t.Fatalf("after set-variable: %s %s", got.State, got.Variables["in"])
	}
	if !regexp.MustCompile(`msg="variable set by an operator".*instance=` + id).MatchString(o.log()) {
		t.Errorf("no log line records the change:\n%s", o.log())
	}

	// kill -9, then a new orchd over the same store: the change held.
	_ = o.cmd.Process.Kill()
	<-o.done
	o.done <- nil
	o = startOrchd(t, args...)
	if got := ctlInstance(t, o.base, id); got.State != mgmt.StateSuspended || !strings.Contains(got.Variables["in"], "<n>good</n>") {
		t.Fatalf("after kill -9: %s %s", got.State, got.Variables["in"])
	}
	out := mustCtl(t, o.base, "incident-bulk", "retry", "--process", "Fixable", "--activity", "callPartner")
	if !strings.Contains(out, "retry: 1 matched, 1 done, 0 failed") {
		t.Fatalf("incident-bulk retry:\n%s", out)
	}
	if !eventually(func() bool { return ctlInstance(t, o.base, id).State == mgmt.StateCompleted }) {
		t.Fatalf("retried instance: %+v\n%s", ctlInstance(t, o.base, id), o.log())
	}
	if got := ctlInstance(t, o.base, id).Variables["p1"]; !strings.Contains(got, "P-good") || seen.Load() != "good" {
		t.Errorf("the retried call: p1 = %s, partner saw n=%v", got, seen.Load())
	}
	if r := runCtl(t, o.base, "set-variable", id, "in", "x"); r.code != 1 || !strings.Contains(r.stderr, "(409)") {
		t.Errorf("set-variable of a completed instance: %s", r)
	}
}
