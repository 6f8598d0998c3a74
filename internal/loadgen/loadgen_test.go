package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const ack = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><po:purchaseOrderAck xmlns:po="urn:example:po"><po:poId>PO-000123</po:poId><po:status>ACCEPTED</po:status></po:purchaseOrderAck></soapenv:Body></soapenv:Envelope>`

const fault11 = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><soapenv:Fault><faultcode>soapenv:Client</faultcode><faultstring>bad order</faultstring></soapenv:Fault></soapenv:Body></soapenv:Envelope>`

const fault12 = `<e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope"><e:Body><e:Fault><e:Code><e:Value>e:Receiver</e:Value></e:Code><e:Reason><e:Text xml:lang="en">partner down</e:Text></e:Reason></e:Fault></e:Body></e:Envelope>`

// testConfig is a short run against url.
func testConfig(urls ...string) Config {
	return Config{
		Targets:      urls,
		Body:         DefaultBody(),
		SOAPAction:   DefaultSOAPAction,
		Concurrency:  []int{1, 4},
		Duration:     300 * time.Millisecond,
		Warmup:       100 * time.Millisecond,
		Timeout:      5 * time.Second,
		LoopbackOnly: true,
	}
}

func TestCountsAndHeaders(t *testing.T) {
	var n atomic.Int64
	var bad atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch {
		case r.Method != http.MethodPost:
			bad.Store("method " + r.Method)
		case r.Header.Get("SOAPAction") != `"urn:example:po#submitPurchaseOrder"`:
			bad.Store("SOAPAction " + r.Header.Get("SOAPAction"))
		case r.Header.Get("Content-Type") != DefaultContentType:
			bad.Store("Content-Type " + r.Header.Get("Content-Type"))
		case !bytes.Equal(b, DefaultBody()):
			bad.Store("body")
		}
		n.Add(1)
		io.WriteString(w, ack)
	}))
	defer srv.Close()

	rep, err := Run(context.Background(), testConfig(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if v := bad.Load(); v != nil {
		t.Fatalf("unexpected request: %v", v)
	}
	if !rep.Complete || len(rep.Levels) != 2 {
		t.Fatalf("report: %+v", rep)
	}
	var counted int64
	for i, l := range rep.Levels {
		if l.Label != "A" || l.Concurrency != []int{1, 4}[i] {
			t.Errorf("level %d: %s@%d", i, l.Label, l.Concurrency)
		}
		if l.Successes == 0 || l.Errors != 0 || l.TxPerSec <= 0 {
			t.Errorf("level %d: %d ok, %d errors, %.1f tx/s", i, l.Successes, l.Errors, l.TxPerSec)
		}
		if l.Latency.P50 <= 0 || l.Latency.P50 > l.Latency.P99 || l.Latency.P99 > l.Latency.Max*1.01 {
			t.Errorf("level %d: latency %+v", i, l.Latency)
		}
		counted += l.Successes
	}
	// Warmup and post-window exchanges are sent but not counted.
	if counted > n.Load() {
		t.Fatalf("counted %d exchanges, the server saw %d", counted, n.Load())
	}
}

func TestErrorClassification(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch n.Add(1) % 5 {
		case 0:
			io.WriteString(w, ack)
		case 1:
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, fault11)
		case 2:
			// A fault with a 200 status is still a failure.
			io.WriteString(w, fault12)
		case 3:
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "try later")
		case 4:
			// Mentions Fault, but not as a SOAP fault: a success.
			io.WriteString(w, `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><x:Fault xmlns:x="urn:x"/></soapenv:Body></soapenv:Envelope>`)
		}
	}))
	defer srv.Close()
	cfg := testConfig(srv.URL)
	cfg.Concurrency = []int{1}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := rep.Levels[0]
	if l.Successes == 0 || l.Errors == 0 || l.Shed == 0 {
		t.Fatalf("%d ok, %d errors, %d shed", l.Successes, l.Errors, l.Shed)
	}
	// 2 of 5 succeed, 1 is shed (503: not an error).
	all := float64(l.Successes + l.Errors + l.Shed)
	if r := float64(l.Successes) / all; r < 0.35 || r > 0.45 {
		t.Errorf("success share %.2f, want 0.4", r)
	}
	if r := float64(l.Shed) / all; r < 0.15 || r > 0.25 {
		t.Errorf("shed share %.2f, want 0.2", r)
	}
	msgs := map[string]bool{}
	var sum int64
	for _, e := range l.ErrorSamples {
		msgs[e.Message] = true
		sum += e.Count
	}
	for _, want := range []string{
		"HTTP 500: SOAP fault: soapenv:Client: bad order",
		"HTTP 200: SOAP fault: e:Receiver: partner down",
	} {
		if !msgs[want] {
			t.Errorf("missing error sample %q in %v", want, l.ErrorSamples)
		}
	}
	if sum != l.Errors {
		t.Errorf("error samples count %d, errors %d", sum, l.Errors)
	}
}

