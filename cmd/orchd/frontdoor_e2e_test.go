package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/etcdtest"
	"github.com/orchd/orchd/internal/mockpartner"
)

// The front-door tests talk to a real orchd over real sockets the way slow,
// idle, greedy and too many clients do, and check that each is cut off or
// refused while a normal client keeps being served.

// poRequestBytes is a purchase-order HTTP request as sent on the wire.
func poRequestBytes(t *testing.T, body []byte) []byte {
	t.Helper()
	return []byte("POST /processes/PurchaseOrder HTTP/1.1\r\nHost: orchd\r\nContent-Type: " + textXML +
		"\r\nSOAPAction: " + poAction + "\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + string(body))
}

// dialOrchd opens a raw connection to o.
func dialOrchd(t *testing.T, o *orchd) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(o.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// trickle writes p to c one byte every 50ms, after sending its first
// at bytes at once, until it has all been written, a write fails or
// stop is closed.
func trickle(c net.Conn, p []byte, at int, stop <-chan struct{}) {
	if _, err := c.Write(p[:at]); err != nil {
		return
	}
	for _, b := range p[at:] {
		select {
		case <-stop:
			return
		case <-time.After(50 * time.Millisecond):
		}
		if _, err := c.Write([]byte{b}); err != nil {
			return
		}
	}
}

// readUntilClosed reads c until the server closes it (or a minute passes)
// and returns what it read and how long that took.
func readUntilClosed(t *testing.T, c net.Conn) (string, time.Duration, error) {
	t.Helper()
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(time.Minute))
	var got bytes.Buffer
	_, err := io.Copy(&got, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return got.String(), time.Since(start), fmt.Errorf("not closed after a minute: %w", err)
	}
	return got.String(), time.Since(start), nil
}

// normalClient posts purchase orders one after the other until stop is
// closed, counting answers that are and are not an ACCEPTED acknowledgment.
type normalClient struct {
	ok, bad atomic.Int64
	last    atomic.Value // string: the last bad answer
	done    chan struct{}
}

func startNormalClient(t *testing.T, url string, body []byte, stop <-chan struct{}) *normalClient {
	nc := &normalClient{done: make(chan struct{})}
	client := &http.Client{Timeout: 20 * time.Second}
	go func() {
		defer close(nc.done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			req.Header.Set("Content-Type", textXML)
			req.Header.Set("SOAPAction", poAction)
			resp, err := client.Do(req)
			if err != nil {
				nc.bad.Add(1)
				nc.last.Store(err.Error())
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte("ACCEPTED")) {
				nc.bad.Add(1)
				nc.last.Store(fmt.Sprintf("HTTP %d: %s", resp.StatusCode, b))
				continue
			}
			nc.ok.Add(1)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return nc
}

// TestSlowClients: a client trickling its headers is cut off after
// --read-header-timeout, one trickling its body after --body-timeout,
// an idle keep-alive connection is closed after --idle-timeout, and a
// header block over --max-http-header-bytes gets 431; all the while a
// normal client is served.
func TestSlowClients(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	o := startOrchd(t, "--deploy", deploy, "--read-header-timeout", "1s", "--body-timeout", "1s",
		"--idle-timeout", "1s", "--max-http-header-bytes", "4096")
	body := readWorkload(t, "po-request.xml")
	url := o.base + "/processes/PurchaseOrder"
	stop := make(chan struct{})
	nc := startNormalClient(t, url, body, stop)

	req := poRequestBytes(t, body)
	headerEnd := bytes.Index(req, []byte("\r\n\r\n")) + 4
	tests := []struct {
		name string
		// send writes the client's side on c; it returns when the
		// server answers or closes the connection.
		send func(c net.Conn, stop <-chan struct{})
		// the connection must be closed no sooner than min after the
		// send starts
		min time.Duration
		// and the server's answer must contain want; "|answer": contain
		// answer or be empty
		want string
	}{
		// Go's server closes the connection, answering 400 when it had
		// read a little of the headers already.
		{"headers trickled", func(c net.Conn, stop <-chan struct{}) {
			trickle(c, append(req[:headerEnd-2:headerEnd-2], []byte("X-Slow: "+strings.Repeat("s", 200)+"\r\n\r\n")...), 20, stop)
		}, 900 * time.Millisecond, "|HTTP/1.1 400 Bad Request"},
		{"body trickled", func(c net.Conn, stop <-chan struct{}) {
			trickle(c, req, headerEnd+10, stop)
		}, 900 * time.Millisecond, "reading request body"},
		{"idle keep-alive connection", func(c net.Conn, stop <-chan struct{}) {
			_, _ = c.Write(req)
		}, 900 * time.Millisecond, "ACCEPTED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := nc.ok.Load()
			c := dialOrchd(t, o)
			stopSend := make(chan struct{})
			defer close(stopSend)
			start := time.Now()
			go tc.send(c, stopSend)
			got, _, err := readUntilClosed(t, c)
			took := time.Since(start)
			if err != nil {
				t.Fatalf("%v; read %q", err, got)
			}
			if took < tc.min {
				t.Errorf("closed after %s, before the timeout of 1s", took)
			}
			if silent, answer, _ := strings.Cut(tc.want, "|"); !(silent == "" && got == "" || strings.Contains(got, answer)) {
				t.Errorf("answered %q, want it to contain %q", got, answer)
			}
			t.Logf("closed after %s", took.Round(time.Millisecond))
			// The normal client was served meanwhile.
			waitUntil(t, "the normal client to be served", func() bool { return nc.ok.Load() > before })
		})
	}
	t.Run("header block too large", func(t *testing.T) {
		c := dialOrchd(t, o)
		big := bytes.Replace(req, []byte("\r\n\r\n"), []byte("\r\nX-Big: "+strings.Repeat("b", 10<<10)+"\r\n\r\n"), 1)
		if _, err := c.Write(big); err != nil {
			t.Fatal(err)
		}
		got, _, err := readUntilClosed(t, c)
		if !strings.HasPrefix(got, "HTTP/1.0 431 ") && !strings.HasPrefix(got, "HTTP/1.1 431 ") {
			t.Errorf("answered %q (%v), want 431\n%s", got, err, o.log())
		}
	})
	close(stop)
	<-nc.done
	if nc.ok.Load() == 0 || nc.bad.Load() != 0 {
		t.Errorf("normal client: %d served, %d not (last: %v)", nc.ok.Load(), nc.bad.Load(), nc.last.Load())
	}
}

// rawExchange sends one request on the keep-alive connection c (read
// through br) and returns the response's status and body.
func rawExchange(t *testing.T, c net.Conn, br *bufio.Reader, req []byte) (int, http.Header, string) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// TestMaxConns: with --max-conns connections open, one more is answered
// 503 with Retry-After and closed at once instead of waiting, while the
// open ones are served; when one closes, a new one is served.
func TestMaxConns(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	o := startOrchd(t, "--deploy", deploy, "--max-conns", "3")
	req := poRequestBytes(t, readWorkload(t, "po-request.xml"))
	metricsReq := []byte("GET /metrics HTTP/1.1\r\nHost: orchd\r\n\r\n")

	type conn struct {
		c  net.Conn
		br *bufio.Reader
	}
	var open []conn
	for range 3 {
		c := dialOrchd(t, o)
		open = append(open, conn{c, bufio.NewReader(c)})
		if status, _, b := rawExchange(t, c, open[len(open)-1].br, req); status != http.StatusOK || !strings.Contains(b, "ACCEPTED") {
			t.Fatalf("connection %d: HTTP %d %s", len(open), status, b)
		}
	}
	for i := range 3 {
		extra := dialOrchd(t, o)
		_, _ = extra.Write(req)
		// Not queued: the answer comes while the three stay open (the
		// read would time out after a minute if it waited for one).
		got, _, err := readUntilClosed(t, extra)
		if err != nil {
			t.Fatalf("extra connection %d: %v", i, err)
		}
		if !strings.HasPrefix(got, "HTTP/1.1 503 ") || !strings.Contains(got, "Retry-After: 1") || !strings.Contains(got, "--max-conns") {
			t.Errorf("extra connection %d answered %q", i, got)
		}
	}
	for i, oc := range open {
		if status, _, b := rawExchange(t, oc.c, oc.br, req); status != http.StatusOK || !strings.Contains(b, "ACCEPTED") {
			t.Errorf("open connection %d after the refusals: HTTP %d %s", i, status, b)
		}
	}
	_, _, m := rawExchange(t, open[0].c, open[0].br, metricsReq)
	if v := metricValue(t, m, "orchd_connections_refused_total"); v != "3" {
		t.Errorf("orchd_connections_refused_total = %s, want 3", v)
	}
	if v := metricValue(t, m, "orchd_connections_open"); v != "3" {
		t.Errorf("orchd_connections_open = %s, want 3", v)
	}
	open[2].c.Close()
	waitUntil(t, "a new connection to be served", func() bool {
		c := dialOrchd(t, o)
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(req); err != nil {
			return false
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// gatedCRM is the mock CRM behind a gate: each call waits until the gate
// opens (or 30 seconds pass).
type gatedCRM struct {
	addr    string
	waiting atomic.Int64
	open    chan struct{}
	once    sync.Once
}

func startGatedCRM(t *testing.T) *gatedCRM {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedCRM{addr: ln.Addr().String(), open: make(chan struct{})}
	crm := mockpartner.New(nil).CRM()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.waiting.Add(1)
		select {
		case <-g.open:
		case <-time.After(30 * time.Second):
		}
		g.waiting.Add(-1)
		crm.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		g.release()
		_ = srv.Close()
	})
	return g
}

func (g *gatedCRM) release() { g.once.Do(func() { close(g.open) }) }

// TestOverloadShedding: with --max-inflight 1 taken by an exchange that
// keeps the CPU busy (a loop, stopped by --max-steps), further requests
// wait --queue-wait and are shed with HTTP 503, Retry-After and a SOAP
// Server fault saying orchd is overloaded, long before the admitted one
// finishes; it then finishes, and orchd serves again. So under either
// --admission (the adaptive limit starts at --max-inflight and moves only
// as exchanges finish).
func TestOverloadShedding(t *testing.T) {
	for _, tc := range []struct{ admission, fault string }{
		{"fixed", "server overloaded: 1 exchanges in flight (--max-inflight)"},
		{"adaptive", "server overloaded: the exchanges in flight reached the adaptive limit (--admission adaptive)"},
	} {
		t.Run(tc.admission, func(t *testing.T) { testOverloadShedding(t, tc.admission, tc.fault) })
	}
}

// TestOverloadSheddingCluster is TestOverloadShedding (fixed admission)
// on a node with --cluster, where the front door's forwarder decodes the
// envelope and reads etcd for an in-memory instance's node before the
// limiter: excess requests are still shed, with the same answer.
func TestOverloadSheddingCluster(t *testing.T) {
	ec := etcdtest.Start(t, 1)
	testOverloadShedding(t, "fixed", "server overloaded: 1 exchanges in flight (--max-inflight)",
		"--data", t.TempDir(), "--store", "etcd", "--etcd-endpoints", strings.Join(ec.Endpoints(), ","), "--etcd-prefix", cluster.Prefix("shed"),
		"--cluster", "shed", "--node-id", "a")
}

// testOverloadShedding runs the overload check with --admission
// admission, the fault reason it must give, and extra orchd flags. The
// admitted loop must outlast the answers to the excess requests; on a
// machine so loaded that it did not, the check runs again on a new orchd
// with a loop four times longer (three tries), rather than fail on speed.
func testOverloadShedding(t *testing.T, admission, fault string, extra ...string) {
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	writeProcess(t, deploy, "Loop", "127.0.0.1:1", runawayBody, true)
	for steps, try := 3000000, 1; ; steps, try = steps*4, try+1 {
		if overloadShedding(t, deploy, admission, fault, steps, extra) {
			return
		}
		if try == 3 {
			t.Fatalf("the loop (up to %d steps) ended before the excess requests were answered, %d times: the test proves nothing", steps, try)
		}
		t.Logf("the loop of %d steps ended before the excess requests were answered: again with %d", steps, 4*steps)
	}
}

// overloadShedding is one try of testOverloadShedding with a loop of
// steps; false when the loop ended before it was seen holding the slot
// or before the excess requests were answered.
func overloadShedding(t *testing.T, deploy, admission, fault string, steps int, extra []string) bool {
	// --body-timeout is shorter than the admitted exchange: it bounds
	// reading the body only, not the exchange.
	o := startOrchd(t, append([]string{"--deploy", deploy, "--admission", admission, "--max-inflight", "1", "--queue-wait", "50ms", "--body-timeout", "300ms",
		"--max-steps", strconv.Itoa(steps)}, extra...)...)
	defer o.stop(t)
	client := &http.Client{Timeout: 120 * time.Second}
	url := o.base + "/processes/PurchaseOrder"
	body := readWorkload(t, "po-request.xml")

	var busy response
	done := make(chan struct{})
	go func() {
		defer close(done)
		busy = postAction(client, o.base+"/processes/Loop", `"urn:e2e#run"`, []byte(e2eRequest("L1", "1")))
	}()
	ended := false
	waitUntil(t, "the loop to take the slot", func() bool {
		select {
		case <-done:
			ended = true
			return true
		default:
		}
		_, m := get(t, o.base+"/metrics")
		return metricValue(t, m, "orchd_inflight_exchanges") == "1"
	})
	if ended {
		return false
	}

	const excess = 6
	shed := make([]response, excess)
	var swg sync.WaitGroup
	for i := range shed {
		swg.Go(func() { shed[i] = postNoFatal(client, url, body) })
	}
	swg.Wait()
	select {
	case <-done:
		return false
	default:
	}
	for i, r := range shed {
		if r.status != http.StatusServiceUnavailable || r.ctype == "" {
			t.Errorf("excess request %d: HTTP %d %q, want 503", i, r.status, r.body)
			continue
		}
		code, reason := faultCode(t, r.body)
		if code != "Server" || !strings.Contains(reason, fault) ||
			!strings.Contains(reason, "within 50ms (--queue-wait)") {
			t.Errorf("excess request %d: fault %s %q", i, code, reason)
		}
	}
	if shed[0].retryAfter != "1" {
		t.Errorf("Retry-After %q, want 1", shed[0].retryAfter)
	}

	<-done
	if busy.status != http.StatusInternalServerError || !strings.Contains(busy.body, "stepBudgetExceeded") {
		t.Errorf("the admitted loop: HTTP %d %s, want its step budget fault", busy.status, busy.body)
	}
	if r := postNoFatal(client, url, body); r.status != http.StatusOK {
		t.Errorf("after the overload: HTTP %d %s", r.status, r.body)
	}
	_, m := get(t, o.base+"/metrics")
	if v := metricValue(t, m, `orchd_shed_total{process="PurchaseOrder"}`); v != strconv.Itoa(excess) {
		t.Errorf("orchd_shed_total = %s, want %d", v, excess)
	}
	if v := metricValue(t, m, "orchd_inflight_exchanges"); v != "0" {
		t.Errorf("orchd_inflight_exchanges = %s, want 0", v)
	}
	return true
}

// TestWaitingExchangesHoldNoSlot: under --admission fixed, --max-inflight
// bounds the exchanges using the CPU; one waiting for a partner's answer gives its slot back,
// so three exchanges wait on a slow partner at once under a bound of one,
// nothing is shed, and all complete once the partner answers.
func TestWaitingExchangesHoldNoSlot(t *testing.T) {
	_, erp := startMocks(t)
	crm := startGatedCRM(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm.addr, erp, nil)
	o := startOrchd(t, "--deploy", deploy, "--admission", "fixed", "--max-inflight", "1", "--queue-wait", "50ms")
	client := &http.Client{Timeout: 60 * time.Second}
	url := o.base + "/processes/PurchaseOrder"
	body := readWorkload(t, "po-request.xml")

	var got [3]response
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = postNoFatal(client, url, body) })
	}
	waitUntil(t, "three exchanges to wait on the CRM", func() bool { return crm.waiting.Load() == 3 })
	_, m := get(t, o.base+"/metrics")
	if v := metricValue(t, m, "orchd_inflight_exchanges"); v != "0" {
		t.Errorf("orchd_inflight_exchanges = %s while all wait on the partner, want 0", v)
	}
	crm.release()
	wg.Wait()
	for i, r := range got {
		if r.status != http.StatusOK || !strings.Contains(r.body, "ACCEPTED") {
			t.Errorf("request %d: HTTP %d %s", i, r.status, r.body)
		}
	}
	_, m = get(t, o.base+"/metrics")
	if v := metricValue(t, m, `orchd_shed_total{process="PurchaseOrder"}`); v != "0" {
		t.Errorf("orchd_shed_total = %s, want 0", v)
	}
}

// postNoFatal posts a purchase order from any goroutine; a transport error
// comes back as status 0 with the error as body.
func postNoFatal(client *http.Client, url string, body []byte) response {
	return postAction(client, url, poAction, body)
}

// postAction posts a SOAP 1.1 request with the given SOAPAction from any
// goroutine, as postNoFatal.
func postAction(client *http.Client, url, action string, body []byte) response {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return response{body: err.Error()}
	}
	req.Header.Set("Content-Type", textXML)
	req.Header.Set("SOAPAction", action)
	resp, err := client.Do(req)
	if err != nil {
		return response{body: err.Error()}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, body: string(b), ctype: resp.Header.Get("Content-Type"), retryAfter: resp.Header.Get("Retry-After")}
}
