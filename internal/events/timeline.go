package events

import (
	"context"
	"sync"
)

// Timeline is a Listener that keeps, in bounded memory, the last events
// of each instance (for an instance's page and the management API) and
// fans every event out to live subscribers (the console's and the API's
// event stream).
//
// Bounds: at most PerInstance events per instance (the oldest of the
// instance are dropped first) and at most Total events in all; past
// Total, whole instances are forgotten, those first seen longest ago
// first. A subscriber has a queue of SubscriberQueue events; one that
// does not keep up (its queue is full) is dropped: its channel is
// closed, and it may subscribe again. Deliver never blocks on a
// subscriber, so the dispatcher never finds the timeline slow.
//
// It is a normal listener of a Dispatcher: events reach it through the
// dispatcher's queue, under its budget and blacklisting.
type Timeline struct {
	perInstance, total, subQueue int

	mu     sync.Mutex
	byID   map[string][]Event
	order  []string // instances in the order first seen
	n      int      // events kept
	subs   map[*subscriber]struct{}
	closed bool
}

type subscriber struct {
	ch chan Event
}

// TimelineOptions bound a Timeline. Zero values take the defaults.
type TimelineOptions struct {
	// Total is the most events kept across instances (default 10000).
	Total int
	// PerInstance is the most events kept per instance (default 200,
	// never more than Total).
	PerInstance int
	// SubscriberQueue is each subscriber's channel capacity (default
	// 1024).
	SubscriberQueue int
}

// NewTimeline returns an empty timeline with the bounds of opts.
func NewTimeline(opts TimelineOptions) *Timeline {
	if opts.Total <= 0 {
		opts.Total = 10000
	}
	if opts.PerInstance <= 0 {
		opts.PerInstance = 200
	}
	if opts.PerInstance > opts.Total {
		opts.PerInstance = opts.Total
	}
	if opts.SubscriberQueue <= 0 {
		opts.SubscriberQueue = 1024
	}
	return &Timeline{perInstance: opts.PerInstance, total: opts.Total, subQueue: opts.SubscriberQueue,
		byID: map[string][]Event{}, subs: map[*subscriber]struct{}{}}
}

// Name implements Listener.
func (t *Timeline) Name() string { return "timeline" }

// Deliver implements Listener: it keeps the batch's events and offers
// them to the subscribers. It never blocks.
func (t *Timeline) Deliver(_ context.Context, batch []Event) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ev := range batch {
		t.keep(ev)
		for s := range t.subs {
			select {
			case s.ch <- ev:
			default:
				// Too slow: dropped, never waited for.
				delete(t.subs, s)
				close(s.ch)
			}
		}
	}
	return nil
}

// keep stores ev under its instance within the bounds. The caller holds
// t.mu.
func (t *Timeline) keep(ev Event) {
	if ev.Instance == "" {
		return
	}
	evs, ok := t.byID[ev.Instance]
	if !ok {
		t.order = append(t.order, ev.Instance)
	}
	if len(evs) >= t.perInstance {
		// Drop the instance's oldest event, reusing the array.
		copy(evs, evs[1:])
		evs = evs[:len(evs)-1]
		t.n--
	}
	t.byID[ev.Instance] = append(evs, ev)
	t.n++
	for t.n > t.total && len(t.order) > 0 {
		old := t.order[0]
		t.order = t.order[1:]
		t.n -= len(t.byID[old])
		delete(t.byID, old)
	}
}

// Events returns the events kept for instance id, oldest first (nil
// when none is).
func (t *Timeline) Events(id string) []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	evs := t.byID[id]
	if len(evs) == 0 {
		return nil
	}
	return append([]Event(nil), evs...)
}

// Len returns how many instances and events are kept.
func (t *Timeline) Len() (instances, events int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byID), t.n
}

// Subscribe returns a channel that receives every event delivered from
// now on, and cancel, which ends the subscription and closes the
// channel. The channel is also closed when the subscriber falls
// SubscriberQueue events behind, or when the timeline is closed.
func (t *Timeline) Subscribe() (<-chan Event, func()) {
	s := &subscriber{ch: make(chan Event, t.subQueue)}
	t.mu.Lock()
	if t.closed {
		close(s.ch)
	} else {
		t.subs[s] = struct{}{}
	}
	t.mu.Unlock()
	return s.ch, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if _, ok := t.subs[s]; ok {
			delete(t.subs, s)
			close(s.ch)
		}
	}
}

// Close ends every subscription; later ones are closed at once.
func (t *Timeline) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for s := range t.subs {
		delete(t.subs, s)
		close(s.ch)
	}
}
