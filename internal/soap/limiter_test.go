package soap

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orchd/orchd/internal/exchange"
)

// hookDispatcher runs before for each exchange, counting those inside it,
// then answers as testDispatcher does.
type hookDispatcher struct {
	testDispatcher
	before  func(ctx context.Context)
	inside  atomic.Int64
	most    atomic.Int64 // the most inside at once
	entered atomic.Int64
}

func (d *hookDispatcher) Dispatch(ctx context.Context, ex *exchange.Exchange) error {
	d.entered.Add(1)
	n := d.inside.Add(1)
	for m := d.most.Load(); n > m && !d.most.CompareAndSwap(m, n); m = d.most.Load() {
	}
	d.before(ctx)
	d.inside.Add(-1)
	return d.testDispatcher.Dispatch(ctx, ex)
}

// loadResult counts the answers of a closed-loop load.
type loadResult struct {
	ok, shed, other atomic.Int64
	shedClosed      atomic.Int64 // 503s that closed their connection
	slowestShed     atomic.Int64 // nanoseconds from sending to a 503
}

// closedLoop posts purchase orders from clients goroutines until stop
// returns true (checked between requests) or a minute passes: a bound for
// a hang, not a measure of speed (the limit may move slowly on a loaded
// machine; the tests wait for it to move, not for a time).
func closedLoop(url string, body []byte, clients int, stop func() bool) *loadResult {
	var res loadResult
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Timeout: 30 * time.Second, Transport: tr}
	deadline := time.Now().Add(time.Minute)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for !stop() && time.Now().Before(deadline) {
				t0 := time.Now()
				resp, err := client.Post(url, "text/xml", bytes.NewReader(body))
				if err != nil {
					res.other.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusOK:
					res.ok.Add(1)
				case http.StatusServiceUnavailable:
					res.shed.Add(1)
					if resp.Close {
						res.shedClosed.Add(1)
					}
					d := int64(time.Since(t0))
					for m := res.slowestShed.Load(); d > m && !res.slowestShed.CompareAndSwap(m, d); m = res.slowestShed.Load() {
					}
				default:
					res.other.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return &res
}

// TestAdaptiveLimitGrowsWithSlowPartner: with every exchange waiting 200ms
// on a partner, the limit grows from 8 to take all 32 clients at once:
// latency stays at its lowest, so waiting requests are admitted as the
// limit grows, and none is shed.
func TestAdaptiveLimitGrowsWithSlowPartner(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := NewServer(ServerOptions{MaxInflight: 8, QueueWait: 5 * time.Second, Adaptive: true, Registerer: reg})
	d := &hookDispatcher{before: func(ctx context.Context) {
		id := exchange.IdlerOf(ctx)
		id.Idle(exchange.WaitPartner)
		time.Sleep(200 * time.Millisecond)
		id.Busy(exchange.WaitPartner)
	}}
	if err := s.Handle(poEndpoint(), d); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()

	const clients = 32
	res := closedLoop(hs.URL+"/po", []byte(poRequest(t, "LOAD")), clients, func() bool { return d.most.Load() >= clients && d.entered.Load() >= 4*clients })
	if got := d.most.Load(); got < clients {
		t.Errorf("at most %d exchanges in flight at once, want all %d clients'", got, clients)
	}
	if lim := s.lim.limit.Load(); lim < clients {
		t.Errorf("limit %d, want at least %d", lim, clients)
	}
	if res.shed.Load() != 0 || res.other.Load() != 0 {
		t.Errorf("%d shed, %d failed, want none (%d ok)", res.shed.Load(), res.other.Load(), res.ok.Load())
	}
	if g := gaugeValue(t, reg, "orchd_admission_limit"); g != float64(s.lim.limit.Load()) {
		t.Errorf("orchd_admission_limit %v, want %d", g, s.lim.limit.Load())
	}
}

// TestAdaptiveLimitFallsUnderQueueing: grown from 16 while exchanges wait
// 5ms on a partner, the limit falls back to its floor when they queue for
// a CPU instead (here one mutex held 1ms by each): latency then grows
// with the limit. Requests over it are shed within about the queue wait,
// keeping their connections, and every admitted exchange is served.
func TestAdaptiveLimitFallsUnderQueueing(t *testing.T) {
	reg := prometheus.NewRegistry()
	const start, queueWait = 16, 50 * time.Millisecond
	s := NewServer(ServerOptions{MaxInflight: start, QueueWait: queueWait, Adaptive: true, LatencySlack: 5 * time.Millisecond, Registerer: reg})
	var cpu sync.Mutex
	var queueing atomic.Bool
	d := &hookDispatcher{before: func(context.Context) {
		if !queueing.Load() {
			time.Sleep(5 * time.Millisecond)
			return
		}
		cpu.Lock()
		time.Sleep(time.Millisecond)
		cpu.Unlock()
	}}
	if err := s.Handle(poEndpoint(), d); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	body := []byte(poRequest(t, "LOAD"))

	closedLoop(hs.URL+"/po", body, 64, func() bool { return s.lim.limit.Load() >= 3*start })
	grown := s.lim.limit.Load()
	if grown < 3*start {
		t.Fatalf("the limit grew to %d only, want %d", grown, 3*start)
	}
	queueing.Store(true)
	entered, shedBefore := d.entered.Load(), shedTotal(s)
	var lowest atomic.Int64
	lowest.Store(grown)
	res := closedLoop(hs.URL+"/po", body, 160, func() bool {
		if lim := s.lim.limit.Load(); lim < lowest.Load() {
			lowest.Store(lim)
		}
		return lowest.Load() <= start && shedTotal(s) > shedBefore && d.entered.Load() > entered+300
	})
	t.Logf("limit grew to %d, fell to %d; %d dispatched, %d ok, %d shed", grown, lowest.Load(), d.entered.Load()-entered, res.ok.Load(), res.shed.Load())
	if got := lowest.Load(); got > start {
		t.Errorf("the limit fell to %d at the lowest, want its floor %d", got, start)
	}
	if res.shed.Load() == 0 || res.other.Load() != 0 {
		t.Errorf("%d shed, %d failed (%d ok), want some shed and none failed", res.shed.Load(), res.other.Load(), res.ok.Load())
	}
	// Shedding keeps the connection: no reconnect churn.
	if c := res.shedClosed.Load(); c != 0 {
		t.Errorf("%d of %d 503s closed their connection", c, res.shed.Load())
	}
	// Shedding is quick: the queue wait, and slack for a busy shared
	// machine (without the wait's bound, a request would wait behind
	// all the others: seconds).
	if slowest := time.Duration(res.slowestShed.Load()); slowest > queueWait+5*time.Second {
		t.Errorf("a request was shed after %s, queue wait %s", slowest, queueWait)
	}
	// Admitted work is never shed: every exchange dispatched was answered.
	if ok, in := res.ok.Load(), d.entered.Load()-entered; ok != in {
		t.Errorf("%d answered 200 under load, %d dispatched", ok, in)
	}
	if v := shedTotal(s) - shedBefore; v != float64(res.shed.Load()) {
		t.Errorf("orchd_shed_total %v, clients saw %d", v, res.shed.Load())
	}
}

// TestLimitHolderWaits: an exchange's share of the limit, under each
// mode. Adaptive: it stays taken while the exchange waits for partners
// and is given back while it waits for a message. Fixed: it is given back
// for any wait. Overlapping waits give it back once and take it again
// once; the share given back is free for another exchange; taking it
// back does not wait, even over the limit (admitted work is never shed);
// and an exchange that waited for a message (or any exchange, under the
// fixed limit) does not move the limit with its latency.
func TestLimitHolderWaits(t *testing.T) {
	type step struct {
		busy bool // Busy, else Idle
		w    exchange.Wait
		take bool  // then another exchange takes the share given back
		want int64 // in flight after the step
	}
	idle := func(w exchange.Wait, want int64) step { return step{w: w, want: want} }
	busy := func(w exchange.Wait, want int64) step { return step{busy: true, w: w, want: want} }
	for _, tc := range []struct {
		name     string
		adaptive bool
		steps    []step
	}{
		{"adaptive", true, []step{
			idle(exchange.WaitPartner, 2),
			idle(exchange.WaitMessage, 1),
			{w: exchange.WaitMessage, take: true, want: 2},
			busy(exchange.WaitPartner, 2),
			busy(exchange.WaitMessage, 2),
			busy(exchange.WaitMessage, 3),
		}},
		{"fixed", false, []step{
			idle(exchange.WaitPartner, 1),
			idle(exchange.WaitMessage, 1),
			busy(exchange.WaitMessage, 1),
			idle(exchange.WaitPartner, 1),
			busy(exchange.WaitPartner, 1),
			busy(exchange.WaitPartner, 2),
			{w: exchange.WaitPartner, take: true, want: 2},
			busy(exchange.WaitPartner, 3),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now()
			l := newLimiter(tc.adaptive, 2, 0, 0, 0, now)
			if !l.tryAcquire() || !l.tryAcquire() || l.tryAcquire() {
				t.Fatal("want two admitted under a limit of 2, then none")
			}
			h := &limitHolder{l: l}
			for i, st := range tc.steps {
				if st.busy {
					h.Busy(st.w)
				} else {
					h.Idle(st.w)
				}
				if st.take && !l.tryAcquire() {
					t.Fatalf("step %d: the share given back was not free", i)
				}
				if got := l.inflight.Load(); got != st.want {
					t.Fatalf("step %d: %d in flight, want %d", i, got, st.want)
				}
			}
			if got := l.inflight.Load(); got != 3 { // over the limit of 2: never shed
				t.Fatalf("%d in flight, want 3", got)
			}
			h.finish(now, time.Second)
			if got, c := l.inflight.Load(), l.winCount.Load(); got != 2 || c != 0 {
				t.Fatalf("after finish: %d in flight, %d latencies counted; want 2 and 0", got, c)
			}
		})
	}
}

// gaugeValue is the value of the registered gauge name.
func gaugeValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// shedTotal is orchd_shed_total of the test endpoint's process.
func shedTotal(s *Server) float64 {
	return testutil.ToFloat64(s.metrics.shedTotal.WithLabelValues("poProcess"))
}

// TestClosedLoopOverSlotsNotShed: a closed loop of more clients than
// slots, each exchange holding its slot a while and then waiting for a
// slow commit (which gives the slot back, as the persistent processes'
// checkpoints do), queues for the slots far longer than QueueWait in
// all; the queue never overflows (clients <= slots + MaxQueue) and keeps
// moving, so nothing is shed, under either admission mode. The timings
// only set the scene: the last of 8 queued waits about 4 holds of 10ms,
// past the 10ms QueueWait, and the queue stands still for 10ms at most,
// far from the second that would shed it.
func TestClosedLoopOverSlotsNotShed(t *testing.T) {
	for _, adaptive := range []bool{false, true} {
		t.Run(map[bool]string{false: "fixed", true: "adaptive"}[adaptive], func(t *testing.T) {
			const slots, queue = 2, 8
			s := NewServer(ServerOptions{MaxInflight: slots, QueueWait: 10 * time.Millisecond, MaxQueue: queue, Adaptive: adaptive, Registerer: prometheus.NewRegistry()})
			d := &hookDispatcher{before: func(ctx context.Context) {
				time.Sleep(10 * time.Millisecond) // the slot's work
				id := exchange.IdlerOf(ctx)
				id.Idle(exchange.WaitCommit)
				time.Sleep(10 * time.Millisecond)
				id.Busy(exchange.WaitCommit)
			}}
			if err := s.Handle(poEndpoint(), d); err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(s)
			defer hs.Close()
			var most atomic.Int64
			res := closedLoop(hs.URL+"/po", []byte(poRequest(t, "LOAD")), slots+queue, func() bool {
				if q := s.lim.queued.Load(); q > most.Load() {
					most.Store(q)
				}
				return d.entered.Load() >= 150
			})
			t.Logf("%d ok, %d shed, %d failed; up to %d queued", res.ok.Load(), res.shed.Load(), res.other.Load(), most.Load())
			if res.shed.Load() != 0 || res.other.Load() != 0 || shedTotal(s) != 0 {
				t.Errorf("%d shed (orchd_shed_total %v), %d failed, want none (%d ok)", res.shed.Load(), shedTotal(s), res.other.Load(), res.ok.Load())
			}
			if most.Load() == 0 {
				t.Error("no request ever queued: the test shows nothing")
			}
		})
	}
}

// TestQueueFirstComeFirstServed: requests queued for the one slot are
// admitted in the order they came, each freed slot going to the first of
// them, not to a request arriving as it frees; one that finds the queue
// full is refused at once (here the wait is an hour: nothing is timed).
func TestQueueFirstComeFirstServed(t *testing.T) {
	l := newLimiter(false, 1, time.Hour, 3, 0, time.Now())
	if !l.admit(context.Background()) {
		t.Fatal("the free slot was not taken")
	}
	order := make(chan int, 3)
	for i := range 3 {
		go func() {
			if l.admit(context.Background()) {
				order <- i
			}
		}()
		waitFor(t, "the request to queue", func() bool { return l.queued.Load() == int64(i+1) })
	}
	if l.admit(context.Background()) {
		t.Fatal("a request beyond the full queue was admitted")
	}
	if l.overflows.Load() != 1 {
		t.Errorf("%d overflows counted, want 1", l.overflows.Load())
	}
	for want := range 3 {
		l.release()
		// The slot went to the first queued: nothing else gets it.
		if l.tryAcquire() {
			t.Fatalf("after release %d a request arriving took the slot", want)
		}
		if got := <-order; got != want {
			t.Fatalf("admitted request %d, want %d", got, want)
		}
	}
	if n := l.inflight.Load(); n != 1 {
		t.Errorf("%d in flight, want 1", n)
	}
}
