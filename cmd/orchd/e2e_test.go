package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/mockpartner"
)

// These tests run the real orchd binary on loopback ports, with the mock
// partners on their own listeners, and talk SOAP over HTTP to it.

var orchdBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "orchd-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	orchdBin = filepath.Join(dir, "orchd")
	build := exec.Command("go", "build", "-race", "-o", orchdBin, ".")
	if os.Getenv("ORCHD_E2E_NORACE") != "" {
		build = exec.Command("go", "build", "-o", orchdBin, ".")
	}
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building orchd:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// workload is the workload contract's folder: the purchase-order
// messages the tests post (testdata/workload).
const workload = "../../testdata/workload"

func readWorkload(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(workload, name))
	if err != nil {
		t.Fatalf("workload file: %v", err)
	}
	return b
}

// startMocks serves the CRM and ERP mock partners on free loopback ports.
func startMocks(t *testing.T) (crm, erp string) {
	t.Helper()
	crmLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	erpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mockpartner.New(nil).ServeListeners(ctx, crmLn, erpLn) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return crmLn.Addr().String(), erpLn.Addr().String()
}

// copyBundle copies the example bundle into deployDir/name, pointing its
// partner WSDLs at crm and erp, and applies edits (file -> old -> new).
func copyBundle(t *testing.T, deployDir, name, crm, erp string, edits map[string][][2]string) string {
	t.Helper()
	return copyBundleFrom(t, "../../deploy/purchase-order", deployDir, name, crm, erp, edits)
}

// copyBundleFrom is copyBundle for another example bundle.
func copyBundleFrom(t *testing.T, src, deployDir, name, crm, erp string, edits map[string][][2]string) string {
	t.Helper()
	dst := filepath.Join(deployDir, name)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		s = strings.ReplaceAll(s, "127.0.0.1:9101", crm)
		s = strings.ReplaceAll(s, "127.0.0.1:9102", erp)
		for _, ed := range edits[e.Name()] {
			if !strings.Contains(s, ed[0]) {
				t.Fatalf("edit of %s: %q not found", e.Name(), ed[0])
			}
			s = strings.ReplaceAll(s, ed[0], ed[1])
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// orchd is a running orchd process.
type orchd struct {
	cmd  *exec.Cmd
	base string
	mu   sync.Mutex
	logs bytes.Buffer
	done chan error
}

func (o *orchd) log() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.logs.String()
}

var servingRE = regexp.MustCompile(`msg=serving addr=(\S+)`)

// startOrchd runs the binary with args and waits until it serves.
func startOrchd(t *testing.T, args ...string) *orchd {
	t.Helper()
	return startOrchdAt(t, nil, args...)
}

// startOrchdAt runs the binary with args and returns once a line of its
// log matches mark, with o.base unset (a test that kills orchd at that
// point, before it serves); nil mark: once it serves, as startOrchd.
func startOrchdAt(t *testing.T, mark *regexp.Regexp, args ...string) *orchd {
	t.Helper()
	return startOrchdCmd(t, mark, exec.Command(orchdBin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...))
}

// startOrchdCmd is startOrchdAt for a command the caller built (an orchd
// serve under resource limits).
func startOrchdCmd(t *testing.T, mark *regexp.Regexp, cmd *exec.Cmd) *orchd {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	o := &orchd{cmd: cmd, done: make(chan error, 1)}
	addr := make(chan string, 1)
	marked := make(chan struct{})
	var markOnce sync.Once
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64*1024), 64*1024*1024) // a long log line must not stop the reading (orchd would block on a full pipe)
		for sc.Scan() {
			line := sc.Text()
			o.mu.Lock()
			o.logs.WriteString(line + "\n")
			o.mu.Unlock()
			if m := servingRE.FindStringSubmatch(line); m != nil && mark == nil {
				addr <- m[1]
			}
			if mark != nil && mark.MatchString(line) {
				markOnce.Do(func() { close(marked) })
			}
		}
		o.done <- cmd.Wait()
	}()
	t.Cleanup(func() { o.stop(t) })
	select {
	case a := <-addr:
		o.base = "http://" + a
	case <-marked:
	case err := <-o.done:
		o.done <- err // for the cleanup's stop
		t.Fatalf("orchd exited before serving: %v\n%s", err, o.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("orchd did not start serving\n%s", o.log())
	}
	return o
}

