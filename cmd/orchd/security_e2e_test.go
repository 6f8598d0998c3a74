package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/orchd/orchd/internal/etcdtest"
)

// The security tests (issue 21) each probe, on loopback, one way a
// client could see or reach more than it should, against the real
// binary.

// rawUntilClose writes req on a new connection to base's host and reads
// until the server closes it (or within bound: a server that keeps the
// connection open fails the test). It returns what was read.
func rawUntilClose(t *testing.T, base, req string, bound time.Duration) (string, bool) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(bound))
	b, err := io.ReadAll(c)
	var ne net.Error
	closed := err == nil || !(errors.As(err, &ne) && ne.Timeout())
	return string(b), closed
}

var statusLineRE = regexp.MustCompile(`HTTP/1\.1 (\d{3}) `)

// TestSmuggledRequestDoesNotRun sends a request with both Content-Length
// and Transfer-Encoding whose chunked body ends early and hides a second
// request (what a proxy framing by Content-Length would take for body):
// it is answered 400 and the connection closed, and the hidden request
// never runs.
func TestSmuggledRequestDoesNotRun(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir())

	hidden := "GET /processes/PurchaseOrder?wsdl HTTP/1.1\r\nHost: orchd\r\n\r\n"
	body := "0\r\n\r\n" + hidden
	req := "POST /processes/PurchaseOrder HTTP/1.1\r\nHost: orchd\r\nContent-Type: text/xml\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\nTransfer-Encoding: chunked\r\n\r\n" + body
	got, closed := rawUntilClose(t, o.base, req, 60*time.Second)
	statuses := statusLineRE.FindAllStringSubmatch(got, -1)
	if len(statuses) != 1 || statuses[0][1] != "400" {
		t.Errorf("answers %v, want one 400; read:\n%s", statuses, got)
	}
	if strings.Contains(got, "definitions") {
		t.Errorf("the hidden request ran: its WSDL came back")
	}
	if !closed {
		t.Errorf("the connection was left open")
	}

	// The same connection rules leave a plain keep-alive client alone:
	// two requests framed by Content-Length on one connection both run.
	two := "GET /processes/PurchaseOrder?wsdl HTTP/1.1\r\nHost: orchd\r\n\r\n" +
		"GET /processes/PurchaseOrder?wsdl HTTP/1.1\r\nHost: orchd\r\nConnection: close\r\n\r\n"
	got, _ = rawUntilClose(t, o.base, two, 60*time.Second)
	if n := len(statusLineRE.FindAllString(got, -1)); n != 2 {
		t.Errorf("two keep-alive requests got %d answers, want 2:\n%.500s", n, got)
	}
}

// TestHugeContentLengthAnsweredAtOnce declares a 1 GiB body and sends a
// few bytes: the 413 comes without waiting for the rest (the body
// timeout is set far beyond the test's bound, so an answer that waits
// for it fails), and the connection is closed.
func TestHugeContentLengthAnsweredAtOnce(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir(), "--body-timeout", "30m")
	for _, path := range []string{"/processes/PurchaseOrder", "/no-such-endpoint"} {
		req := "POST " + path + " HTTP/1.1\r\nHost: orchd\r\nContent-Type: text/xml; charset=utf-8\r\n" +
			"Content-Length: 1073741824\r\n\r\n<soapenv:Envelope"
		got, closed := rawUntilClose(t, o.base, req, time.Minute)
		st := statusLineRE.FindStringSubmatch(got)
		want := "413"
		if path == "/no-such-endpoint" {
			want = "404"
		}
		if st == nil || st[1] != want {
			t.Errorf("%s: answer %q, want %s", path, got, want)
		}
		if !closed {
			t.Errorf("%s: the connection was left open", path)
		}
	}
}

