package soap

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// flakySink is a callback receiver on loopback that answers its POSTs
// with the statuses (and Retry-After headers) of a script, then 202;
// it records when each POST came.
type flakySink struct {
	srv *httptest.Server

	mu     sync.Mutex
	script []flakyAnswer
	at     []time.Time
}

type flakyAnswer struct {
	status     int
	retryAfter string
}

func newFlakySink(t *testing.T, script ...flakyAnswer) *flakySink {
	t.Helper()
	f := &flakySink{script: script}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		f.mu.Lock()
		n := len(f.at)
		f.at = append(f.at, time.Now())
		a := flakyAnswer{status: http.StatusAccepted}
		if n < len(f.script) {
			a = f.script[n]
		}
		f.mu.Unlock()
		if a.retryAfter != "" {
			w.Header().Set("Retry-After", a.retryAfter)
		}
		w.WriteHeader(a.status)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// posts returns the times of the POSTs received so far.
func (f *flakySink) posts() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.at...)
}

// retryServer serves the purchase order with callbacks allowed to
// loopback, retrying as rt says, its metrics in a registry of its own
// and its log in logs.
func retryServer(t *testing.T, rt CallbackRetry, logs *lockedBuffer) (*Server, *httptest.Server) {
	t.Helper()
	allow, err := ParsePartnerPolicy([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(ServerOptions{Callbacks: NewClient(ClientOptions{Policy: allow}), CallbackRetry: rt,
		Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err := s.Handle(wsaEndpoint(), &testDispatcher{}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, hs
}

// postReplyTo posts a purchase order whose wsa:ReplyTo is addr and
// checks it was answered 202.
func postReplyTo(t *testing.T, hs *httptest.Server, id, addr string) {
	t.Helper()
	hdrs := `<wsa:MessageID>urn:uuid:retry-` + id + `</wsa:MessageID><wsa:ReplyTo><wsa:Address>` + addr + `</wsa:Address></wsa:ReplyTo>`
	r := post(t, hs.URL+"/po", "text/xml; charset=utf-8", "", wsaPORequest(t, NSWSA, id, hdrs))
	if r.status != http.StatusAccepted {
		t.Fatalf("HTTP %d, want 202:\n%s", r.status, r.body)
	}
}

// callbackCount is the orchd_wsa_callbacks_total of the purchase order
// with outcome.
func callbackCount(s *Server, outcome string) float64 {
	return testutil.ToFloat64(s.metrics.callbacks.WithLabelValues("poProcess", outcome))
}

// TestCallbackRetried: a callback receiver that fails its first POSTs
// (503, 500, then 429 with Retry-After: 1) gets the callback again each
// time, waiting the backoff, and at least the Retry-After it asked for,
// until it takes it; the tries and the delivery are counted and nothing
// is logged as failed.
func TestCallbackRetried(t *testing.T) {
	var logs lockedBuffer
	s, hs := retryServer(t, CallbackRetry{Attempts: 5, Backoff: 20 * time.Millisecond, MaxWait: 2 * time.Second}, &logs)
	sink := newFlakySink(t, flakyAnswer{status: 503}, flakyAnswer{status: 500}, flakyAnswer{status: 429, retryAfter: "1"})
	postReplyTo(t, hs, "PO-R1", sink.srv.URL+"/replies")
	waitFor(t, "the delivery", func() bool { return callbackCount(s, callbackDelivered) == 1 })
	at := sink.posts()
	if len(at) != 4 {
		t.Fatalf("%d POSTs, want 4 (3 failed, then taken)", len(at))
	}
	if d := at[1].Sub(at[0]); d < 20*time.Millisecond {
		t.Errorf("second attempt %s after the first, want the 20ms backoff at least", d)
	}
	if d := at[3].Sub(at[2]); d < time.Second {
		t.Errorf("attempt after a 429 with Retry-After: 1 came %s later, want 1s at least", d)
	}
	if n := callbackCount(s, callbackRetried); n != 3 {
		t.Errorf("retried counted %v, want 3", n)
	}
	if n := callbackCount(s, callbackFailed); n != 0 || strings.Contains(logs.String(), "callback failed") {
		t.Errorf("a delivered callback counted (%v) or logged as failed:\n%s", n, logs.String())
	}
}

// TestCallbackNotRetried: a receiver that answers 400 refused the
// message and would again: one POST, then the callback is given up,
// logged once and counted; so is a receiver asking (Retry-After) to wait
// longer than MaxWait.
func TestCallbackNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name string
		ans  flakyAnswer
		want string
	}{
		{"400", flakyAnswer{status: 400}, "400 Bad Request"},
		{"Retry-After past MaxWait", flakyAnswer{status: 503, retryAfter: "120"}, "past the"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs lockedBuffer
			s, hs := retryServer(t, CallbackRetry{Attempts: 4, Backoff: 10 * time.Millisecond, MaxWait: time.Second}, &logs)
			sink := newFlakySink(t, tc.ans, tc.ans, tc.ans, tc.ans)
			postReplyTo(t, hs, "PO-R2", sink.srv.URL+"/replies")
			waitFor(t, "the give-up", func() bool { return callbackCount(s, callbackFailed) == 1 })
			time.Sleep(50 * time.Millisecond) // a retry would come by now
			if n := len(sink.posts()); n != 1 {
				t.Errorf("%d POSTs, want 1 (not retried)", n)
			}
			if n := callbackCount(s, callbackRetried); n != 0 {
				t.Errorf("retried counted %v, want 0", n)
			}
			if got := strings.Count(logs.String(), "callback failed"); got != 1 || !strings.Contains(logs.String(), tc.want) {
				t.Errorf("logged %d times, want once naming %q:\n%s", got, tc.want, logs.String())
			}
		})
	}
}

// TestCallbackConnectionRefused: a ReplyTo address where nothing
// listens is tried Attempts times, then logged once, without the
// credentials its URL carried.
func TestCallbackConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	var logs lockedBuffer
	s, hs := retryServer(t, CallbackRetry{Attempts: 3, Backoff: 10 * time.Millisecond}, &logs)
	postReplyTo(t, hs, "PO-R3", "http://ann:s3cret@"+addr+"/replies")
	waitFor(t, "the give-up", func() bool { return callbackCount(s, callbackFailed) == 1 })
	if n := callbackCount(s, callbackRetried); n != 2 {
		t.Errorf("retried counted %v, want 2 (3 attempts)", n)
	}
	out := logs.String()
	if strings.Count(out, "callback failed") != 1 || !strings.Contains(out, "attempts=3") || !strings.Contains(out, "connection refused") {
		t.Errorf("want one log line naming 3 attempts and the refusal:\n%s", out)
	}
	if strings.Contains(out, "s3cret") {
		t.Errorf("the log holds the address's password:\n%s", out)
	}
}

// TestParseRetryAfter reads both forms of Retry-After.
func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"": 0, "7": 7 * time.Second, "-1": 0, "soon": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
	} {
		if got := parseRetryAfter(h, now); got != want {
			t.Errorf("Retry-After %q: %s, want %s", h, got, want)
		}
	}
}
