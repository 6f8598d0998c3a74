package main

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The partner-failure tests deploy testdata/partnerfail (a process that
// calls a partner inside a scope catching what the call throws, and
// answers with the caught fault's name and a text from its data) into a
// real orchd, against a real partner on loopback that misbehaves the way
// each request's id asks.

// misbehaving is a partner whose answer to a call depends on the call's
// id (its behaviour is the part before the first "-"). It counts its
// connections through ConnState.
type misbehaving struct {
	addr string
	srv  *http.Server
	stop chan struct{}

	mu       sync.Mutex
	conns    map[net.Conn]http.ConnState
	attempts map[string]int
	// authPassword is the basic-auth password the auth behaviours expect.
	authPassword string
}

func startMisbehaving(t *testing.T, authPassword string) *misbehaving {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &misbehaving{addr: ln.Addr().String(), stop: make(chan struct{}), conns: map[net.Conn]http.ConnState{},
		attempts: map[string]int{}, authPassword: authPassword}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ConnState: p.connState}
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(func() {
		close(p.stop)
		_ = p.srv.Close()
	})
	return p
}

func (p *misbehaving) connState(c net.Conn, s http.ConnState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch s {
	case http.StateClosed, http.StateHijacked:
		delete(p.conns, c)
	default:
		p.conns[c] = s
	}
}

// open returns the connections open on the partner's side, and how many of
// them are serving a request.
func (p *misbehaving) open() (open, active int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.conns {
		if s == http.StateActive {
			active++
		}
	}
	return len(p.conns), active
}

var idRE = regexp.MustCompile(`<(?:\w+:)?id>([^<]*)<`)

const (
	soapEnvOpen  = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>`
	soapEnvClose = `</soapenv:Body></soapenv:Envelope>`
)

func soapFault(code, reason, detail string) string {
	return soapEnvOpen + `<soapenv:Fault xmlns:tns="urn:e2e:pf" xmlns:app="urn:e2e:app"><faultcode>` + code + `</faultcode><faultstring>` + reason +
		`</faultstring>` + detail + `</soapenv:Fault>` + soapEnvClose
}

func (p *misbehaving) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m := idRE.FindSubmatch(body)
	if m == nil {
		http.Error(w, "no id", http.StatusBadRequest)
		return
	}
	id := string(m[1])
	behaviour, _, _ := strings.Cut(id, "-")
	p.mu.Lock()
	p.attempts[id]++
	attempt := p.attempts[id]
	p.mu.Unlock()
	ok := soapEnvOpen + `<resp xmlns="urn:e2e:pf"><answer>P-` + id + `</answer></resp>` + soapEnvClose
	xml := func(status int, s string) {
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, s)
	}
	switch behaviour {
	case "ok":
		xml(200, ok)
	case "hang":
		select {
		case <-r.Context().Done():
		case <-p.stop:
		}
	case "late":
		select {
		case <-time.After(1500 * time.Millisecond):
		case <-p.stop:
		}
		xml(200, ok)
	case "fault500":
		xml(500, soapFault("soapenv:Server", "database down", ""))
	case "plain500":
		http.Error(w, "upstream exploded", http.StatusInternalServerError)
	case "declared":
		xml(500, soapFault("soapenv:Server", "no stock", `<detail><tns:problem><tns:code>OUT-OF-STOCK</tns:code></tns:problem></detail>`))
	case "undeclared":
		xml(500, soapFault("app:undeclared", "something the WSDL does not say", ""))
	case "html":
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<!DOCTYPE html><html><body>Welcome<br></body></html>")
	case "truncated":
		xml(200, ok[:len(ok)/2])
	case "wrongns":
		xml(200, strings.ReplaceAll(ok, "http://schemas.xmlsoap.org/soap/envelope/", "urn:not-soap"))
	case "unexpected":
		xml(200, soapEnvOpen+`<other xmlns="urn:e2e:other"/>`+soapEnvClose)
	case "accepted":
		w.WriteHeader(http.StatusAccepted)
	case "empty":
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusOK)
	case "redirect":
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	case "huge":
		// Far more than --partner-max-response, until orchd hangs up.
		w.Header().Set("Content-Type", "text/xml")
		_, _ = io.WriteString(w, soapEnvOpen+`<resp xmlns="urn:e2e:pf"><answer>`)
		chunk := strings.Repeat("x", 32<<10)
		for i := 0; i < 2048; i++ {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	case "reset":
		// Headers and the start of the body, then a TCP reset.
		conn, bw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nContent-Length: %d\r\n\r\n%s", len(ok), ok[:40])
		_ = bw.Flush()
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = conn.Close()
	case "flaky":
		if attempt == 1 {
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
		xml(200, ok)
	case "authok", "authbad":
		want := p.authPassword
		if behaviour == "authbad" {
			want = "another password"
		}
		if u, pw, ok := r.BasicAuth(); !ok || u != "orchd" || pw != want {
			w.Header().Set("WWW-Authenticate", `Basic realm="partner"`)
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		xml(200, ok)
	default:
		http.Error(w, "unknown behaviour "+behaviour, http.StatusBadRequest)
	}
}

// silentPartner accepts TCP connections and never answers: it reads what
// comes until the other side hangs up, counting the connections still
// open.
type silentPartner struct {
	addr string
	mu   sync.Mutex
	open int
}

func startSilent(t *testing.T) *silentPartner {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &silentPartner{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.open++
			conns = append(conns, c)
			p.mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = io.Copy(io.Discard, c)
				c.Close()
				p.mu.Lock()
				p.open--
				p.mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		p.mu.Unlock()
		wg.Wait()
	})
	return p
}

func (p *silentPartner) conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.open
}

// writePartnerFail copies testdata/partnerfail into deployDir, with the
// partner URLs (scheme://host:port) filled in: live for the links live,
// flaky and auth; silent is left at a port nobody listens on when empty.
func writePartnerFail(t *testing.T, deployDir, live, refused, nohost string, silent ...string) {
	t.Helper()
	src := filepath.Join("testdata", "partnerfail")
	dst := filepath.Join(deployDir, "partnerfail")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	silentURL := refused
	if len(silent) > 0 {
		silentURL = silent[0]
	}
	r := strings.NewReplacer("LIVE_URL", live, "REFUSED_URL", refused, "NOHOST_URL", nohost, "SILENT_URL", silentURL)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), []byte(r.Replace(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// pfAnswer is what PartnerFail answered: the caught fault's name ("none"
// when the call worked) and the text.
type pfAnswer struct {
	status      int
	fault, text string
	body        string
}

func callPartnerFail(t *testing.T, client *http.Client, base, id, via string) pfAnswer {
	t.Helper()
	req := fmt.Sprintf(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><req xmlns="urn:e2e:pf"><id>%s</id><via>%s</via></req></soapenv:Body></soapenv:Envelope>`, id, via)
	r := post(t, client, base+"/processes/PartnerFail", textXML, `"urn:e2e:pf#run"`, []byte(req))
	return pfAnswer{status: r.status, fault: between(r.body, "fault>", "</"), text: html.UnescapeString(between(r.body, "text>", "</")), body: r.body}
}

