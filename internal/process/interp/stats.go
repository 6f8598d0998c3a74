package interp

import (
	"cmp"
	"slices"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process/plan"
)

// procStats are a process version's counters since it was deployed.
type procStats struct {
	Started, completed, faulted, terminated, Suspended atomic.Uint64
	exchanges, exchangeNanos                           atomic.Uint64
}

// Ended counts an instance that ended (or was suspended) with res.
func (s *procStats) Ended(res Result) {
	switch res {
	case ResCompleted:
		s.completed.Add(1)
	case ResExited:
		s.terminated.Add(1)
	case ResSuspended:
		s.Suspended.Add(1)
	case ResHandled, ResFaulted, ResFailed:
		s.faulted.Add(1)
	}
}

// Exchange counts an exchange served by the version, from when it was
// received (or dispatched, or start when neither is set) to now.
func (s *procStats) Exchange(ex *exchange.Exchange, start time.Time) {
	if !ex.Received.IsZero() {
		start = ex.Received
	} else if !ex.Dispatched.IsZero() {
		start = ex.Dispatched
	}
	s.exchanges.Add(1)
	if !start.IsZero() {
		s.exchangeNanos.Add(uint64(time.Since(start)))
	}
}

// Snapshot is the version's counters, for the management API.
func (s *procStats) Snapshot() mgmt.Stats {
	return mgmt.Stats{
		Started: s.Started.Load(), Completed: s.completed.Load(), Faulted: s.faulted.Load(),
		Terminated: s.terminated.Load(), Suspended: s.Suspended.Load(),
		Exchanges: s.exchanges.Load(), ExchangeNanos: s.exchangeNanos.Load(),
	}
}

// DeployedNow sets Deployed to now unless it is set.
func (p *Version) DeployedNow() {
	if p.Deployed.IsZero() {
		p.Deployed = time.Now()
	}
}

// sampler times the activities of one sampled instance: when each
// running activity started, by thread and stack depth. During a run
// whose span is sampled it also gives each activity a span
// (actspans.go).
type sampler struct {
	marks []startMark
	// tr is set during a traced run (TraceActivities), nil otherwise.
	tr *actTracer
}

type startMark struct {
	t     *thread
	depth int
	act   int
	at    time.Time
	// handed marks an activity that completed by handing its frame to
	// its last child (a sequence): it ends when that child ends.
	handed bool
	// a is the activity, and span its span in a traced run (nil
	// otherwise, and for constructs the compiler made).
	a    plan.Activity
	span trace.Span
}

// Timed reports whether the instance is timed per activity; SetTimed
// times it from now on (a sampled stored instance, run again).
func (in *Instance) Timed() bool { return in.timing != nil }
func (in *Instance) SetTimed()   { in.timing = cmp.Or(in.timing, &sampler{}) }

// begin notes that act starts at depth of t's stack.
func (s *sampler) begin(t *thread, depth int, act plan.Activity) {
	m := startMark{t: t, depth: depth, act: act.ID(), at: time.Now(), a: act}
	if s.tr != nil {
		m.span = s.tr.start(act, m.at)
	}
	s.marks = append(s.marks, m)
}

// find returns the index of the mark of act at depth of t's stack, or -1
// when its start was not seen (e.g. it started before a restart).
func (s *sampler) find(t *thread, depth, act int, handed bool) int {
	for i := len(s.marks) - 1; i >= 0; i-- {
		if m := &s.marks[i]; m.t == t && m.depth == depth && m.act == act && m.handed == handed {
			return i
		}
	}
	return -1
}

// end records the completion of act at depth of t's stack, and of the
// activities that handed their frame down to it.
func (s *sampler) end(p *Version, t *thread, depth int, act plan.Activity) {
	now := time.Now()
	record := func(i int) {
		m := s.marks[i]
		p.ActStats.Record(m.act, now.Sub(m.at))
		if m.span != nil {
			m.span.End(trace.WithTimestamp(now))
		}
		s.marks = slices.Delete(s.marks, i, i+1)
	}
	i := s.find(t, depth, act.ID(), false)
	if i < 0 {
		return
	}
	record(i)
	for i := len(s.marks) - 1; i >= 0; i-- {
		if m := s.marks[i]; m.t == t && m.depth == depth && m.handed {
			record(i)
		}
	}
}

// stepped records what one step of t's top frame did: it completed
// (done), started a child (push), or handed its frame to its last child
// (both).
func (s *sampler) stepped(p *Version, t *thread, act, push plan.Activity, done bool) {
	depth := len(t.stack) - 1
	switch {
	case done && push != nil:
		if i := s.find(t, depth, act.ID(), false); i >= 0 {
			s.marks[i].handed = true
		}
		s.begin(t, depth, push)
	case done:
		s.end(p, t, depth, act)
	case push != nil:
		s.begin(t, depth+1, push)
	}
}
