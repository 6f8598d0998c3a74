package loadgen

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestParseRates(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []float64
	}{
		{"100", []float64{100}},
		{"500, 2000/s", []float64{500, 2000}},
		{"2.5/s,", []float64{2.5}},
		{"0", nil},
		{"-5", nil},
		{"x", nil},
		{"", nil},
		{"NaN", nil},
		{"+Inf", nil},
	} {
		got, err := ParseRates(tc.in)
		if (err == nil) != (tc.want != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("ParseRates(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// TestScheduleArithmetic: request i is due at start + i/rate; dueBy and
// dueBefore count the requests due at or before, and strictly before, a
// time.
func TestScheduleArithmetic(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		rate             float64
		at               time.Duration // since start
		dueBy, dueBefore int64
		atOfLast         time.Duration // at(dueBy-1), since start
		name             string
	}{
		{1000, -ms, 0, 0, 0, "before the start"},
		{1000, 0, 1, 0, 0, "request 0 is due at the start"},
		{1000, 999 * time.Microsecond, 1, 1, 0, "just before request 1"},
		{1000, ms, 2, 1, ms, "request 1 exactly"},
		{1000, time.Second, 1001, 1000, time.Second, "a second in"},
		{3, time.Second, 4, 3, time.Second, "a third of a second apart"},
		{3, 666 * ms, 2, 2, 333333333, "between requests 1 and 2"},
		{0.5, 5 * time.Second, 3, 3, 4 * time.Second, "slower than one a second"},
		{6000, 10 * time.Second, 60001, 60000, 10 * time.Second, "10 s at 6000/s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := schedule{start: t0, rate: tc.rate}
			at := t0.Add(tc.at)
			if got := s.dueBy(at); got != tc.dueBy {
				t.Errorf("dueBy = %d, want %d", got, tc.dueBy)
			}
			if got := s.dueBefore(at); got != tc.dueBefore {
				t.Errorf("dueBefore = %d, want %d", got, tc.dueBefore)
			}
			if tc.dueBy > 0 {
				if got := s.at(tc.dueBy - 1).Sub(t0); got != tc.atOfLast {
					t.Errorf("at(%d) = %s, want %s", tc.dueBy-1, got, tc.atOfLast)
				}
				if s.at(tc.dueBy-1).After(at) || !s.at(tc.dueBy).After(at) {
					t.Errorf("at(%d) = %s, at(%d) = %s do not bracket %s", tc.dueBy-1, s.at(tc.dueBy-1).Sub(t0), tc.dueBy, s.at(tc.dueBy).Sub(t0), tc.at)
				}
			}
		})
	}
}

// fakeClock jumps to the time slept until, late by lag (a coarse timer).
type fakeClock struct {
	now  time.Time
	lag  time.Duration
	naps int
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) bool {
	c.naps++
	if t.After(c.now) {
		c.now = t.Add(c.lag)
	}
	return ctx.Err() == nil
}

// TestDispatchCounts: every request due before the window's end is
// offered exactly once, in order, carrying its own due time however late
// the dispatcher wakes; those no worker takes are counted unsent, in the
// window or in the warmup.
func TestDispatchCounts(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name     string
		rate     float64
		lag      time.Duration
		workers  int           // simulated workers; -1: unbounded
		service  time.Duration // each request's time to answer
		warmup   time.Duration
		sent     int64
		unsent   int64
		unsentWu int64
	}{
		{"all taken", 1000, 0, -1, 0, 0, 1000, 0, 0},
		{"all taken, waking 7ms late", 1000, 7 * ms, -1, 0, 0, 1000, 0, 0},
		{"no worker", 1000, 0, 0, 0, 200 * ms, 0, 1000, 200},
		// One worker busy 10 ms per request takes one in ten.
		{"one slow worker", 1000, 0, 1, 10 * ms, 0, 100, 900, 0},
		// Four of them take four in ten.
		{"four slow workers", 1000, 0, 4, 10 * ms, 0, 400, 600, 0},
		{"fractional rate", 2.5, 0, -1, 0, 0, 3, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{now: t0, lag: tc.lag}
			sch := schedule{start: t0, rate: tc.rate}
			win := window{from: t0.Add(tc.warmup)}
			win.to = win.from.Add(time.Second)
			var busyUntil []time.Time // per simulated worker
			for range max(tc.workers, 0) {
				busyUntil = append(busyUntil, time.Time{})
			}
			var offered []time.Time
			offer := func(due time.Time) bool {
				offered = append(offered, due)
				if tc.workers < 0 {
					return true
				}
				for i, b := range busyUntil {
					// A worker takes a request when idle at its due time.
					if !b.After(due) {
						busyUntil[i] = due.Add(tc.service)
						return true
					}
				}
				return false
			}
			c := dispatch(context.Background(), sch, win, clk, offer)
			if c.sent != tc.sent || c.unsent != tc.unsent || c.unsentWarm != tc.unsentWu {
				t.Errorf("sent %d, unsent %d (+%d in warmup); want %d, %d (+%d)", c.sent, c.unsent, c.unsentWarm, tc.sent, tc.unsent, tc.unsentWu)
			}
			if want := sch.dueBefore(win.to); int64(len(offered)) != want {
				t.Fatalf("%d offered, want %d", len(offered), want)
			}
			for i, at := range offered {
				if !at.Equal(sch.at(int64(i))) {
					t.Fatalf("offer %d carries %s, due at %s", i, at.Sub(t0), sch.at(int64(i)).Sub(t0))
				}
			}
			if tc.lag > 0 && clk.naps >= len(offered) {
				t.Errorf("%d naps for %d requests: a late wake-up should offer all that are due", clk.naps, len(offered))
			}
		})
	}
}

