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
// Total, whole instances are forgotten: first those that ended (an
// instanceCompleted, instanceFaulted or instanceTerminated event came),
// those that ended longest ago first, and only when no ended one is left
// those still live, first seen longest ago first. So a busy process's
// short exchanges, which end, never evict the events of an instance that
// waits (for hours, a persistent one). An instance whose process does not
// report instanceLifecycle events is never known to end. A subscriber has a queue of SubscriberQueue events; one that
// does not keep up (its queue is full) is dropped: its channel is
// closed, and it may subscribe again. Deliver never blocks on a
// subscriber, so the dispatcher never finds the timeline slow.
//
// It is a normal listener of a Dispatcher: events reach it through the
// dispatcher's queue, under its budget and blacklisting.
type Timeline struct {
	perInstance, total, subQueue int

	mu     sync.Mutex
	byID   map[string]*kept
	order  []seen // instances in the order first seen
	ended  []seen // instances that ended, in the order they did
	seq    uint64 // the last seen.seq given
	n      int    // events kept
	subs   map[*subscriber]struct{}
	closed bool
}

// kept are an instance's events.
type kept struct {
	evs   []Event
	seq   uint64 // its entry in order (and ended)
	ended bool
}

// seen is an entry of an eviction order: an instance, as kept under seq
// (an instance forgotten and seen again is kept under a new seq, so a
// stale entry does not evict it).
type seen struct {
	id  string
	seq uint64
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
		byID: map[string]*kept{}, subs: map[*subscriber]struct{}{}}
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
	k := t.byID[ev.Instance]
	if k == nil {
		t.seq++
		k = &kept{seq: t.seq}
		t.byID[ev.Instance] = k
		t.order = append(t.order, seen{ev.Instance, k.seq})
	}
	if len(k.evs) >= t.perInstance {
		// Drop the instance's oldest event, reusing the array.
		copy(k.evs, k.evs[1:])
		k.evs = k.evs[:len(k.evs)-1]
		t.n--
	}
	k.evs = append(k.evs, ev)
	t.n++
	if !k.ended && (ev.Kind == InstanceCompleted || ev.Kind == InstanceFaulted || ev.Kind == InstanceTerminated) {
		k.ended = true
		t.ended = append(t.ended, seen{ev.Instance, k.seq})
	}
	for t.n > t.total {
		id, ok := t.next(&t.ended)
		if !ok {
			if id, ok = t.next(&t.order); !ok {
				break
			}
		}
		t.n -= len(t.byID[id].evs)
		delete(t.byID, id)
	}
	if len(t.order) > 2*len(t.byID)+1024 {
		t.order = t.compact(t.order)
		t.ended = t.compact(t.ended)
	}
}

// next takes from q the first instance still kept under its entry.
func (t *Timeline) next(q *[]seen) (string, bool) {
	for len(*q) > 0 {
		e := (*q)[0]
		*q = (*q)[1:]
		if k := t.byID[e.id]; k != nil && k.seq == e.seq {
			return e.id, true
		}
	}
	return "", false
}

// compact drops the entries of q whose instance is forgotten.
func (t *Timeline) compact(q []seen) []seen {
	out := make([]seen, 0, len(t.byID))
	for _, e := range q {
		if k := t.byID[e.id]; k != nil && k.seq == e.seq {
			out = append(out, e)
		}
	}
	return out
}

// Events returns the events kept for instance id, oldest first (nil
// when none is).
func (t *Timeline) Events(id string) []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := t.byID[id]
	if k == nil || len(k.evs) == 0 {
		return nil
	}
	return append([]Event(nil), k.evs...)
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
