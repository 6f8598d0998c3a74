package process

import "time"

// Clock is the time the engine reads for instance timers and deadlines
// (<wait>, onAlarm, a request waiting inline for its instance's timer).
// Options.Clock sets it; tests use a fake one to step through time
// without sleeping. Metrics, held messages and retries keep the real
// clock.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not started, and reports whether
	// it did.
	Stop() bool
}

// realClock is the system clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// clock returns Options.Clock, or the system clock when it is nil.
func (e *Engine) clock() Clock {
	if e.opts.Clock != nil {
		return e.opts.Clock
	}
	return realClock{}
}

// until is the time from the engine's now to the instant unixNano (a
// deadline). time.Time.Sub saturates at the longest time.Duration, so it
// does not wrap: a timer on it falls due in about 292 years at most.
func (e *Engine) until(unixNano int64) time.Duration {
	return time.Unix(0, unixNano).Sub(e.now())
}

// timer returns a timer that closes its channel once d has passed on the
// engine's clock.
func (e *Engine) timer(d time.Duration) (Timer, <-chan struct{}) {
	c := make(chan struct{})
	return e.clock().AfterFunc(d, func() { close(c) }), c
}
