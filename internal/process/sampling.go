package process

import (
	"sync"
	"sync/atomic"

	"github.com/orchd/orchd/internal/process/interp"
)

// Sampling: which instances are timed per activity for the outline and
// the diagram (mgmt_processes.go). The first SampleFirst instances of
// every version are, so a version's picture shows something from its
// first requests; after them one in Options.SampleEvery. A timed
// instance is timed in every run it has: an in-memory one keeps its
// sampler between runs, and a persistent one, which each run loads
// afresh from the store, is found in the engine's sampledSet by id.
//
// That set is memory only: after a restart the persistent instances
// timed before it are not any more (the statistics they fed start from
// zero too, and recording it in every checkpoint would change the
// checkpoint format for a statistic); the first SampleFirst instances
// each version starts after the restart are timed again.

// SampleFirst is how many instances each version times before it
// samples one in Options.SampleEvery, unless Options.SampleFirst says.
const SampleFirst = 16

// maxSampledLive bounds the persistent timed instances the engine
// remembers between their runs; a timed instance beyond it is timed in
// its first run only.
const maxSampledLive = 10000

// sample reports whether the n-th instance of a version is timed.
func (e *Engine) sample(n uint64) bool {
	every := e.sampleEvery()
	return every > 0 && (n <= e.sampleFirst() || n%every == 0)
}

// sampleFirst is how many instances of a version are timed first.
func (e *Engine) sampleFirst() uint64 {
	switch n := e.opts.SampleFirst; {
	case n == 0:
		return SampleFirst
	case n < 0:
		return 0
	default:
		return uint64(n)
	}
}

// sampledSet holds the ids of the timed persistent instances that wait
// for their next run. Its zero value is empty.
type sampledSet struct {
	// n is len(ids), read without the lock: a load finds an empty set
	// without taking it.
	n   atomic.Int32
	mu  sync.Mutex
	ids map[string]struct{}
}

// note records whether the run of in that just ended leaves a timed
// persistent instance waiting for another run (waiting) or ends its
// timing.
func (s *sampledSet) note(in *interp.Instance, waiting bool) {
	if in.Version().InMemory || in.ID() == "" || !in.Timed() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !waiting:
		delete(s.ids, in.ID())
	case len(s.ids) < maxSampledLive:
		if s.ids == nil {
			s.ids = map[string]struct{}{}
		}
		s.ids[in.ID()] = struct{}{}
	}
	s.n.Store(int32(len(s.ids)))
}

// resume times in, loaded for a run, when it was timed before.
func (s *sampledSet) resume(in *interp.Instance) {
	if s.n.Load() == 0 {
		return
	}
	s.mu.Lock()
	_, ok := s.ids[in.ID()]
	s.mu.Unlock()
	if ok {
		in.SetTimed()
	}
}