// raceReport opens every report of Go's race detector; raceExitStatus is
// the status a -race binary exits with after one (GORACE's exitcode).
const (
	raceReport     = "WARNING: DATA RACE"
	raceExitStatus = 66
)

// stopWait bounds how long stop waits for orchd to exit after SIGTERM:
// far above its own --shutdown-timeout (10 s), so only a hang reaches it.
const stopWait = 90 * time.Second

// stop ends o, if it still runs, with SIGTERM (and SIGCONT, should a test
// have left it stopped), so that the race detector can finish its reports
// and exit with its status, then fails t on a race report in o's stderr
// or on exit status 66. Every orchd a test starts is stopped so, at the
// test's cleanup; a test that SIGKILLs orchd still has its stderr, in
// which each race is reported when it happens.
func (o *orchd) stop(t testing.TB) {
	t.Helper()
	var err error
	select {
	case err = <-o.done:
	default:
		_ = o.cmd.Process.Signal(syscall.SIGTERM)
		_ = o.cmd.Process.Signal(syscall.SIGCONT)
		select {
		case err = <-o.done:
		case <-time.After(stopWait):
			_ = o.cmd.Process.Kill()
			err = <-o.done
			t.Errorf("orchd (pid %d) did not exit within %v of SIGTERM; killed", o.cmd.Process.Pid, stopWait)
		}
	}
	o.done <- err // for a later stop
	checkRaces(t, fmt.Sprintf("orchd (pid %d)", o.cmd.Process.Pid), o.log(), err)
}

// checkRaces fails t if output, what a -race orchd wrote to stderr, holds
// a race report, or if err says it exited with the race detector's status.
// Every run of the orchd binary in these tests goes through it.
func checkRaces(t testing.TB, what, output string, err error) {
	t.Helper()
	if i := strings.Index(output, raceReport); i >= 0 {
		report := output[i:]
		if len(report) > 20000 {
			report = report[:20000] + "\n[...]"
		}
		t.Errorf("%s reported a data race (built with -race):\n%s", what, report)
		return
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == raceExitStatus {
		t.Errorf("%s exited with status %d, the race detector's, but no report was read:\n%s", what, raceExitStatus, output)
	}
}

// runOrchd runs the orchd binary with args (a sub-command that ends by
// itself) and returns its combined output, failing t on a race in it.
func runOrchd(t testing.TB, args ...string) ([]byte, error) {
	t.Helper()
	out, err := exec.Command(orchdBin, args...).CombinedOutput()
	checkRaces(t, "orchd "+strings.Join(args, " "), string(out), err)
	return out, err
}

// waitUntil polls cond until it holds, failing t after a minute: a bound
// for a hang, not a measure of speed (an event that takes a second on a
// busy machine is waited for, not timed).
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

var pprofRE = regexp.MustCompile(`msg=pprof addr=(\S+)`)

// pprofAddr is the address of the pprof server of an orchd started with
// --debug-addr 127.0.0.1:0, read from its log.
func (o *orchd) pprofAddr(t testing.TB) string {
	t.Helper()
	m := pprofRE.FindStringSubmatch(o.log())
	if m == nil {
		t.Fatalf("orchd logged no pprof address (started with --debug-addr?):\n%s", o.log())
	}
	return m[1]
}

// deadAddr returns a loopback address that refuses connections for the
// rest of the test: a TCP socket bound to a port the system picks, never
// listening, and closed at cleanup. The port stays taken, so no other
// process can start listening on it (a listener closed to free a port
// would leave it to anyone).
func deadAddr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("bind: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("getsockname: %v", err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}

type response struct {
	status     int
	body       string
	ctype      string
	retryAfter string
}

func post(t *testing.T, client *http.Client, url, ctype, action string, body []byte) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if action != "" {
		req.Header.Set("SOAPAction", action)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, body: string(b), ctype: resp.Header.Get("Content-Type")}
}

const (
	textXML  = "text/xml; charset=utf-8"
	poAction = `"urn:example:po#submitPurchaseOrder"`
)

// ackFields parses a PO ack envelope into its child element texts.
func ackFields(t *testing.T, body string) map[string]string {
	t.Helper()
	doc := etree.NewDocument()
	if err := doc.ReadFromString(body); err != nil {
		t.Fatalf("reply is not XML: %v\n%s", err, body)
	}
	ack := doc.FindElement("//purchaseOrderAck")
	if ack == nil {
		t.Fatalf("reply has no purchaseOrderAck:\n%s", body)
	}
	if ack.NamespaceURI() != "urn:example:po" {
		t.Fatalf("ack namespace %q", ack.NamespaceURI())
	}
	out := map[string]string{}
	for _, c := range ack.ChildElements() {
		if c.NamespaceURI() != "urn:example:po" {
			t.Errorf("ack child %s in namespace %q", c.Tag, c.NamespaceURI())
		}
		out[c.Tag] = c.Text()
	}
	return out
}

func checkAck(t *testing.T, r response, want map[string]string) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200:\n%s", r.status, r.body)
	}
	got := ackFields(t, r.body)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("ack %s = %q, want %q", k, got[k], v)
		}
	}
}

