package soap

import (
	"context"
	"net"
	"sync/atomic"
	"time"
)

// Pacing of clients that retry at once after being shed. A shed answer
// says Retry-After: 1; a client that sends again on the same connection
// sooner, after sheds in a row, waits out a pause before its request is
// considered: firstPause after one shed, doubling with each further shed
// in a row, up to retryAfter. An admission ends the row. Without it, a
// closed loop of clients that ignore Retry-After turns every request past
// the admission bound into a busy loop of 503s, and the server (and, on
// the same machine, the clients) spends its CPU on answering them instead
// of on the admitted exchanges.
const (
	firstPause = 10 * time.Millisecond
	retryAfter = time.Second
)

// connPace is one client connection's record of its sheds in a row. Its
// fields are atomics because HTTP/2 serves a connection's streams at
// once.
type connPace struct {
	lastShed atomic.Int64 // when the last shed in a row was answered, unix nanoseconds
	streak   atomic.Int32 // sheds in a row
}

type connPaceKey struct{}

// ConnContext is the http.Server.ConnContext that lets the Server pace
// a connection's retries after sheds (see firstPause); without it there
// is no pacing. It adds nothing when admission is off.
func (s *Server) ConnContext(ctx context.Context, _ net.Conn) context.Context {
	if s.lim == nil {
		return ctx
	}
	return context.WithValue(ctx, connPaceKey{}, &connPace{})
}

// paceOf returns the connection's pace, or nil.
func paceOf(ctx context.Context) *connPace {
	p, _ := ctx.Value(connPaceKey{}).(*connPace)
	return p
}

// pause is how long a request arriving at now on the connection waits
// before admission: what is left of the pause its sheds in a row earned.
func (p *connPace) pause(now time.Time) time.Duration {
	n := p.streak.Load()
	if n == 0 {
		return 0
	}
	d := min(firstPause<<min(n-1, 16), retryAfter)
	return time.Duration(p.lastShed.Load()+int64(d)) - time.Duration(now.UnixNano())
}

// shed records a shed answered at now.
func (p *connPace) shed(now time.Time) {
	p.lastShed.Store(now.UnixNano())
	p.streak.Add(1)
}

// admitted ends the connection's row of sheds.
func (p *connPace) admitted() {
	if p.streak.Load() != 0 {
		p.streak.Store(0)
	}
}

// admit admits an exchange under s.lim, after the pause its connection's
// sheds in a row earned (connPace); received is when the request came.
// It reports false when the exchange is to be shed.
func (s *Server) admit(ctx context.Context, received time.Time) bool {
	p := paceOf(ctx)
	if p != nil {
		if s.paceClock != nil {
			received = s.paceClock()
		}
		if d := p.pause(received); d > 0 {
			if s.paused != nil {
				s.paused.Inc()
			}
			if !wait(ctx, d) {
				return false
			}
		}
	}
	if !s.lim.admit(ctx) {
		return false
	}
	if p != nil {
		p.admitted()
	}
	return true
}

// wait sleeps for d, or until ctx is done; it reports whether the full
// pause passed.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
