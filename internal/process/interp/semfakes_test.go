package interp_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process"
)

// fakeClock is a process.Clock whose time moves only on Advance.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	pending []*fakeTimer
	// added is signalled (closed and replaced) whenever a timer is added.
	added chan struct{}
}

type fakeTimer struct {
	c       *fakeClock
	due     time.Time
	f       func()
	stopped bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), added: make(chan struct{})}
}

// Now returns the fake time.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc calls f at once (in its own goroutine) when d is not
// positive, else on the Advance that reaches now+d.
func (c *fakeClock) AfterFunc(d time.Duration, f func()) process.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, due: c.now.Add(d), f: f}
	if d <= 0 {
		go f()
		return t
	}
	c.pending = append(c.pending, t)
	close(c.added)
	c.added = make(chan struct{})
	return t
}

// Stop removes t from the pending timers.
func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	for i, p := range t.c.pending {
		if p == t {
			t.c.pending = append(t.c.pending[:i], t.c.pending[i+1:]...)
			return was
		}
	}
	return false
}

// hasPending reports whether a timer is pending.
func (c *fakeClock) hasPending() (bool, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending) > 0, c.added
}

// Advance moves the time by d, first waiting, while busy says some
// dispatch still runs and for up to grace, for a timer to be pending (an
// instance another goroutine runs may not have reached its wait yet),
// and calls the due timers, earliest first, in this goroutine: when it
// returns their runs are over.
func (c *fakeClock) Advance(d, grace time.Duration, busy func() bool) {
	c.mu.Lock()
	to := c.now.Add(d)
	c.mu.Unlock()
	deadline := time.After(grace)
	for ok, added := c.hasPending(); !ok && busy(); ok, added = c.hasPending() {
		select {
		case <-added:
			continue
		case <-time.After(5 * time.Millisecond):
			continue
		case <-deadline:
		}
		break
	}
	for {
		c.mu.Lock()
		sort.SliceStable(c.pending, func(i, j int) bool { return c.pending[i].due.Before(c.pending[j].due) })
		if len(c.pending) == 0 || c.pending[0].due.After(to) {
			c.now = to
			c.mu.Unlock()
			return
		}
		t := c.pending[0]
		c.pending = c.pending[1:]
		t.stopped = true
		c.now = t.due
		c.mu.Unlock()
		t.f()
	}
}

// partnerAnswer is a scripted answer of an operation of the partner.
type partnerAnswer struct {
	// kind is reply, fault or fail; gate and hold are set by their steps.
	kind string
	// name is a fault's name; payload the reply's or fault's payload;
	// text a failure's message.
	name    exchange.QName
	payload string
	text    string
}

// scriptedPartner answers the process's partner calls as the case's
// partner steps say, and records them.
type scriptedPartner struct {
	mu      sync.Mutex
	answers map[string][]partnerAnswer
	calls   map[string][]*etree.Element
	// gates hold each call of an operation until that many are in
	// flight at once (then the gate stays open); holds hold them until
	// released.
	gates    map[string]int
	opened   map[string]bool
	inFlight map[string]int
	holds    map[string]chan struct{}
	changed  chan struct{}
}

func newScriptedPartner() *scriptedPartner {
	return &scriptedPartner{answers: map[string][]partnerAnswer{}, calls: map[string][]*etree.Element{},
		gates: map[string]int{}, opened: map[string]bool{}, inFlight: map[string]int{}, holds: map[string]chan struct{}{}, changed: make(chan struct{})}
}

// signal wakes the goroutines waiting for a change; p.mu is held.
func (p *scriptedPartner) signal() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// Invoke answers c with the operation's next scripted answer (the last
// one repeats); an operation with none fails.
func (p *scriptedPartner) Invoke(ctx context.Context, c *exchange.Call) (*exchange.Message, error) {
	op := c.Operation.Name
	p.mu.Lock()
	var in *etree.Element
	for _, v := range c.Input.Parts {
		in = v.Copy()
	}
	p.calls[op] = append(p.calls[op], in)
	p.inFlight[op]++
	p.signal()
	hold := p.holds[op]
	if p.inFlight[op] >= p.gates[op] {
		p.opened[op] = true
	}
	for !p.opened[op] {
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Second):
			p.mu.Lock()
			defer p.mu.Unlock()
			p.inFlight[op]--
			return nil, fmt.Errorf("scripted partner: gate of %s: %d calls in flight, want %d", op, p.inFlight[op]+1, p.gates[op])
		}
		p.mu.Lock()
	}
	p.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.signal()
	p.inFlight[op]--
	as := p.answers[op]
	if len(as) == 0 {
		return nil, fmt.Errorf("scripted partner: no answer for operation %s", op)
	}
	a := as[0]
	if len(as) > 1 {
		p.answers[op] = as[1:]
	}
	switch a.kind {
	case "fault":
		f := &exchange.Fault{Name: a.name}
		if a.payload != "" {
			m, err := payloadMessage(exchange.QName{}, a.payload)
			if err != nil {
				return nil, err
			}
			f.Message = m
		}
		return nil, f
	case "fail":
		return nil, errors.New(a.text)
	}
	if c.Operation.OneWay() {
		return nil, nil
	}
	if len(c.Operation.Output.Parts) != 1 {
		return nil, fmt.Errorf("scripted partner: the output of %s has %d parts, a reply gives one", op, len(c.Operation.Output.Parts))
	}
	return partMessage(c.Operation.Output.Name, c.Operation.Output.Parts[0].Name, a.payload)
}

// callsOf returns the recorded inputs of op's calls.
func (p *scriptedPartner) callsOf(op string) []*etree.Element {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*etree.Element(nil), p.calls[op]...)
}

// waitCalls waits up to d for op to have been called n times, and
// returns the count then.
func (p *scriptedPartner) waitCalls(op string, n int, d time.Duration) int {
	deadline := time.After(d)
	for {
		p.mu.Lock()
		got, ch := len(p.calls[op]), p.changed
		p.mu.Unlock()
		if got >= n {
			return got
		}
		select {
		case <-ch:
		case <-deadline:
			return got
		}
	}
}

// payloadMessage is a message named name whose one part, payload, is
// the XML text x (semXML).
func payloadMessage(name exchange.QName, x string) (*exchange.Message, error) {
	return partMessage(name, "payload", x)
}

// partMessage is a message named name whose one part is the XML text x
// (semXML).
func partMessage(name exchange.QName, part, x string) (*exchange.Message, error) {
	el, err := semXML(x)
	if err != nil {
		return nil, err
	}
	m := exchange.NewMessage(name)
	m.Parts[part] = el
	return m, nil
}
