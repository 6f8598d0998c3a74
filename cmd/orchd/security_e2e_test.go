package main

import (
	"errors"
	"io"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
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
