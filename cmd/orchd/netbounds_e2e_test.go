package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTwoBodiesRefused: an envelope with two Bodies (or an element
// before or after its Body) is refused with a SOAP Client fault naming
// the element, and its process does not run.
func TestTwoBodiesRefused(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "Bodies", "127.0.0.1:1", runBody(""), true)
	o := startOrchd(t, "--deploy", deploy)
	client := &http.Client{Timeout: 30 * time.Second}
	const req = `<req xmlns="urn:e2e"><id>B</id><n>1</n></req>`
	for _, tc := range []struct{ name, env, want string }{
		{"two bodies", `<soapenv:Body>` + req + `</soapenv:Body><soapenv:Body>` + req + `</soapenv:Body>`, "Envelope child 2 <Body> after the Body"},
		{"junk before the body", `<x:junk xmlns:x="urn:x"/><soapenv:Body>` + req + `</soapenv:Body>`, "Envelope child 1 <{urn:x}junk> before the Body"},
	} {
		env := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/">` + tc.env + `</soapenv:Envelope>`
		r := post(t, client, o.base+"/processes/Bodies", textXML, `"urn:e2e#run"`, []byte(env))
		code, reason := faultCode(t, r.body)
		if r.status == 200 || !strings.HasSuffix(code, "Client") || !strings.Contains(reason, tc.want) {
			t.Errorf("%s: %d %s %q, want a Client fault saying %q", tc.name, r.status, code, reason, tc.want)
		}
	}
	if r := callRun(t, o.base, "Bodies", "C", "1"); r.status != 200 {
		t.Errorf("a well-formed request: %d %s", r.status, r.body)
	}
}

// TestConnsPerClient: one client address (127.0.0.1) holding its share
// of connections (--max-conns-per-client 4, of --max-conns 8) has every
// further connection answered 503 at accept and counted, while a second
// client address (127.0.0.2) is still served.
func TestConnsPerClient(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "Share", "127.0.0.1:1", runBody(""), true)
	o := startOrchd(t, "--deploy", deploy, "--max-conns", "8", "--max-conns-per-client", "4")
	addr := strings.TrimPrefix(o.base, "http://")
	dialFrom := func(ip string) (net.Conn, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
		return d.Dial("tcp", addr)
	}
	var held []net.Conn
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	refused := 0
	for i := range 8 {
		c, err := dialFrom("127.0.0.1")
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		held = append(held, c)
		// A held connection gets no answer before it sends; a refused
		// one is answered at once.
		_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		line, err := bufio.NewReader(c).ReadString('\n')
		switch {
		case err == nil && strings.Contains(line, " 503 "):
			refused++
		case err == nil:
			t.Errorf("connection %d answered %q before a request", i, line)
		}
	}
	if refused != 4 {
		t.Errorf("%d of 8 connections from one address refused, want 4 (over its share of 4)", refused)
	}
	b, err := dialFrom("127.0.0.2")
	if err != nil {
		t.Fatalf("127.0.0.2: %v", err)
	}
	b.Close()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}}
	if r := post(t, client, o.base+"/processes/Share", textXML, `"urn:e2e#run"`, e2eRequest("S", "1")); r.status != 200 {
		t.Errorf("the second client: %d %s\n%s", r.status, r.body, o.log())
	}
	resp, err := client.Get(o.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	metrics, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(metrics), "\norchd_connections_refused_per_client_total 4\n") {
		t.Errorf("orchd_connections_refused_per_client_total is not 4:\n%s", metrics)
	}
}

// replyAfterGo starts an instance on run, initiating cs with the id,
// and replies to run once a go with that id came.
const replyAfterGo = `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes">
      <correlations><correlation set="cs" initiate="yes"/></correlations>
    </receive>
    ` + initOut + `
    <receive partnerLink="client" operation="go" variable="more"><correlations><correlation set="cs"/></correlations></receive>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`

// TestStoreBoundsUnnamed: a correlation value longer than the store's
// bound of a route key is refused with a fault that says so plainly,
// without the store's key format or sizes (those are in the log).
func TestStoreBoundsUnnamed(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "LongKey", "127.0.0.1:1", replyAfterGo, false)
	o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir())
	r := callRun(t, o.base, "LongKey", strings.Repeat("k", 900000), "1")
	_, reason := faultCode(t, r.body)
	if r.status == 200 || !strings.Contains(reason, "over the store's bounds") || strings.Contains(reason, "route key") || strings.Contains(reason, "bytes") {
		t.Errorf("%d %q, want a fault saying a value is over the store's bounds, naming no key or size", r.status, reason)
	}
	// The log line may follow the answer: the run logs after it replied.
	waitLog(t, o, "route key of")
}

// TestBodyTimeoutUnnamed: a body that does not arrive within
// --body-timeout is answered with a fault saying so, naming neither
// end's socket address.
func TestBodyTimeoutUnnamed(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "SlowBody", "127.0.0.1:1", runBody(""), true)
	o := startOrchd(t, "--deploy", deploy, "--body-timeout", "500ms")
	req := "POST /processes/SlowBody HTTP/1.1\r\nHost: orchd\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: \"urn:e2e#run\"\r\n" +
		"Content-Length: 1000\r\n\r\n<soapenv:Envelope"
	got, _ := rawUntilClose(t, o.base, req, 30*time.Second)
	if !strings.Contains(got, "reading request body: it did not arrive in time") || strings.Contains(got, "127.0.0.1") || strings.Contains(got, "tcp") {
		t.Errorf("answer %q, want a plain statement naming no address", got)
	}
}