func TestTransportErrors(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens any more
	cfg := testConfig(url)
	cfg.Concurrency = []int{2}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := rep.Levels[0]
	if l.Successes != 0 || l.Errors == 0 || len(l.ErrorSamples) == 0 {
		t.Fatalf("level: %+v", l)
	}
	if m := l.ErrorSamples[0].Message; !strings.Contains(m, "refused") || strings.Contains(m, "Post ") {
		t.Errorf("error message %q", m)
	}
}

func TestExpect(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			io.WriteString(w, ack)
		} else {
			io.WriteString(w, strings.Replace(ack, "ACCEPTED", "REJECTED", 1))
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		expr      string
		ns        map[string]string
		allPass   bool
		halfFails bool
	}{
		{expr: "//po:status = 'ACCEPTED'", halfFails: true},
		{expr: "//x:status = 'ACCEPTED'", ns: map[string]string{"x": "urn:example:po"}, halfFails: true},
		{expr: "/soapenv:Envelope/soapenv:Body/po:purchaseOrderAck/po:poId", allPass: true},
		{expr: "count(//*[local-name()='poId'])", allPass: true},
		{expr: "//po:nothing", allPass: false},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			e, err := NewExpect(tc.expr, tc.ns)
			if err != nil {
				t.Fatal(err)
			}
			cfg := testConfig(srv.URL)
			cfg.Concurrency = []int{1}
			cfg.Expect = e
			rep, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			l := rep.Levels[0]
			switch {
			case tc.allPass:
				if l.Errors != 0 || l.Successes == 0 {
					t.Fatalf("%d ok, %d errors: %v", l.Successes, l.Errors, l.ErrorSamples)
				}
			case tc.halfFails:
				if l.Errors == 0 || l.Successes == 0 {
					t.Fatalf("%d ok, %d errors", l.Successes, l.Errors)
				}
				if !strings.Contains(l.ErrorSamples[0].Message, "false") {
					t.Errorf("error %q", l.ErrorSamples[0].Message)
				}
			default:
				if l.Successes != 0 || l.Errors == 0 {
					t.Fatalf("%d ok, %d errors", l.Successes, l.Errors)
				}
			}
		})
	}
	if _, err := NewExpect("//po:status[", nil); err == nil {
		t.Fatal("a broken expression compiles")
	}
	if _, err := NewExpect("//nope:status", nil); err == nil {
		t.Fatal("an unbound prefix compiles")
	}
}