// TestSiblingImportRefused: a bundle whose WSDL imports a file of
// another bundle's folder (../OtherBundle/secret.xml) is refused at
// deploy, and the file is not served.
func TestSiblingImportRefused(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, map[string][][2]string{
		"PurchaseOrder.wsdl": {{`<xsd:import namespace="urn:example:po" schemaLocation="po.xsd"/>`,
			`<xsd:import namespace="urn:example:po" schemaLocation="po.xsd"/><xsd:import namespace="urn:secret" schemaLocation="../OtherBundle/secret.xml"/>`}},
	})
	other := filepath.Join(deploy, "OtherBundle")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	const secret = "sibling-secret-4711"
	if err := os.WriteFile(filepath.Join(other, "secret.xml"), []byte(`<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:secret"><!-- `+secret+` --></xsd:schema>`), 0o644); err != nil {
		t.Fatal(err)
	}
	o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir())
	if !strings.Contains(o.log(), `leaves the bundle's folder`) {
		t.Errorf("the log does not say the import leaves the bundle's folder:\n%s", o.log())
	}
	for _, q := range []string{"?wsdl", "?wsdl=../OtherBundle/secret.xml", "?wsdl=" + url.QueryEscape("../OtherBundle/secret.xml")} {
		code, body := get(t, o.base+"/processes/PurchaseOrder"+q)
		if code == http.StatusOK || strings.Contains(body, secret) {
			t.Errorf("GET %s: %d, the bundle was deployed (body %.200q)", q, code, body)
		}
	}
}

// scriptXSD is an "XSD" that is really XHTML with a script, which marks
// the page and calls back to the test when it runs.
const scriptXSD = `<html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body>
<script>document.documentElement.setAttribute('data-ran', 'yes'); new Image().src = 'BEACON';</script>
<svg xmlns="http://www.w3.org/2000/svg" onload="new Image().src = 'BEACON?svg'"/>
</body></html>`

// TestBundleFileScriptDoesNotRun: a bundle file served by ?wsdl= that
// holds a script comes as application/xml with nosniff and a sandbox
// CSP, and in headless Chromium its script does not run.
func TestBundleFileScriptDoesNotRun(t *testing.T) {
	ran := make(chan string, 4)
	beacon := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ran <- r.URL.String()
	}))
	defer beacon.Close()
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	dir := copyBundle(t, deploy, "purchase-order", crm, erp, map[string][][2]string{
		"PurchaseOrder.wsdl": {{`<xsd:import namespace="urn:example:po" schemaLocation="po.xsd"/>`,
			`<xsd:import namespace="urn:example:po" schemaLocation="po.xsd"/><xsd:import namespace="http://www.w3.org/1999/xhtml" schemaLocation="evil.xsd"/>`}},
	})
	if err := os.WriteFile(filepath.Join(dir, "evil.xsd"), []byte(strings.ReplaceAll(scriptXSD, "BEACON", beacon.URL+"/ran")), 0o644); err != nil {
		t.Fatal(err)
	}
	o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir())
	u := o.base + "/processes/PurchaseOrder?wsdl=evil.xsd"
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s (the bundle did not deploy?)\n%s", u, resp.Status, o.log())
	}
	h := resp.Header
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "application/xml") {
		t.Errorf("Content-Type %q, want application/xml", ct)
	}
	if h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("X-Content-Type-Options %q, want nosniff", h.Get("X-Content-Type-Options"))
	}
	if csp := h.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "sandbox") {
		t.Errorf("Content-Security-Policy %q, want sandbox", csp)
	}
	b := newBrowser(t)
	b.do("opening "+u, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS("body")))
	// The page is loaded: an inline script would have run.
	if v := eval[string](b, `document.documentElement.getAttribute('data-ran') || ''`); v != "" {
		t.Errorf("the bundle file's script ran (data-ran=%q)", v)
	}
	// The control page loads after any beacon the bundle file sent.
	b.do("opening the beacon's control page", chromedp.Navigate(beacon.URL+"/control"))
	for seen := ""; seen != "/control"; {
		seen = <-ran
		if strings.HasPrefix(seen, "/ran") {
			t.Errorf("the bundle file's script called back: %s", seen)
		}
	}
}

