package soap

import (
	"container/list"
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orchd/orchd/internal/exchange"
)

// Tuning of the adaptive admission limit (ServerOptions.Adaptive).
const (
	// limitWindow is how often the limit moves: the first exchange to
	// finish this long after the last move averages the latencies of
	// those finished since and moves it.
	limitWindow = 100 * time.Millisecond
	// defaultLatencySlack is ServerOptions.LatencySlack's default.
	defaultLatencySlack = 20 * time.Millisecond
	// floorWindows is how many windows in a row the limit sits at its
	// floor with latency over the target before the lowest latency seen
	// is taken to have moved (partners became slower for good).
	floorWindows = 10
	// stallWait is how long a queue that never overflowed may stand
	// still (no request in it admitted) before its requests are shed, or
	// the queue wait if longer. A request shed is told to come back after
	// Retry-After (retryAfter): shedding it sooner than that from a queue
	// that is not overloaded would only answer it later.
	stallWait = retryAfter
)

// limiter bounds the exchanges admitted at once, in one of two ways
// (ServerOptions.Adaptive):
//
//   - fixed: a constant limit on the exchanges using the CPU; an exchange
//     that waits (for a partner, for another message) gives its share
//     back while it waits, and takes it again without waiting when it
//     runs again (admitted work is never shed nor queued behind new
//     work);
//   - adaptive: a limit on all the exchanges admitted and not finished
//     (waits for partners included, waits for another message not) that
//     follows their latency, in the style of TCP Vegas and gradient
//     concurrency limits: while the average latency of a window stays
//     under twice the lowest seen plus a slack, the limit grows (by its
//     square root, if the window came near it); above, it is cut in
//     proportion (by half at most). So slow partners get as many
//     exchanges in flight as they take, and a saturated CPU, where
//     exchanges only queue, gets fewer.
//
// A request over the limit joins a queue bounded by length (MaxQueue):
// one that finds it full is shed at once, so an overload (more arriving
// than is served) sheds at the rate it comes, without a wait. A queued
// request is admitted in its turn (first come, first served: a slot freed
// while requests are queued goes to the first of them, not to a request
// just arrived). It is shed after the queue wait when the queue
// overflowed meanwhile (a request found it full: more arrive than are
// served, and waiting longer would only make every answer later), and
// otherwise only when the queue stood still for stallWait (no queued
// request admitted: the server is stuck, every slot held by exchanges
// that do not end). So a bounded closed loop of clients (at most the
// limit plus the queue), which never overflows the queue, is never shed
// however slowly it is served, while an open loop past capacity is shed
// at once at the full queue and keeps the wait of those queued to about
// the queue wait. The fast path (no queue) is atomics only; the queue has
// a mutex; no time.Now of its own.
type limiter struct {
	adaptive  bool
	limit     atomic.Int64 // the current bound
	inflight  atomic.Int64 // admitted, not finished, not giving their share back
	queued    atomic.Int64 // requests waiting to be admitted: len(waiters), for reading without mu
	nearLimit atomic.Bool  // an admission this window found the limit half used

	mu      sync.Mutex
	waiters list.List // of *waiter, first come first
	moved   uint64    // queued requests admitted so far (under mu)
	// overflows counts the requests shed because the queue was full.
	overflows atomic.Uint64

	winStart  atomic.Int64 // when the window began, unix nanoseconds
	winSum    atomic.Int64 // latencies finished in the window, nanoseconds
	winCount  atomic.Int64 // exchanges finished in the window
	minRTT    atomic.Int64 // the lowest window average, nanoseconds
	atFloor   atomic.Int64 // windows in a row at the floor over the target
	floor     int64
	ceiling   int64
	slack     time.Duration
	queueWait time.Duration
	maxQueue  int64
}

// waiter is a queued request; admitted and ready are set (under
// limiter.mu) when a slot is given to it.
type waiter struct {
	admitted bool
	ready    chan struct{} // buffered 1
}

// newLimiter returns a limiter starting at (fixed: always at) start.
func newLimiter(adaptive bool, start int, queueWait time.Duration, maxQueue int64, slack time.Duration, now time.Time) *limiter {
	l := &limiter{
		adaptive:  adaptive,
		floor:     max(1, int64(start)),
		ceiling:   64 * int64(start),
		slack:     slack,
		queueWait: queueWait,
		maxQueue:  maxQueue,
	}
	if l.slack <= 0 {
		l.slack = defaultLatencySlack
	}
	l.limit.Store(int64(start))
	l.winStart.Store(now.UnixNano())
	return l
}

// tryAcquire admits an exchange if the limit has room.
func (l *limiter) tryAcquire() bool {
	for {
		n, lim := l.inflight.Load(), l.limit.Load()
		if n >= lim {
			return false
		}
		if l.inflight.CompareAndSwap(n, n+1) {
			// Only the adaptive limit reads nearLimit (update).
			if l.adaptive && 2*(n+1) >= lim && !l.nearLimit.Load() {
				l.nearLimit.Store(true)
			}
			return true
		}
	}
}

