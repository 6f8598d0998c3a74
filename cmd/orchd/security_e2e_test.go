package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
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