// faultCode returns the SOAP 1.1 faultcode (local part) or the SOAP 1.2
// Code/Value, and the reason text.
func faultCode(t *testing.T, body string) (code, reason string) {
	t.Helper()
	doc := etree.NewDocument()
	if err := doc.ReadFromString(body); err != nil {
		t.Fatalf("fault is not XML: %v\n%q", err, body)
	}
	if fc := doc.FindElement("//faultcode"); fc != nil {
		code = fc.Text()
		reason = doc.FindElement("//faultstring").Text()
	} else if v := doc.FindElement("//Code/Value"); v != nil {
		code = v.Text()
		reason = doc.FindElement("//Reason/Text").Text()
	} else {
		t.Fatalf("no SOAP fault in:\n%s", body)
	}
	if i := strings.IndexByte(code, ':'); i >= 0 {
		code = code[i+1:]
	}
	return code, reason
}

func TestPurchaseOrderEndToEnd(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir())
	client := &http.Client{Timeout: 30 * time.Second}
	url := o.base + "/processes/PurchaseOrder"

	r := post(t, client, url, textXML, poAction, readWorkload(t, "po-request.xml"))
	checkAck(t, r, map[string]string{"poId": "PO-000123", "crmRef": "CRM-00000001", "workOrderId": "WO-00000001", "total": "322.48", "status": "ACCEPTED"})
	r = post(t, client, url, textXML, poAction, readWorkload(t, "po-request-2.xml"))
	checkAck(t, r, map[string]string{"poId": "PO-000456", "crmRef": "CRM-00000002", "workOrderId": "WO-00000002", "total": "793.23", "status": "ACCEPTED"})
	// Without SOAPAction the body element resolves the operation.
	r = post(t, client, url, textXML, "", readWorkload(t, "po-request.xml"))
	checkAck(t, r, map[string]string{"crmRef": "CRM-00000003", "total": "322.48"})
}