// getAuth is get with a bearer token (none when tok is empty) and a Host
// header (the URL's when host is empty).
func getAuth(t *testing.T, u, tok, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if host != "" {
		req.Host = host
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestAPIReadsNeedToken: with a token configured, reading an instance's
// variables, listing instances and the event stream all answer 401
// without it; a Host the
// server does not answer to (DNS rebinding) is refused; and without a
// token on a listener that is not loopback the API is off.
func TestAPIReadsNeedToken(t *testing.T) {
	o := approvalServer(t, "--timeline", "100")
	const secretID = "SSN-078-05-1120"
	requestApproval(t, o.base, secretID)
	var page struct {
		Instances []struct {
			ID string `json:"id"`
		} `json:"instances"`
	}
	status, body := getAuth(t, o.base+"/api/v1/instances", adminToken, "")
	if status != 200 || json.Unmarshal([]byte(body), &page) != nil || len(page.Instances) != 1 {
		t.Fatalf("instances with the token: %d %s", status, body)
	}
	id := page.Instances[0].ID
	if status, body := getAuth(t, o.base+"/api/v1/instances/"+id, adminToken, ""); status != 200 || !strings.Contains(body, secretID) {
		t.Fatalf("the instance with the token: %d %s", status, body)
	}
	for _, path := range []string{"/api/v1/instances/" + id, "/api/v1/instances", "/api/v1/events", "/api/v1/processes"} {
		status, body := getAuth(t, o.base+path, "", "")
		if status != http.StatusUnauthorized || strings.Contains(body, secretID) {
			t.Errorf("GET %s without the token: %d %.300s", path, status, body)
		}
		if status, _ := getAuth(t, o.base+path, "wrong-token", ""); status != http.StatusUnauthorized {
			t.Errorf("GET %s with a wrong token: %d", path, status)
		}
	}
	if status, body := getAuth(t, o.base+"/api/v1/", adminToken, "attacker.example:80"); status != http.StatusMisdirectedRequest {
		t.Errorf("a rebound Host: %d %s", status, body)
	}

	// No token, every interface: off, and said so at start.
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", "127.0.0.1:1", "127.0.0.1:1", nil)
	open := startOrchd(t, "--deploy", deploy, "--listen", "0.0.0.0:0")
	port := open.base[strings.LastIndex(open.base, ":")+1:]
	if status, body := getAuth(t, "http://127.0.0.1:"+port+"/api/v1/processes", "", ""); status != http.StatusForbidden || !strings.Contains(body, "--admin-token-file") {
		t.Errorf("API without a token on 0.0.0.0: %d %s", status, body)
	}
	if !strings.Contains(open.log(), "the management API is off") {
		t.Errorf("the start-up log does not say the API is off:\n%s", open.log())
	}
}

// TestAssignedPartnerOutsidePolicy: a client hands orchd an endpoint
// reference to a loopback port outside --partner-allow; the process
// copies it and invokes it. The connection is refused by the policy: the
// internal service is never called, and the client's fault carries none
// of what it would answer; a closed port and a listening one get the
// same fault. The allowed partner is called.
func TestAssignedPartnerOutsidePolicy(t *testing.T) {
	allowed := startSlowPartner(t, 0)
	const page = "internal-admin-page-73c1"
	var internalCalls atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		internalCalls.Add(1)
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html><body>"+page+"</body></html>")
	}))
	defer internal.Close()
	closedAddr := deadAddr(t)

	deploy := t.TempDir()
	writeProcess(t, deploy, "EprIn", "127.0.0.1:1", runBody(`
    <assign><copy><from>$in.payload/tns:n</from><to partnerLink="partner"/></copy></assign>
    `+invokeInto), true)
	o := startOrchd(t, "--deploy", deploy, "--partner-allow", allowed.addr)
	client := &http.Client{Timeout: 30 * time.Second}
	run := func(id, addr string) response {
		return post(t, client, o.base+"/processes/EprIn", textXML, `"urn:e2e#run"`, eprRequest(id, wsaEPR(addr)))
	}
	if r := run("A1", "http://"+allowed.addr+"/partner"); r.status != 200 || !strings.Contains(r.body, ">P-A1<") {
		t.Fatalf("the allowed partner: %d %s\n%s", r.status, r.body, o.log())
	}
	var faults []string
	for _, addr := range []string{internal.URL + "/admin", "http://" + closedAddr + "/admin"} {
		r := run("X", addr)
		if r.status == 200 || strings.Contains(r.body, page) || strings.Contains(r.body, "<html") {
			t.Errorf("EPR to %s: %d, the fault carries the answer: %s", addr, r.status, r.body)
		}
		_, reason := faultCode(t, r.body)
		if !strings.Contains(reason, "not allowed") || !strings.Contains(reason, "call") {
			t.Errorf("EPR to %s: fault %q, want the call named and the policy's refusal", addr, reason)
		}
		u, _ := url.Parse(addr)
		faults = append(faults, strings.ReplaceAll(reason, u.Host, "HOST"))
	}
	if faults[0] != faults[1] {
		t.Errorf("a listening and a closed port are told apart:\n%s\n%s", faults[0], faults[1])
	}
	if n := internalCalls.Load(); n != 0 {
		t.Errorf("the internal service was called %d times", n)
	}
}