func TestVsAlternatesAndRatios(t *testing.T) {
	var mu sync.Mutex
	var order []string
	var current string
	handler := func(name string, delay time.Duration) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if current != name {
				order = append(order, name)
				current = name
			}
			mu.Unlock()
			time.Sleep(delay)
			io.WriteString(w, ack)
		})
	}
	a := httptest.NewServer(handler("A", 10*time.Millisecond))
	defer a.Close()
	b := httptest.NewServer(handler("B", time.Millisecond))
	defer b.Close()

	cfg := testConfig(a.URL, b.URL)
	cfg.Concurrency = []int{1, 2}
	var streamed []string
	cfg.OnLevel = func(l LevelResult) { streamed = append(streamed, fmt.Sprintf("%s@%d", l.Label, l.Concurrency)) }
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, ","); got != "A,B,A,B" {
		t.Fatalf("servers were loaded in order %s", got)
	}
	if got := strings.Join(streamed, ","); got != "A@1,B@1,A@2,B@2" {
		t.Fatalf("levels reported in order %s", got)
	}
	if len(rep.Comparisons) != 2 {
		t.Fatalf("comparisons: %+v", rep.Comparisons)
	}
	for i, c := range rep.Comparisons {
		la, lb := rep.Levels[2*i], rep.Levels[2*i+1]
		// The ratio of the levels' rates, whatever they were (a level
		// of a busy machine's 0.45 s may have no success: ratio 0).
		if want := ratio(la.TxPerSec, lb.TxPerSec); c.TxRatio != want || c.TxRatio < 0 {
			t.Errorf("tx ratio %v, want %v", c.TxRatio, want)
		}
		// No assertion on which server was faster: that is wall-clock
		// timing, which a loaded CI machine may reorder.
		if want := ratio(la.Latency.P99, lb.Latency.P99); c.P99Ratio != want {
			t.Errorf("level %d: p99 ratio %v, want %v", c.Concurrency, c.P99Ratio, want)
		}
	}
	var out bytes.Buffer
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"A = " + a.URL, "B = " + b.URL, "tx/s A/B", "p99 A/B"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestJSONShape(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics":
			io.WriteString(w, "# TYPE go_goroutines gauge\ngo_goroutines 42\nprocess_resident_memory_bytes 1.5589376e+07\n")
		default:
			io.WriteString(w, ack)
		}
	}))
	defer srv.Close()
	cfg := testConfig(srv.URL+"/processes/PurchaseOrder", srv.URL+"/other")
	cfg.Concurrency = []int{1}
	cfg.Duration = 450 * time.Millisecond
	cfg.Interval = 200 * time.Millisecond
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	var got struct {
		A, B   string
		Levels []struct {
			Label       string             `json:"label"`
			Target      string             `json:"target"`
			Concurrency int                `json:"concurrency"`
			TxPerSec    *float64           `json:"tx_per_s"`
			Successes   *int64             `json:"successes"`
			Errors      *int64             `json:"errors"`
			Latency     map[string]float64 `json:"latency"`
			Intervals   []map[string]float64
		}
		Comparisons []map[string]float64
		Complete    bool
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if got.A == "" || got.B == "" || !got.Complete || len(got.Levels) != 2 || len(got.Comparisons) != 1 {
		t.Fatalf("report:\n%s", out.String())
	}
	for _, l := range got.Levels {
		if l.TxPerSec == nil || l.Successes == nil || l.Errors == nil {
			t.Fatalf("level lacks counts:\n%s", out.String())
		}
		for _, k := range []string{"p50_ms", "p90_ms", "p99_ms", "max_ms", "mean_ms"} {
			if _, ok := l.Latency[k]; !ok {
				t.Errorf("latency lacks %s", k)
			}
		}
		if len(l.Intervals) != 2 {
			t.Fatalf("%d intervals, want 2:\n%s", len(l.Intervals), out.String())
		}
		for _, s := range l.Intervals {
			// An interval of a busy machine may have no success: its
			// rate is 0, not missing.
			if tx, ok := s["tx_per_s"]; s["goroutines"] != 42 || s["rss_bytes"] != 15589376 || !ok || tx < 0 {
				t.Errorf("interval %v", s)
			}
		}
	}
	for _, k := range []string{"concurrency", "tx_ratio", "p99_ratio"} {
		if _, ok := got.Comparisons[0][k]; !ok {
			t.Errorf("comparison lacks %s", k)
		}
	}
}

func TestIntervalWithoutMetrics(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, ack)
	}))
	defer srv.Close()
	cfg := testConfig(srv.URL)
	cfg.Concurrency = []int{1}
	cfg.Interval = 100 * time.Millisecond
	var progress bytes.Buffer
	cfg.Progress = &progress
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	iv := rep.Levels[0].Intervals
	if len(iv) != 3 {
		t.Fatalf("%d intervals: %+v", len(iv), iv)
	}
	if iv[0].RSSBytes != -1 || iv[0].Goroutines != -1 {
		t.Errorf("sample %+v", iv[0])
	}
}

func TestCancelStopsRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, ack) }))
	defer srv.Close()
	cfg := testConfig(srv.URL)
	cfg.Duration = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	rep, err := Run(ctx, cfg)
	if err == nil || rep == nil || rep.Complete {
		t.Fatalf("Run = %+v, %v", rep, err)
	}
	// A bound for a hang, not a speed: without the cancel the run lasts
	// its hour.
	if time.Since(start) > time.Minute {
		t.Fatalf("Run took %s after cancel", time.Since(start))
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"no target", func(c *Config) { c.Targets = nil }},
		{"three targets", func(c *Config) {
			c.Targets = []string{"http://127.0.0.1:1/", "http://127.0.0.1:2/", "http://127.0.0.1:3/"}
		}},
		{"not http", func(c *Config) { c.Targets = []string{"ftp://127.0.0.1/"} }},
		{"not loopback", func(c *Config) { c.Targets = []string{"http://192.0.2.1/"} }},
		{"no levels", func(c *Config) { c.Concurrency = nil }},
		{"zero clients", func(c *Config) { c.Concurrency = []int{0} }},
		{"negative duration", func(c *Config) { c.Duration = -1 }},
		{"zero rate", func(c *Config) { c.Rates = []float64{100, 0} }},
		{"negative max outstanding", func(c *Config) { c.Rates, c.MaxOutstanding = []float64{100}, -1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig("http://127.0.0.1:1/")
			tc.edit(&cfg)
			if rep, err := Run(context.Background(), cfg); err == nil || rep != nil {
				t.Fatalf("Run = %v, %v", rep, err)
			}
		})
	}
}

func TestParseConcurrency(t *testing.T) {
	got, err := ParseConcurrency(" 1,16, 64,256,1000 ")
	if err != nil || fmt.Sprint(got) != "[1 16 64 256 1000]" {
		t.Fatalf("ParseConcurrency = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "1,x", "-4", ","} {
		if _, err := ParseConcurrency(bad); err == nil {
			t.Errorf("ParseConcurrency(%q) succeeded", bad)
		}
	}
}

func TestSoapFault(t *testing.T) {
	for body, want := range map[string]string{
		fault11:             "soapenv:Client: bad order",
		fault12:             "e:Receiver: partner down",
		ack:                 "",
		`<Fault/>`:          "",
		`not xml but Fault`: "",
		`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><soapenv:Fault/></soapenv:Body></soapenv:Envelope>`: "(no code)",
	} {
		if got := soapFault([]byte(body)); got != want {
			t.Errorf("soapFault(%.40q) = %q, want %q", body, got, want)
		}
	}
}

func TestParseMetrics(t *testing.T) {
	rss, g := parseMetrics([]byte("# HELP x\ngo_goroutines_total 3\ngo_goroutines 18\nprocess_resident_memory_bytes 1.5e+07\n"))
	if rss != 15000000 || g != 18 {
		t.Fatalf("parseMetrics = %d, %d", rss, g)
	}
}

func TestDefaultBodyIsTheExample(t *testing.T) {
	b := DefaultBody()
	if !bytes.Contains(b, []byte("<po:poId>PO-000123</po:poId>")) {
		t.Fatalf("default body:\n%s", b)
	}
	b[0] = 'x'
	if DefaultBody()[0] == 'x' {
		t.Fatal("DefaultBody hands out the embedded bytes")
	}
}

// A level repeated (--concurrency 64,64) gets one comparison row per pair,
// each from its own two levels.
func TestRepeatedLevelsCompareTheirOwnPair(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, ack) }))
	defer srv.Close()
	cfg := testConfig(srv.URL, srv.URL)
	cfg.Concurrency = []int{2, 2}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Comparisons) != 2 {
		t.Fatalf("%d comparisons, want 2", len(rep.Comparisons))
	}
	var out bytes.Buffer
	if err := rep.WriteComparison(&out); err != nil {
		t.Fatal(err)
	}
	for i, c := range rep.Comparisons {
		a, b := rep.Levels[2*i], rep.Levels[2*i+1]
		row := fmt.Sprintf("%.1f", a.TxPerSec)
		if c.a.TxPerSec != a.TxPerSec || c.b.TxPerSec != b.TxPerSec || !strings.Contains(out.String(), row) {
			t.Errorf("comparison %d is not from levels %d and %d:\n%s", i, 2*i, 2*i+1, out.String())
		}
	}
}