func TestBadInput(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	o := startOrchd(t, "--deploy", deploy, "--max-body", "65536")
	client := &http.Client{Timeout: 30 * time.Second}
	url := o.base + "/processes/PurchaseOrder"
	good := readWorkload(t, "po-request.xml")
	noItems := regexp.MustCompile(`(?s)<po:items>.*</po:items>`).ReplaceAll(good, []byte("<po:items/>"))
	var many strings.Builder
	for i := range 1001 {
		fmt.Fprintf(&many, ` a%d="1"`, i)
	}
	manyAttrs := many.String()
	big := bytes.Replace(good, []byte("<soapenv:Header/>"), []byte("<soapenv:Header><x>"+strings.Repeat("a", 70000)+"</x></soapenv:Header>"), 1)

	tests := []struct {
		name       string
		url, ctype string
		action     string
		body       []byte
		status     int
		code       string // fault code (local part)
		reason     string // substring of the reason
	}{
		{"malformed XML", url, textXML, poAction, []byte("<soapenv:Envelope xmlns:soapenv='http://schemas.xmlsoap.org/soap/envelope/'><soapenv:Body><oops></soapenv:Body>"), 500, "Client", "line 1"},
		{"not XML at all", url, textXML, poAction, []byte("hello"), 500, "Client", ""},
		{"DTD", url, textXML, poAction, append([]byte(`<!DOCTYPE soapenv:Envelope [<!ENTITY e "x">]>`), good...), 500, "Client", "DTD (DOCTYPE) not allowed"},
		{"over the default attribute limit", url, textXML, poAction, bytes.Replace(good, []byte("<po:purchaseOrder>"), []byte("<po:purchaseOrder"+manyAttrs+">"), 1), 500, "Client", "over the attributes per element limit of 1000"},
		{"empty body", url, textXML, poAction, nil, 500, "Client", ""},
		{"wrong envelope namespace", url, textXML, poAction, bytes.ReplaceAll(good, []byte("http://schemas.xmlsoap.org/soap/envelope/"), []byte("urn:not-soap")), 500, "VersionMismatch", "urn:not-soap"},
		{"unknown operation", url, textXML, `"urn:example:po#cancel"`, bytes.ReplaceAll(good, []byte("po:purchaseOrder>"), []byte("po:cancelOrder>")), 500, "Client", "cancelOrder"},
		{"wrong content type", url, "application/json", poAction, good, 415, "Client", "application/json"},
		{"body too large", url, textXML, poAction, big, 413, "Client", "65536"},
		{"unknown path", o.base + "/processes/Nope", textXML, poAction, good, 404, "Client", "/processes/Nope"},
		{"declared fault: no items", url, textXML, poAction, noItems, 500, "Server", "invalidOrder"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, client, tc.url, tc.ctype, tc.action, tc.body)
			if r.status != tc.status {
				t.Errorf("status %d, want %d:\n%s", r.status, tc.status, r.body)
			}
			code, reason := faultCode(t, r.body)
			if code != tc.code {
				t.Errorf("fault code %q, want %q (reason %q)", code, tc.code, reason)
			}
			if !strings.Contains(reason, tc.reason) {
				t.Errorf("reason %q does not mention %q", reason, tc.reason)
			}
			// The next good request is still served.
			checkAck(t, post(t, client, url, textXML, poAction, good), map[string]string{"status": "ACCEPTED", "total": "322.48"})
		})
	}
	// The declared fault carries the fault message as detail.
	r := post(t, client, url, textXML, poAction, noItems)
	if !strings.Contains(r.body, "orderFault") || !strings.Contains(r.body, "purchase order has no items") {
		t.Errorf("fault detail missing:\n%s", r.body)
	}
}

func TestFailingPartner(t *testing.T) {
	crm, _ := startMocks(t)
	// The ERP address points at a port nobody listens on.
	dead := deadAddr(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, dead, nil)
	o := startOrchd(t, "--deploy", deploy)
	client := &http.Client{Timeout: 30 * time.Second}
	r := post(t, client, o.base+"/processes/PurchaseOrder", textXML, poAction, readWorkload(t, "po-request.xml"))
	code, reason := faultCode(t, r.body)
	if r.status != 500 || code != "Server" {
		t.Errorf("status %d code %q, want 500 Server", r.status, code)
	}
	for _, want := range []string{"erp", "createWorkOrder", dead} {
		if !strings.Contains(reason, want) {
			t.Errorf("reason %q does not name %q", reason, want)
		}
	}
}

func TestUnsupportedBundleIsSkipped(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	bad := copyBundle(t, deploy, "with-extvar", crm, erp, map[string][][2]string{
		"PurchaseOrder.bpel": {{`<empty name="orderIsValid"/>`, `<scope><variables><variable name="x" messageType="po:purchaseOrderRequest" xmlns:xvar="http://ode.apache.org/externalVariables" xvar:id="ext"/></variables><empty name="orderIsValid"/></scope>`}, {`name="PurchaseOrder"`, `name="PurchaseOrderFlow"`}},
		"deploy.xml":         {{`pns:PurchaseOrder"`, `pns:PurchaseOrderFlow"`}},
	})
	b, err := os.ReadFile(filepath.Join(bad, "PurchaseOrder.bpel"))
	if err != nil {
		t.Fatal(err)
	}
	line := 0
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "xvar:id") {
			line = i + 1
		}
	}
	o := startOrchd(t, "--deploy", deploy)
	want := fmt.Sprintf("not supported yet: external variables (xvar:id on variable x) at PurchaseOrder.bpel:%d", line)
	if !strings.Contains(o.log(), want) {
		t.Errorf("log does not report %q:\n%s", want, o.log())
	}
	client := &http.Client{Timeout: 30 * time.Second}
	checkAck(t, post(t, client, o.base+"/processes/PurchaseOrder", textXML, poAction, readWorkload(t, "po-request.xml")), map[string]string{"status": "ACCEPTED"})
}

