package process

import (
	"fmt"
	"sync"

	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// AdoptInterrupted resumes, in the background, the stored instances
// interrupted in the middle of a run (state running) for which mine
// reports true, as Recover does at a start. When several orchd processes
// share one store, a process calls it when a peer has left, so that the
// runs the peer was inside (their clients got no answer) go on here
// instead of waiting for a node to start. Each resumption takes the
// instance's lock (Options.Owners) and goes on only if the instance is
// still running once loaded under it, so an instance another process is
// running, or resumed first, is left as it is. It returns the number of
// instances it started resuming.
func (e *Engine) AdoptInterrupted(mine func(instanceID string) bool) (int, error) {
	if e.store == nil {
		return 0, nil
	}
	procs := e.persistentByName()
	type run struct {
		p  *interp.Version
		id string
	}
	var runs []run
	err := e.store.Instances(func(rec *persist.Instance) bool {
		if rec.Err != nil || rec.State != persist.Running || !mine(rec.ID) {
			return true
		}
		if p := procs[rec.Process]; p != nil {
			runs = append(runs, run{p, rec.ID})
		}
		return true
	})
	if err != nil {
		return 0, fmt.Errorf("adopt interrupted runs: %w", err)
	}
	for _, r := range runs {
		go e.resumeInterrupted(r.p, r.id)
	}
	return len(runs), nil
}

// AdoptTimers schedules the stored timers of the persistent instances
// for which mine reports true and that this engine has not scheduled
// yet. When several orchd processes share one store, each schedules the
// timers it writes; a process calls AdoptTimers when a peer has left, so
// that the peer's timers fire here (internal/cluster's Responsible
// decides whose they are). A timer fires only if its instance still waits
// for it when it is loaded under its lock, so a timer that another process
// fires as well is a wasted load, not a second firing. It returns the
// number of timers scheduled.
func (e *Engine) AdoptTimers(mine func(instanceID string) bool) (int, error) {
	return e.adoptTimers(mine, nil)
}

// AdoptTimersOf is AdoptTimers for a cluster whose nodes do not all
// serve the same versions (a rolling upgrade): mine is asked with the
// VersionID of each timer's instance as well, so that the timer goes to
// a node that has that version (cluster.Node.ResponsibleFor). It reads
// the instance of every stored timer, not only of those it adopts.
func (e *Engine) AdoptTimersOf(mine func(instanceID, version string) bool) (int, error) {
	return e.adoptTimers(func(string) bool { return true }, mine)
}

// adoptTimers schedules the stored timers for which mine(instance)
// and, if set, mineV(instance, version) report true, of the versions
// this engine has.
func (e *Engine) adoptTimers(mine func(string) bool, mineV func(string, string) bool) (int, error) {
	if e.store == nil {
		return 0, nil
	}
	var due []persist.Timer
	err := e.store.Timers(func(t persist.Timer) bool {
		if mine(t.InstanceID) {
			due = append(due, t)
		}
		return true
	})
	if err != nil {
		return 0, fmt.Errorf("adopt timers: %w", err)
	}
	vi := e.versions()
	n := 0
	for _, t := range due {
		rec, _, err := e.store.Instance(t.InstanceID)
		if err != nil {
			continue // gone meanwhile, or broken (found when loaded)
		}
		p := vi.of(rec.Process, rec.Frames)
		if p == nil || p.InMemory {
			continue // a process this node does not have
		}
		if fp := fingerprintOf(rec.Frames); fp != nil && string(fp) != p.Fingerprint {
			continue // a version this node does not have: it cannot run it
		}
		if mineV != nil && !mineV(t.InstanceID, p.VersionID()) {
			continue
		}
		if e.schedule(p, t.InstanceID, t.Due.UnixNano()) {
			n++
		}
	}
	return n, nil
}

// outboxSending is the set of outbox sequence numbers an engine is
// sending, so an adopted message is not sent twice from here.
type outboxSending struct {
	mu sync.Mutex
	m  map[uint64]struct{}
}

// add records seq; false if it was already being sent.
func (s *outboxSending) add(seq uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[seq]; ok {
		return false
	}
	if s.m == nil {
		s.m = map[uint64]struct{}{}
	}
	s.m[seq] = struct{}{}
	return true
}

func (s *outboxSending) remove(seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, seq)
}

// AdoptOutbox sends the stored outbox messages that this engine is not
// sending already. When several orchd processes share one store, each
// sends the messages it writes; the one that leads the outbox election
// (internal/cluster's Lead) calls AdoptOutbox when it becomes leader and
// when a peer leaves, so a dead peer's messages are sent. A message that
// a live peer is sending at that moment may be sent twice: the outbox is
// at-least-once, as on one node. It returns the number of messages it
// started sending.
func (e *Engine) AdoptOutbox() (int, error) {
	if e.store == nil {
		return 0, nil
	}
	var pending []persist.OutboxMessage
	if err := e.store.Outbox(func(m persist.OutboxMessage) bool { pending = append(pending, m); return true }); err != nil {
		return 0, fmt.Errorf("adopt outbox: %w", err)
	}
	n := 0
	for _, m := range pending {
		if e.damagedOutbox(m) {
			continue
		}
		if e.sendOutbox(m) {
			n++
		}
	}
	return n, nil
}
