package process

import (
	"sync"
	"time"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// Ended in-memory instances: an in-memory process stores nothing, so an
// instance that ends leaves only its counters, and a failed one its
// incident. Where retention applies to it (its orchd:retention, or
// Options.Retention, for its end state), the engine keeps its summary
// (id, version, state, start and end, correlation values, fault) in
// memory for that long, for listings and details, newest KeptMax per
// version; the retention sweep forgets what is due. Nothing is kept, and
// nothing costs, when no retention applies.

// DefaultKeptMax is Options.KeptMax's default.
const DefaultKeptMax = 10000

// keptInstance is the summary of an ended in-memory instance.
type keptInstance struct {
	seq   uint64 // of its id, "m<seq>"
	info  mgmt.Instance
	until time.Time
}

// keptEnded are the kept summaries of each version, oldest first.
type keptEnded struct {
	mu sync.Mutex
	by map[*interp.Version][]keptInstance
}

// keepEnded keeps the summary of in-memory instance in, which ended
// with res (fault: the uncaught fault's name), when retention applies.
func (e *Engine) keepEnded(in *interp.Instance, res interp.Result, fault exchange.QName) {
	st := interp.StateOf(res)
	if st != persist.Completed && st != persist.Faulted && st != persist.Terminated {
		return
	}
	p := in.Version()
	keep := e.keepFor(p, st)
	if keep <= 0 {
		return
	}
	id := in.Name(e.host().NewMemID)
	seq, ok := memSeq(id)
	if !ok {
		return
	}
	s := in.Summary()
	now := e.now()
	if fault != (exchange.QName{}) {
		s.Fault = fault.String()
	}
	k := keptInstance{seq: seq, until: now.Add(keep), info: mgmt.Instance{ID: id, Process: p.Name.String(), Version: p.Number,
		InMemory: true, State: st.String(), Started: s.Started, LastActive: now, Correlations: s.Correlations, Fault: s.Fault}}
	max := e.opts.KeptMax
	if max <= 0 {
		max = DefaultKeptMax
	}
	e.kept.mu.Lock()
	defer e.kept.mu.Unlock()
	if e.kept.by == nil {
		e.kept.by = map[*interp.Version][]keptInstance{}
	}
	list := append(e.kept.by[p], k)
	if len(list) > max {
		n := len(list) - max
		clear(list[:n])
		list = list[n:]
	}
	e.kept.by[p] = list
}

// keptAtLocked is where the kept summary with id is: its version and index
// (p nil: none). The caller holds e.kept.mu.
func (e *Engine) keptAtLocked(id string) (p *interp.Version, i int) {
	seq, ok := memSeq(id)
	if !ok {
		return nil, 0
	}
	for p, list := range e.kept.by {
		for i, k := range list {
			if k.seq == seq {
				return p, i
			}
		}
	}
	return nil, 0
}

// keptOf returns the kept summary with id, unless due at now.
func (e *Engine) keptOf(id string, now time.Time) (mgmt.Instance, bool) {
	e.kept.mu.Lock()
	defer e.kept.mu.Unlock()
	p, i := e.keptAtLocked(id)
	if p == nil || !now.Before(e.kept.by[p][i].until) {
		return mgmt.Instance{}, false
	}
	return e.kept.by[p][i].info, true
}

// keptBelow calls f with each kept summary whose sequence number is below
// below and that is not due at now (a sweep may not have run yet).
func (e *Engine) keptBelow(below uint64, now time.Time, f func(seq uint64, info *mgmt.Instance)) {
	e.kept.mu.Lock()
	defer e.kept.mu.Unlock()
	for _, list := range e.kept.by {
		for i := range list {
			if list[i].seq < below && now.Before(list[i].until) {
				f(list[i].seq, &list[i].info)
			}
		}
	}
}

// forgetKept drops the kept summary id; it reports whether there was one.
func (e *Engine) forgetKept(id string) bool {
	e.kept.mu.Lock()
	defer e.kept.mu.Unlock()
	p, i := e.keptAtLocked(id)
	if p == nil {
		return false
	}
	list := e.kept.by[p]
	e.kept.by[p] = append(list[:i:i], list[i+1:]...)
	return true
}

// sweepKept forgets the summaries whose period has passed at now, and
// counts them in swept and the retention metric.
func (e *Engine) sweepKept(now time.Time, swept Swept) {
	e.kept.mu.Lock()
	defer e.kept.mu.Unlock()
	for p, list := range e.kept.by {
		out := list[:0]
		for _, k := range list {
			if now.Before(k.until) {
				out = append(out, k)
				continue
			}
			swept[p.Name.Local+" "+k.info.State]++
			e.retentionCounter().WithLabelValues(p.Name.Local, k.info.State).Inc()
		}
		clear(list[len(out):])
		if len(out) == 0 {
			delete(e.kept.by, p)
		} else {
			e.kept.by[p] = out
		}
	}
}

// keptDetail describes a kept summary: what was kept, no more.
func keptDetail(info mgmt.Instance) *mgmt.InstanceDetail {
	return &mgmt.InstanceDetail{Instance: info, Variables: map[string]string{}, Branches: []mgmt.Branch{},
		Timeline: []events.Event{}, Actions: []mgmt.Action{mgmt.Delete}}
}