// TestPartnerPasswordRedacted: a partner address with user:password@ in
// its soap:address; the partner refuses connections, so the persistent
// instance is suspended on the invoke. The password is in no client
// fault, log line, API answer or ?wsdl document.
func TestPartnerPasswordRedacted(t *testing.T) {
	const password = "pw-S3cr3t-9931"
	dead := deadAddr(t)
	deploy := t.TempDir()
	copyBundleFrom(t, "../../deploy/purchase-order-persistent", deploy, "po", "bob:"+password+"@"+dead, "bob:"+password+"@"+dead, nil)
	o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir(), "--admin-token-file", tokenFile(t, adminToken))
	client := &http.Client{Timeout: 60 * time.Second}
	const path = "/processes/PurchaseOrderPersistent"
	r := post(t, client, o.base+path, textXML, poAction, readWorkload(t, "po-request.xml"))
	if r.status == 200 || r.status == 404 {
		t.Fatalf("the PO answered %d though its partner is down: %s", r.status, r.body)
	}
	seen := map[string]string{"the client's fault": r.body}
	instances := sweepAPI(t, o.base, seen)
	for _, doc := range []string{"", "=crm.wsdl", "=erp.wsdl", "=PurchaseOrderArtifacts.wsdl"} {
		_, seen["?wsdl"+doc] = getAuth(t, o.base+path+"?wsdl"+doc, "", "")
	}
	seen["the log"] = o.log()
	noSecret(t, seen, password)
	if instances == 0 {
		t.Errorf("no instance listed: %s", seen["the instance list"])
	}
	if !strings.Contains(seen["the log"], dead) {
		t.Errorf("the log does not name the failed partner %s at all:\n%s", dead, seen["the log"])
	}
}