// admit admits an exchange: at once if the limit has room and nobody is
// queued, else in its turn in the queue. It reports false when the queue
// is full; after the queue wait, when the queue overflowed meanwhile;
// after stallWait, when the queue stood still that long; or when the
// client went away.
func (l *limiter) admit(ctx context.Context) bool {
	if l.queued.Load() == 0 && l.tryAcquire() {
		return true
	}
	if l.queueWait <= 0 {
		return false
	}
	l.mu.Lock()
	if int64(l.waiters.Len()) >= l.maxQueue {
		l.mu.Unlock()
		l.overflows.Add(1)
		return false
	}
	w := &waiter{ready: make(chan struct{}, 1)}
	e := l.waiters.PushBack(w)
	// Counted queued before the limit is looked at again: a release
	// that did not see it queued freed its slot before this look.
	l.queued.Store(int64(l.waiters.Len()))
	l.grantLocked()
	moved, overflows := l.moved, l.overflows.Load()
	l.mu.Unlock()

	t := time.NewTimer(l.queueWait)
	defer t.Stop()
	var still time.Duration // how long the queue has stood still
	for {
		select {
		case <-w.ready:
			return true
		case <-ctx.Done():
			if l.leave(e, w) {
				l.release() // admitted as the client left: pass it on
			}
			return false
		case <-t.C:
			l.mu.Lock()
			still += l.queueWait
			if l.moved != moved {
				still, moved = 0, l.moved
			}
			wait := !w.admitted && l.overflows.Load() == overflows && still < max(l.queueWait, stallWait)
			l.mu.Unlock()
			if !wait {
				return l.leave(e, w)
			}
			// The queue never overflowed, and moved or stood still
			// for less than stallWait: wait on in turn.
			t.Reset(l.queueWait)
		}
	}
}

// leave takes w out of the queue unless it was admitted meanwhile, and
// reports whether it was.
func (l *limiter) leave(e *list.Element, w *waiter) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w.admitted {
		return true
	}
	l.waiters.Remove(e)
	l.queued.Store(int64(l.waiters.Len()))
	return false
}

// grantLocked admits queued requests, first come first, while the limit
// has room; l.mu is held.
func (l *limiter) grantLocked() {
	for l.waiters.Len() > 0 && l.tryAcquire() {
		w := l.waiters.Remove(l.waiters.Front()).(*waiter)
		w.admitted = true
		w.ready <- struct{}{}
		l.moved++
	}
	l.queued.Store(int64(l.waiters.Len()))
}

// grant admits queued requests while the limit has room.
func (l *limiter) grant() {
	// Read after the slot was freed (or the limit raised): a request
	// queued before either is seen here, one queued after sees the room.
	if l.queued.Load() == 0 {
		return
	}
	l.mu.Lock()
	l.grantLocked()
	l.mu.Unlock()
}

// release ends an admitted exchange (or its count while it waits for a
// message) and gives its slot to the first queued request.
func (l *limiter) release() {
	l.inflight.Add(-1)
	l.grant()
}

// observe records the latency of an exchange that finished at now and,
// once a window has passed, moves the limit (adaptive only).
func (l *limiter) observe(now time.Time, latency time.Duration) {
	if !l.adaptive {
		return
	}
	l.winSum.Add(int64(latency))
	l.winCount.Add(1)
	start, end := l.winStart.Load(), now.UnixNano()
	if end-start < int64(limitWindow) || !l.winStart.CompareAndSwap(start, end) {
		return
	}
	l.update()
}

// update moves the limit by the window just ended; one goroutine at a
// time runs it (the one whose CompareAndSwap ended the window).
func (l *limiter) update() {
	sum, n := l.winSum.Swap(0), l.winCount.Swap(0)
	near := l.nearLimit.Swap(false)
	if n <= 0 {
		return
	}
	avg := sum / n
	low := l.minRTT.Load()
	if low == 0 || avg < low {
		low = avg
		l.minRTT.Store(low)
	}
	lim := l.limit.Load()
	next := lim
	target := 2*low + int64(l.slack)
	switch {
	case avg > target && lim <= l.floor:
		// At the floor our own queueing is small: if latency stays
		// high, the lowest latency seen is no longer to be had.
		if l.atFloor.Add(1) >= floorWindows {
			l.minRTT.Store(avg)
			l.atFloor.Store(0)
		}
	case avg > target:
		l.atFloor.Store(0)
		next = max(l.floor, int64(float64(lim)*max(0.5, float64(target)/float64(avg))))
	case near:
		l.atFloor.Store(0)
		next = min(l.ceiling, lim+max(1, int64(math.Sqrt(float64(lim)))))
	default:
		l.atFloor.Store(0)
	}
	if next == lim {
		return
	}
	l.limit.Store(next)
	if next > lim {
		l.grant()
	}
}

// limitHolder is an admitted exchange's share of the limit. Under the
// adaptive limit it counts while the exchange waits for partners (their
// latency is part of what the limit follows), and not while it waits for
// another message to this server, which must be admitted for the wait to
// end; under the fixed one it counts only while the exchange runs. The
// first of overlapping waits gives the share back, the last takes it
// again, without waiting: admitted work is never shed.
type limitHolder struct {
	l      *limiter
	waits  atomic.Int32 // waits that gave the share back, at once
	waited atomic.Bool  // waited for a message: its latency says nothing
}

// gives reports whether a wait w gives the share back.
func (h *limitHolder) gives(w exchange.Wait) bool {
	return w == exchange.WaitMessage || !h.l.adaptive
}

// Idle implements exchange.Idler.
func (h *limitHolder) Idle(w exchange.Wait) {
	if w == exchange.WaitMessage {
		h.waited.Store(true)
	}
	if h.gives(w) && h.waits.Add(1) == 1 {
		h.l.release()
	}
}

// Busy implements exchange.Idler.
func (h *limitHolder) Busy(w exchange.Wait) {
	if h.gives(w) && h.waits.Add(-1) == 0 {
		h.l.inflight.Add(1)
	}
}

// finish releases the exchange's share; latency, from dispatch to now,
// moves an adaptive limit unless the exchange waited for a message.
func (h *limitHolder) finish(now time.Time, latency time.Duration) {
	h.l.release()
	if !h.waited.Load() {
		h.l.observe(now, latency)
	}
}