func TestSOAP12Binding(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "po12", crm, erp, map[string][][2]string{
		"PurchaseOrder.wsdl": {{"http://schemas.xmlsoap.org/wsdl/soap/", "http://schemas.xmlsoap.org/wsdl/soap12/"}},
	})
	o := startOrchd(t, "--deploy", deploy)
	client := &http.Client{Timeout: 30 * time.Second}
	body := bytes.ReplaceAll(readWorkload(t, "po-request.xml"), []byte("http://schemas.xmlsoap.org/soap/envelope/"), []byte("http://www.w3.org/2003/05/soap-envelope"))
	r := post(t, client, o.base+"/processes/PurchaseOrder", `application/soap+xml; charset=utf-8; action="urn:example:po#submitPurchaseOrder"`, "", body)
	checkAck(t, r, map[string]string{"total": "322.48", "status": "ACCEPTED"})
	if !strings.HasPrefix(r.ctype, "application/soap+xml") || !strings.Contains(r.body, "http://www.w3.org/2003/05/soap-envelope") {
		t.Errorf("SOAP 1.2 reply expected, got %q:\n%s", r.ctype, r.body)
	}
	// A SOAP 1.1 request to a SOAP 1.2 endpoint is refused clearly.
	r = post(t, client, o.base+"/processes/PurchaseOrder", textXML, poAction, readWorkload(t, "po-request.xml"))
	if r.status < 400 || !strings.Contains(r.body, "1.2") {
		t.Errorf("SOAP 1.1 to a 1.2 endpoint: status %d:\n%s", r.status, r.body)
	}
}

func get(t *testing.T, url string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func metricValue(t *testing.T, metrics, series string) string {
	t.Helper()
	for _, l := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(l, series+" ") {
			return strings.TrimPrefix(l, series+" ")
		}
	}
	t.Errorf("metric %s not found", series)
	return ""
}

// metricWith returns the value of the first series of metric name whose
// labels include each of labels (`k="v"`), or "" when there is none.
func metricWith(metrics, name string, labels ...string) string {
	for _, l := range strings.Split(metrics, "\n") {
		series, value, ok := strings.Cut(l, " ")
		if !ok || !strings.HasPrefix(series, name+"{") {
			continue
		}
		all := true
		for _, lb := range labels {
			all = all && strings.Contains(series, lb)
		}
		if all {
			return value
		}
	}
	return ""
}