// TestTLSClientCertificates: with --tls-client-ca the TLS listener
// serves only clients presenting a certificate that CA signed; with
// --admin-tls-client-ca, --admin-listen requires one of that CA instead.
func TestTLSClientCertificates(t *testing.T) {
	dir := t.TempDir()
	ca, adminCA := newTestCA(t, "orchd test CA"), newTestCA(t, "admin CA")
	caFile, adminCAFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "admin-ca.pem")
	for f, pem := range map[string][]byte{caFile: ca.pem, adminCAFile: adminCA.pem} {
		if err := os.WriteFile(f, pem, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srvCert, srvKey, _ := ca.issue(t, dir, "server", false)
	_, _, client := ca.issue(t, dir, "client", true)
	_, _, adminClient := adminCA.issue(t, dir, "operator", true)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", "127.0.0.1:1", "127.0.0.1:1", nil)
	o := startOrchd(t, "--deploy", deploy, "--tls-cert", srvCert, "--tls-key", srvKey, "--tls-client-ca", caFile,
		"--admin-listen", "127.0.0.1:0", "--admin-tls-client-ca", adminCAFile)
	m := adminAddrRE.FindStringSubmatch(o.log())
	if m == nil {
		t.Fatalf("no management API address logged:\n%s", o.log())
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	try := func(u string, cert *tls.Certificate) error {
		conf := &tls.Config{RootCAs: roots}
		if cert != nil {
			conf.Certificates = []tls.Certificate{*cert}
		}
		c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: conf}}
		resp, err := c.Get(u)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errors.New(resp.Status)
		}
		return nil
	}
	soapURL := strings.Replace(o.base, "http://", "https://", 1) + "/processes/PurchaseOrder?wsdl"
	adminURL := "https://" + m[1] + "/api/v1/"
	for _, tc := range []struct {
		what string
		u    string
		cert *tls.Certificate
		ok   bool
	}{
		{"SOAP listener, no certificate", soapURL, nil, false},
		{"SOAP listener, the admin CA's certificate", soapURL, &adminClient, false},
		{"SOAP listener, a certificate of --tls-client-ca", soapURL, &client, true},
		{"admin listener, no certificate", adminURL, nil, false},
		{"admin listener, a certificate of --tls-client-ca", adminURL, &client, false},
		{"admin listener, a certificate of --admin-tls-client-ca", adminURL, &adminClient, true},
	} {
		if err := try(tc.u, tc.cert); (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want served %v", tc.what, err, tc.ok)
		}
	}
}

// TestSecondUnclusteredNodeRefused: a second orchd without --cluster on
// the etcd prefix a live one uses is refused at start, with an error
// saying what to do; the first goes on serving.
func TestSecondUnclusteredNodeRefused(t *testing.T) {
	c := etcdtest.Start(t, 1)
	crm, erp := startMocks(t)
	args := []string{"--store", "etcd", "--etcd-endpoints", strings.Join(c.Endpoints(), ","), "--etcd-prefix", "/orchd/solo-e2e"}
	first := startOrchd(t, append([]string{"--deploy", persistentDeploy(t, crm, erp), "--data", t.TempDir()}, args...)...)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	second := exec.CommandContext(ctx, orchdBin, append([]string{"serve", "--listen", "127.0.0.1:0",
		"--deploy", persistentDeploy(t, crm, erp), "--data", t.TempDir()}, args...)...)
	out, err := second.CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("the second orchd was not refused (err %v):\n%s", err, out)
	}
	for _, want := range []string{"in use by another live orchd", "--cluster", "--etcd-prefix"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	client := &http.Client{Timeout: 30 * time.Second}
	checkAck(t, post(t, client, first.base+persistentPOPath, textXML, "", poRequest(t, "PO-SOLO-1")), map[string]string{"poId": "PO-SOLO-1", "status": "ACCEPTED"})
}

// TestDuplicateCorrelationFaultHidesStore: a second conversation opened
// with the correlation value of a live one fails, and its fault names
// neither the store's keys nor the other conversation's instance.
func TestDuplicateCorrelationFaultHidesStore(t *testing.T) {
	o := approvalServer(t)
	requestApproval(t, o.base, "DUP-1")
	var page struct {
		Instances []struct {
			ID string `json:"id"`
		} `json:"instances"`
	}
	_, body := getAuth(t, o.base+"/api/v1/instances", adminToken, "")
	if json.Unmarshal([]byte(body), &page) != nil || len(page.Instances) != 1 {
		t.Fatalf("instances: %s", body)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	r := post(t, client, o.base+approvalPath, textXML, `"urn:example:approval#requestApproval"`,
		approvalBody("requestApproval", "DUP-1", "<appr:amount>10</appr:amount><appr:requester>eve</appr:requester>"))
	if r.status == 200 {
		t.Fatalf("a second conversation with the same correlation value was accepted: %s", r.body)
	}
	if strings.Contains(r.body, page.Instances[0].ID) || strings.Contains(r.body, "key ") || strings.Contains(r.body, "persist:") {
		t.Errorf("the fault shows store internals: %s", r.body)
	}
	if !eventually(func() bool { return strings.Contains(o.log(), page.Instances[0].ID) }) {
		t.Errorf("the log does not have the detail:\n%s", o.log())
	}
}
