package soap

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestShedPacing: a client that sends again at once on a connection whose
// requests were shed waits out a pause that doubles with each shed in a
// row (10, 20, 40, 80 ms ...), counted in orchd_admission_paused_total; a
// request on another connection is shed without a pause; an admission
// ends the row, so the next shed on that connection is not paused. The
// pacing's clock is held still, so each retry comes within its pause
// however slowly the client sends it (the pauses themselves are waited
// out in real time); TestConnPace covers a pause running out.
func TestShedPacing(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := NewServer(ServerOptions{MaxInflight: 1, MaxQueue: -1, Registerer: reg})
	still := time.Now()
	s.paceClock = func() time.Time { return still }
	d := &blockingDispatcher{entered: make(chan struct{}, 1), release: make(chan struct{})}
	if err := s.Handle(poEndpoint(), d); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(s)
	hs.Config.ConnContext = s.ConnContext
	hs.Start()
	defer hs.Close()
	paused := func() float64 { return testutil.ToFloat64(s.paused) }
	// One keep-alive connection per client.
	client := func() *http.Client {
		return &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
	}
	send := func(c *http.Client, id string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, hs.URL+"/po", strings.NewReader(poRequest(t, id)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "text/xml")
		r := doWith(t, c, req)
		return r.status
	}
	hold := func() chan int {
		done := make(chan int, 1)
		go func() { done <- send(client(), "BLOCK") }()
		<-d.entered // the only slot is taken
		return done
	}

	held := hold()
	a := client()
	const row = 6
	var first time.Time
	for i := range row {
		if got := send(a, "A"); got != http.StatusServiceUnavailable {
			t.Fatalf("request %d of the row: HTTP %d, want 503", i+1, got)
		}
		if i == 0 {
			first = time.Now()
		}
	}
	// The 2nd to 6th waited 10+20+40+80+160 ms after the shed before.
	if el := time.Since(first); el < 300*time.Millisecond {
		t.Errorf("%d sheds in a row on one connection took %v after the first; want at least the 310ms of pauses", row, el)
	}
	if got := paused(); got != row-1 {
		t.Errorf("orchd_admission_paused_total %v, want %d", got, row-1)
	}
	if got := send(client(), "B"); got != http.StatusServiceUnavailable {
		t.Fatalf("another connection: HTTP %d, want 503", got)
	}
	if got := paused(); got != row-1 {
		t.Errorf("a new connection's first request was paused (orchd_admission_paused_total %v, want %d)", got, row-1)
	}

	d.release <- struct{}{}
	if got := <-held; got != http.StatusOK {
		t.Fatalf("held request: HTTP %d", got)
	}
	// Admitted after its pause: the row ends.
	if got := send(a, "A-ADMITTED"); got != http.StatusOK {
		t.Fatalf("after the slot freed: HTTP %d, want 200", got)
	}
	// The exchange releases its slot after its reply is out.
	waitFor(t, "the slot to come free", func() bool { return s.lim.inflight.Load() == 0 })
	held = hold()
	if got := send(a, "A-AGAIN"); got != http.StatusServiceUnavailable {
		t.Fatalf("slot taken again: HTTP %d, want 503", got)
	}
	if got := paused(); got != row {
		t.Errorf("orchd_admission_paused_total %v, want %d (the admitted request's pause only)", got, row)
	}
	d.release <- struct{}{}
	<-held
	if n := testutil.ToFloat64(s.metrics.shedTotal.WithLabelValues("poProcess")); n != row+2 {
		t.Errorf("orchd_shed_total %v, want %d", n, row+2)
	}
}

// TestConnPace: the pause grows with the row up to Retry-After, counts
// from the last shed, and ends with an admission.
func TestConnPace(t *testing.T) {
	var p connPace
	t0 := time.Unix(1000, 0)
	if d := p.pause(t0); d > 0 {
		t.Fatalf("no shed yet: pause %v", d)
	}
	for i, want := range []time.Duration{10, 20, 40, 80, 160, 320, 640, 1000, 1000} {
		p.shed(t0)
		if d := p.pause(t0); d != want*time.Millisecond {
			t.Fatalf("after %d sheds: pause %v, want %vms", i+1, d, want)
		}
	}
	if d := p.pause(t0.Add(400 * time.Millisecond)); d != 600*time.Millisecond {
		t.Errorf("400ms after the shed: pause %v, want 600ms", d)
	}
	if d := p.pause(t0.Add(2 * time.Second)); d > 0 {
		t.Errorf("after Retry-After passed: pause %v", d)
	}
	p.admitted()
	if d := p.pause(t0); d > 0 {
		t.Errorf("after an admission: pause %v", d)
	}
}