func TestListingWSDLAndMetrics(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	o := startOrchd(t, "--deploy", deploy)
	client := &http.Client{Timeout: 30 * time.Second}
	for i := 0; i < 3; i++ {
		checkAck(t, post(t, client, o.base+"/processes/PurchaseOrder", textXML, poAction, readWorkload(t, "po-request.xml")), map[string]string{"status": "ACCEPTED"})
	}
	post(t, client, o.base+"/processes/PurchaseOrder", textXML, poAction, []byte("junk"))

	status, body := get(t, o.base+"/", "Accept", "application/json")
	if status != 200 || !strings.Contains(body, `"path": "/processes/PurchaseOrder"`) || !strings.Contains(body, "submitPurchaseOrder") {
		t.Errorf("JSON listing: %d\n%s", status, body)
	}
	status, body = get(t, o.base+"/")
	if status != 200 || !strings.Contains(body, "<html") || !strings.Contains(body, "/processes/PurchaseOrder") {
		t.Errorf("HTML listing: %d\n%s", status, body)
	}
	status, body = get(t, o.base+"/processes/PurchaseOrder?wsdl")
	if status != 200 || !strings.Contains(body, "PurchaseOrderService") {
		t.Fatalf("?wsdl: %d\n%s", status, body)
	}
	// The address is the one this request reached (not the bundle's
	// localhost:8080), and the schema a reference relative to the WSDL's.
	if want := `<soap:address location="` + o.base + `/processes/PurchaseOrder"/>`; !strings.Contains(body, want) {
		t.Errorf("?wsdl lacks %s:\n%s", want, body)
	}
	m := regexp.MustCompile(`schemaLocation="([^"]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("WSDL imports no schema:\n%s", body)
	}
	wsdlURL, _ := url.Parse(o.base + "/processes/PurchaseOrder?wsdl")
	ref, err := url.Parse(strings.ReplaceAll(m[1], "&amp;", "&"))
	if err != nil || ref.IsAbs() || strings.HasPrefix(ref.Path, "/") {
		t.Fatalf("schemaLocation %q is not a relative path reference (%v)", m[1], err)
	}
	status, xsd := get(t, wsdlURL.ResolveReference(ref).String())
	if status != 200 || !strings.Contains(xsd, "purchaseOrder") {
		t.Errorf("imported schema %s: %d\n%s", m[1], status, xsd)
	}

	_, metrics := get(t, o.base+"/metrics")
	if v := metricValue(t, metrics, `orchd_exchanges_total{operation="submitPurchaseOrder",outcome="ok",process="PurchaseOrder"}`); v != "3" {
		t.Errorf("ok exchanges = %s, want 3", v)
	}
	if v := metricValue(t, metrics, `orchd_exchange_duration_seconds_count{operation="submitPurchaseOrder",outcome="ok",process="PurchaseOrder"}`); v != "3" {
		t.Errorf("ok exchanges timed = %s, want 3", v)
	}
	if v := metricValue(t, metrics, `orchd_partner_invocations_total{operation="recordPurchaseOrder",outcome="ok",partner="crm",process="PurchaseOrder"}`); v != "3" {
		t.Errorf("CRM invocations = %s, want 3", v)
	}
	if v := metricValue(t, metrics, `orchd_instances_ended_total{outcome="completed",process="PurchaseOrder",version="1"}`); v != "3" {
		t.Errorf("completed instances = %s, want 3", v)
	}
	if v := metricValue(t, metrics, `orchd_store_commits_total{process="PurchaseOrder"}`); v != "0" {
		t.Errorf("store commits = %s, want 0 for an in-memory process", v)
	}
	if v := metricValue(t, metrics, `orchd_store_serialized_bytes_total{process="PurchaseOrder"}`); v != "0" {
		t.Errorf("serialized bytes = %s, want 0 for an in-memory process", v)
	}
	if !strings.Contains(metrics, `outcome="client_error"`) {
		t.Errorf("the junk request is not counted as a client error")
	}
	if !strings.Contains(metrics, "go_goroutines") || !strings.Contains(metrics, "process_resident_memory_bytes") {
		t.Errorf("Go and process collectors missing")
	}
}

func TestGracefulShutdown(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	o := startOrchd(t, "--deploy", deploy)
	client := &http.Client{Timeout: 30 * time.Second}
	checkAck(t, post(t, client, o.base+"/processes/PurchaseOrder", textXML, poAction, readWorkload(t, "po-request.xml")), map[string]string{"status": "ACCEPTED"})
	if err := o.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-o.done:
		o.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("orchd exited with %v after SIGTERM\n%s", err, o.log())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("orchd did not exit after SIGTERM\n%s", o.log())
	}
	if !strings.Contains(o.log(), "msg=stopped") {
		t.Errorf("no clean stop in the log:\n%s", o.log())
	}
}

// TestReadmeRunCommand runs what the README's first command runs: the
// example deploy directory with --mock-partners on the WSDL addresses.
func TestReadmeRunCommand(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:9101", "127.0.0.1:9102"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("the example's mock partner address %s is taken: %v", addr, err)
		}
		ln.Close()
	}
	o := startOrchd(t, "--deploy", "../../deploy", "--mock-partners", "--data", t.TempDir())
	client := &http.Client{Timeout: 30 * time.Second}
	checkAck(t, post(t, client, o.base+"/processes/PurchaseOrder", textXML, poAction, readWorkload(t, "po-request.xml")),
		map[string]string{"poId": "PO-000123", "crmRef": "CRM-00000001", "workOrderId": "WO-00000001", "total": "322.48", "status": "ACCEPTED"})
}
