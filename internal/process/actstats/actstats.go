package actstats

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Buckets of the histogram: the first holds times under 1024 ns; then
// four buckets per doubling (each bucket's upper bound at most 25% over
// its lower), up to about 36 minutes; the last holds everything longer.
const (
	subBuckets = 4
	firstShift = 10 // 1024 ns
	octaves    = 31
	numBuckets = 1 + octaves*subBuckets
)

type histogram [numBuckets]atomic.Uint64

// Stat is one activity's statistics.
type Stat struct {
	// Count is how many times it completed in timed instances, Nanos
	// their summed time.
	Count, Nanos atomic.Uint64
	// Faults is how many times it faulted, in any instance.
	Faults atomic.Uint64
	hist   atomic.Pointer[histogram]
}

// Table holds the statistics of a version's activities, by plan
// activity id.
type Table []Stat

// New returns the table of a plan with n activities.
func New(n int) Table { return make(Table, n) }

// Record counts one completion of activity id that took d.
func (t Table) Record(id int, d time.Duration) {
	if id < 0 || id >= len(t) {
		return
	}
	s := &t[id]
	s.Count.Add(1)
	s.Nanos.Add(uint64(max(d, 0)))
	h := s.hist.Load()
	if h == nil {
		h = new(histogram)
		if !s.hist.CompareAndSwap(nil, h) {
			h = s.hist.Load()
		}
	}
	h[bucket(d)].Add(1)
}

// Fault counts a fault of activity id.
func (t Table) Fault(id int) {
	if id >= 0 && id < len(t) {
		t[id].Faults.Add(1)
	}
}

// bucket is the histogram bucket of d.
func bucket(d time.Duration) int {
	ns := uint64(max(d, 0))
	o := bits.Len64(ns) - 1 // ns is in [2^o, 2^(o+1))
	if o < firstShift {
		return 0
	}
	sub := int(ns>>(o-2)) & (subBuckets - 1)
	return min(1+(o-firstShift)*subBuckets+sub, numBuckets-1)
}

// upper is the upper bound of bucket i in nanoseconds.
func upper(i int) uint64 {
	if i == 0 {
		return 1 << firstShift
	}
	o, sub := firstShift+(i-1)/subBuckets, uint64((i-1)%subBuckets)
	return (subBuckets + sub + 1) << (o - 2)
}

// Quantile is the upper bound of the bucket holding the q-th quantile
// (0 < q <= 1) of the activity's timed completions, in nanoseconds: at
// most 25% over the true value. 0 when none was timed.
func (s *Stat) Quantile(q float64) uint64 {
	h := s.hist.Load()
	if h == nil {
		return 0
	}
	var counts [numBuckets]uint64
	var total uint64
	for i := range h {
		counts[i] = h[i].Load()
		total += counts[i]
	}
	if total == 0 {
		return 0
	}
	rank := uint64(q*float64(total) + 0.999999)
	var seen uint64
	for i, c := range counts {
		seen += c
		if seen >= max(rank, 1) {
			return upper(i)
		}
	}
	return upper(numBuckets - 1)
}