// scrape reads one number from orchd: a metric from /metrics, or
// HeapInuse after a collection from the pprof heap profile.
func scrape(t *testing.T, url string, re *regexp.Regexp) float64 {
	t.Helper()
	// No keep-alive: an idle connection would count as goroutines.
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			v, err := strconv.ParseFloat(m[1], 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("%s: no line matching %s", url, re)
	return 0
}

var (
	goroutinesRE = regexp.MustCompile(`^go_goroutines (\S+)`)
	heapInuseRE  = regexp.MustCompile(`^# HeapInuse = (\d+)`)
)

// pfRow is one way a partner can fail: the request's id starts with
// behaviour (what the misbehaving partner does), via names the partner
// link; PartnerFail answers the caught fault's name and a text saying
// each of text.
type pfRow struct {
	behaviour, via string
	fault          string
	text           []string
}

// pfFailure is the fault every failure of a call is.
const pfFailure = "ext:activityFailure"

// partnerFailureRows are the partner misbehaviours of TestPartnerFailures
// (and TestPartnerFailuresBothModes), with what PartnerFail answers.
func partnerFailureRows() []pfRow {
	return []pfRow{
		{"ok", "", "none", []string{"P-ok"}},
		{"refused", "refused", pfFailure, []string{"refused.call", "connection refused"}},
		{"nohost", "nohost", pfFailure, []string{"nohost.call", "cannot resolve host partner.invalid"}},
		{"silent", "silent", pfFailure, []string{"silent.call", "timed out: no answer within 1s"}},
		{"hang", "", pfFailure, []string{"live.call", "timed out: no answer within 1s"}},
		{"late", "", pfFailure, []string{"live.call", "timed out: no answer within 1s"}},
		{"fault500", "", pfFailure, []string{"live.call", "answered fault soapenv:Server (undeclared): database down"}},
		{"plain500", "", pfFailure, []string{"live.call", "HTTP 500 Internal Server Error"}}, // the body ("upstream exploded") is in the log only
		{"declared", "", "tns:problem", []string{"OUT-OF-STOCK"}},
		{"undeclared", "", "app:undeclared", nil},
		{"html", "", pfFailure, []string{"live.call", "HTTP 200 OK (text/html), not a SOAP envelope"}},
		{"truncated", "", pfFailure, []string{"live.call", "not a SOAP envelope", "malformed XML"}},
		{"wrongns", "", pfFailure, []string{"live.call", "version mismatch"}},
		{"unexpected", "", pfFailure, []string{"live.call", "bad response", "missing part payload", "the body holds {urn:e2e:other}other"}},
		{"accepted", "", pfFailure, []string{"live.call", "HTTP 202 without a response message"}},
		{"empty", "", pfFailure, []string{"live.call", "HTTP 200 without a response message"}},
		{"redirect", "", pfFailure, []string{"live.call", "HTTP 302 Found", "/elsewhere", "not followed"}},
		{"huge", "", pfFailure, []string{"live.call", "message too large: response exceeds 1048576 bytes"}},
		{"reset", "", pfFailure, []string{"live.call", "connection cut by the partner"}},
		{"flaky", "flaky", "none", []string{"P-flaky"}},
		{"authok", "auth", "none", []string{"P-authok"}},
		{"authbad", "auth", pfFailure, []string{"auth.call", "HTTP 401 Unauthorized", `credentials of user "orchd" refused`}},
	}
}

// TestPartnerFailures runs one call per way a partner can fail, twice,
// through one orchd. Each must reach the process as a fault it catches,
// named as the table says with a text naming the partner link, the
// operation and what was wrong; and leave no goroutine (orchd's or the
// test's), partner connection or memory behind.
func TestPartnerFailures(t *testing.T) {
	partner := startMisbehaving(t, "s3cret-Pa55")
	silent := startSilent(t)
	deploy := t.TempDir()
	writePartnerFail(t, deploy, "http://"+partner.addr, "http://"+deadAddr(t), "http://partner.invalid:9", "http://"+silent.addr)
	o := startOrchd(t, "--deploy", deploy, "--partner-timeout", "5s", "--partner-max-response", "1048576", "--debug-addr", "127.0.0.1:0")
	debug := o.pprofAddr(t)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

	rows := partnerFailureRows()

	metrics := o.base + "/metrics"
	heap := "http://" + debug + "/debug/pprof/heap?gc=1&debug=1"
	// Warm up, then take the baselines.
	if a := callPartnerFail(t, client, o.base, "ok-warmup", ""); a.fault != "none" {
		t.Fatalf("warm-up: %+v\n%s", a, o.log())
	}
	baseG := scrape(t, metrics, goroutinesRE)
	testG := runtime.NumGoroutine()
	var heaps []float64
	for pass := 1; pass <= 2; pass++ {
		for _, row := range rows {
			id := fmt.Sprintf("%s-%d", row.behaviour, pass)
			t.Run(id, func(t *testing.T) {
				a := callPartnerFail(t, client, o.base, id, row.via)
				t.Logf("%s: %s", a.fault, a.text)
				if a.status != 200 || a.fault != row.fault {
					t.Fatalf("answer %d fault %q text %q, want fault %q\n%s", a.status, a.fault, a.text, row.fault, a.body)
				}
				for _, w := range row.text {
					if !strings.Contains(a.text, w) {
						t.Errorf("text %q does not say %q", a.text, w)
					}
				}
				if strings.Contains(a.text, "upstream exploded") {
					t.Errorf("text %q carries the partner's answer body", a.text)
				}
				var open, active int
				var g float64
				if !eventually(func() bool {
					open, active = partner.open()
					g = scrape(t, metrics, goroutinesRE)
					return open <= 1 && active == 0 && silent.conns() == 0 && g <= baseG+2 && runtime.NumGoroutine() <= testG+2
				}) {
					t.Errorf("left behind: partner connections %d open, %d active, %d to the silent one; orchd goroutines %v (baseline %v); test goroutines %d (baseline %d)",
						open, active, silent.conns(), g, baseG, runtime.NumGoroutine(), testG)
				}
			})
		}
		heaps = append(heaps, scrape(t, heap, heapInuseRE))
	}
	partner.mu.Lock()
	flaky := partner.attempts["flaky-1"]
	partner.mu.Unlock()
	if flaky != 2 {
		t.Errorf("flaky partner called %d times, want 2 (retryFor 1)", flaky)
	}
	// A second pass through every failure leaves orchd's heap where the
	// first left it, give or take what the runtime keeps around.
	t.Logf("orchd goroutines %v at the start, %v at the end; HeapInuse after each pass %v", baseG, scrape(t, metrics, goroutinesRE), heaps)
	if grow := heaps[1] - heaps[0]; grow > 8<<20 {
		t.Errorf("orchd HeapInuse grew by %.0f bytes over the second pass (%v)", grow, heaps)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if ms.HeapInuse > 256<<20 {
		t.Errorf("test process HeapInuse %d after GC", ms.HeapInuse)
	}
	if strings.Contains(o.log(), "s3cret-Pa55") {
		t.Errorf("the basic-auth password is in the log")
	}
}
