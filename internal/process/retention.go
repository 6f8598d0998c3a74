package process

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// Retention: ended persistent instances (completed, faulted,
// terminated) stay in the store, for listings and details, as long as
// their process's orchd:retention says for their end state (deploy.xml;
// Options.Retention where it says nothing; zero: until an operator
// deletes them), counted from their last change (the record's Updated,
// the end). Ended in-memory instances leave a summary for as long
// (kept.go; zero: none). RunRetention sweeps the store every RetentionEvery and
// deletes what is due, RetentionBatch instances per store transaction,
// each under its instance's lock taken without waiting (an instance an
// operator holds is left for the next sweep), so a sweep never holds the
// store or a lock for long. In a cluster one node sweeps: the one that
// leads the outbox election (internal/clusternode). ODE's <cleanup>
// still deletes an instance at its end, before any retention.

const (
	// DefaultRetentionEvery is how often RunRetention sweeps when
	// Options.RetentionEvery is zero.
	DefaultRetentionEvery = time.Minute
	// RetentionBatch is the most instances one store transaction of a
	// sweep deletes.
	RetentionBatch = 64
	// retentionMax is the most instances one sweep deletes; the rest
	// are the next sweep's.
	retentionMax = 10000
)

// retention is the engine's sweep state (its metric, made once).
type retention struct {
	once    sync.Once
	deleted *prometheus.CounterVec
}

// counter is the deleted-instances series, registered on first use.
func (e *Engine) retentionCounter() *prometheus.CounterVec {
	r := &e.retain
	r.once.Do(func() {
		r.deleted = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "orchd_retention_deleted_total",
			Help: "Ended instances the retention sweep deleted (persistent: from the store; in-memory: their kept summaries), by process and end state (completed, faulted, terminated).",
		}, []string{"process", "state"})
		if e.opts.Registerer != nil {
			e.opts.Registerer.MustRegister(r.deleted)
		}
	})
	return r.deleted
}

// keepFor is how long an instance of p (nil: a process not deployed)
// that ended in state st is kept; zero keeps it.
func (e *Engine) keepFor(p *interp.Version, st persist.State) time.Duration {
	var d time.Duration
	if p != nil {
		switch st {
		case persist.Completed:
			d = p.Retention.Completed
		case persist.Faulted:
			d = p.Retention.Faulted
		case persist.Terminated:
			d = p.Retention.Terminated
		}
	}
	if d == 0 {
		d = e.opts.Retention
	}
	return d
}

// retains reports whether anything is kept for a time at all: the
// default or a version's orchd:retention (else a sweep reads nothing).
func (e *Engine) retains() bool {
	if e.opts.Retention > 0 {
		return true
	}
	for _, p := range append(e.Retired(), e.Processes()...) {
		if r := p.Retention; !p.InMemory && (r.Completed > 0 || r.Faulted > 0 || r.Terminated > 0) {
			return true
		}
	}
	return false
}

// Swept counts what one sweep deleted, by "process state" (the
// process's local name).
type Swept map[string]int

// Sweep says what a retention sweep deletes.
type Sweep int

const (
	// SweepMemory forgets this node's ended in-memory instances'
	// summaries (kept.go): every node of a cluster sweeps its own.
	SweepMemory Sweep = 1 << iota
	// SweepStore deletes ended persistent instances from the store: one
	// node of a cluster sweeps.
	SweepStore
	// SweepAll is both: a single node.
	SweepAll = SweepMemory | SweepStore
)

// SweepRetention deletes the ended instances whose retention has run
// out by the engine's clock: in-memory summaries, and stored instances,
// at most retentionMax, RetentionBatch per store transaction.
func (e *Engine) SweepRetention(ctx context.Context) (Swept, error) {
	return e.sweep(ctx, SweepAll)
}

// sweep is SweepRetention of what.
func (e *Engine) sweep(ctx context.Context, what Sweep) (Swept, error) {
	swept := Swept{}
	now := e.now()
	if what&SweepMemory != 0 {
		e.sweepKept(now, swept)
	}
	if what&SweepStore == 0 || e.store == nil || !e.retains() {
		return swept, nil
	}
	vi := e.versions()
	type due struct {
		id, process, local string
		state              persist.State
	}
	var list []due
	err := e.store.Instances(func(rec *persist.Instance) bool {
		if rec.Err != nil || (rec.State != persist.Completed && rec.State != persist.Faulted && rec.State != persist.Terminated) {
			return true
		}
		p := vi.of(rec.Process, rec.Frames)
		keep := e.keepFor(p, rec.State)
		if keep <= 0 || now.Sub(rec.Updated) < keep {
			return true
		}
		local := rec.Process
		if p != nil {
			local = p.Name.Local
		}
		list = append(list, due{rec.ID, rec.Process, local, rec.State})
		return len(list) < retentionMax
	})
	if err != nil {
		return swept, fmt.Errorf("retention: list instances: %w", err)
	}
	counter := e.retentionCounter()
	for len(list) > 0 && ctx.Err() == nil {
		n := min(len(list), RetentionBatch)
		batch := list[:n]
		list = list[n:]
		var cps []*persist.Checkpoint
		var locks []*idLock
		var taken []due
		for _, d := range batch {
			m := e.stripes.of(d.id)
			if !m.TryLock() {
				m.unref() // a run or an operator holds it: the next sweep
				continue
			}
			locks = append(locks, m)
			taken = append(taken, d)
			cps = append(cps, &persist.Checkpoint{Instance: persist.Instance{ID: d.id}, Delete: true})
		}
		if len(cps) == 0 {
			continue
		}
		err := e.store.Commit(cps...)
		for _, m := range locks {
			m.Unlock()
		}
		if err != nil {
			return swept, fmt.Errorf("retention: delete %d instances: %w", len(cps), err)
		}
		for _, d := range taken {
			swept[d.local+" "+d.state.String()]++
			counter.WithLabelValues(d.local, d.state.String()).Inc()
		}
	}
	return swept, nil
}

// RunRetention sweeps what every Options.RetentionEvery (by the
// engine's clock) until ctx ends. A failed sweep is logged and tried
// again at the next.
func (e *Engine) RunRetention(ctx context.Context, what Sweep) {
	every := e.opts.RetentionEvery
	if every <= 0 {
		every = DefaultRetentionEvery
	}
	for {
		tick := make(chan struct{})
		t := e.clock().AfterFunc(every, func() { close(tick) })
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-tick:
		}
		swept, err := e.sweep(ctx, what)
		if err != nil {
			e.log.Warn("retention sweep", slog.Any("err", err))
		}
		for k, n := range swept {
			e.log.Info("retention: ended instances deleted", slog.String("what", k), slog.Int("instances", n))
		}
	}
}