// TestDispatchStopsWhenCancelled: a cancelled context stops the
// dispatcher after the requests due so far.
func TestDispatchStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	clk := &fakeClock{now: t0.Add(10 * time.Millisecond)}
	win := window{from: t0, to: t0.Add(time.Second)}
	c := dispatch(ctx, schedule{start: t0, rate: 1000}, win, clk, func(time.Time) bool { return true })
	if c.sent != 11 || c.unsent != 0 {
		t.Errorf("sent %d, unsent %d; want 11, 0", c.sent, c.unsent)
	}
}

// TestOpenLoop: over real HTTP, an open-loop level counts successes, shed
// answers (503) apart from errors, and requests it could not send because
// MaxOutstanding were outstanding.
func TestOpenLoop(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch n.Add(1) % 4 {
		case 0:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, fault11)
		case 1:
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, fault11)
		default:
			io.WriteString(w, ack)
		}
	}))
	defer srv.Close()
	cfg := testConfig(srv.URL)
	cfg.Rates = []float64{200}
	cfg.MaxOutstanding = 8
	cfg.Duration = 500 * time.Millisecond
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Levels) != 1 {
		t.Fatalf("levels: %+v", rep.Levels)
	}
	l := rep.Levels[0]
	if l.Rate != 200 || l.Concurrency != 8 || l.Successes == 0 || l.Errors == 0 || l.Shed == 0 {
		t.Fatalf("level: %+v", l)
	}
	// Half succeed, a quarter are shed, a quarter fail.
	all := float64(l.Successes + l.Errors + l.Shed)
	if r := float64(l.Shed) / all; r < 0.15 || r > 0.35 {
		t.Errorf("shed share %.2f, want 0.25", r)
	}
	// Sent on schedule, not as fast as answered: no more than the 120 due
	// at 200/s over the 0.6 s window, and every due one either sent or
	// counted unsent (how many of each depends on the machine's speed, so
	// only their sum is bounded below).
	if got := n.Load(); got > 121 || got+l.Unsent < 110 {
		t.Errorf("the server saw %d requests and %d were unsent, want at most 121 sent and about 120 due (200/s for 0.6 s)", got, l.Unsent)
	}

	// A server slower than the rate leaves requests unsent.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		time.Sleep(50 * time.Millisecond)
		io.WriteString(w, ack)
	}))
	defer slow.Close()
	cfg.Targets = []string{slow.URL}
	cfg.MaxOutstanding = 2
	rep, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	l = rep.Levels[0]
	if l.Unsent == 0 || l.Errors != 0 || l.Successes == 0 {
		t.Errorf("slow server: %+v", l)
	}
	var out strings.Builder
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), OpenLevelHeader) || !strings.Contains(out.String(), "\nA           200") {
		t.Errorf("table:\n%s", out.String())
	}
}

// TestPaced: the pacer offers every due request once, never runs more
// than n sends at once, and reports a request due while all n are busy as
// unsent (to the callback too) instead of queueing it.
func TestPaced(t *testing.T) {
	// All ten requests are due at the first look at the clock, and the
	// sends that start hold their goroutine until every request is offered.
	clk := &fakeClock{now: t0.Add(time.Second)}
	win := window{from: t0, to: t0.Add(100 * time.Millisecond)}
	release := make(chan struct{})
	var busy, most, sends, unsent atomic.Int64
	done := make(chan dispatchCounts)
	go func() {
		done <- paced(context.Background(), schedule{start: t0, rate: 100}, win, clk, 2, func(g int, due time.Time) {
			if g < 0 || g > 1 {
				t.Errorf("goroutine index %d, want 0 or 1", g)
			}
			b := busy.Add(1)
			for m := most.Load(); b > m && !most.CompareAndSwap(m, b); m = most.Load() {
			}
			sends.Add(1)
			<-release
			busy.Add(-1)
		}, func(time.Time) { unsent.Add(1) })
	}()
	// paced returns only after its sends: release them once every request
	// was offered (sent or unsent).
	go func() {
		for sends.Load()+unsent.Load() < 10 {
			time.Sleep(time.Millisecond)
		}
		close(release)
	}()
	c := <-done
	if most.Load() > 2 || c.sent > 2 {
		t.Errorf("%d sends at once, %d sent; want at most 2", most.Load(), c.sent)
	}
	if c.sent != sends.Load() || c.unsent != unsent.Load() || c.sent+c.unsent != 10 {
		t.Errorf("counts %+v, sends %d, unsent calls %d; want 10 in all", c, sends.Load(), unsent.Load())
	}
}

// TestPaceChecks: Pace refuses a rate or bound it cannot run, and returns
// once its context is done.
func TestPaceChecks(t *testing.T) {
	if err := Pace(context.Background(), 0, 1, func(time.Time) {}, nil); err == nil {
		t.Error("rate 0 accepted")
	}
	if err := Pace(context.Background(), 10, 0, func(time.Time) {}, nil); err == nil {
		t.Error("max outstanding 0 accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int64
	go func() {
		for n.Load() < 3 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if err := Pace(ctx, 1000, 4, func(time.Time) { n.Add(1) }, nil); err != nil {
		t.Fatal(err)
	}
}
