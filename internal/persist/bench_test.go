package persist

import (
	"bytes"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkCommit measures one checkpoint per Commit of the size a
// purchase-order exchange produces (instance record, two changed variables,
// a route), alone and from 64 goroutines (with the default 10ms group-commit
// window and with 1ms), with and without fsync. It reports
// checkpoints per write transaction and the store's own commit rate.
func BenchmarkCommit(b *testing.B) {
	for _, sync := range []bool{true, false} {
		for _, c := range []struct {
			par   int
			delay time.Duration
		}{{1, 0}, {64, 0}, {64, time.Millisecond}} {
			par := c.par
			name := fmt.Sprintf("fsync=%v/par=%d", sync, par)
			if c.delay > 0 {
				name += fmt.Sprintf("/delay=%v", c.delay)
			}
			b.Run(name, func(b *testing.B) {
				ts := newTestStore(b, Options{NoSync: !sync, MaxBatchDelay: c.delay})
				payload := bytes.Repeat([]byte("<line sku='x' qty='1'/>"), 40) // ~1KB
				var n atomic.Int64
				cp := func() *Checkpoint {
					i := n.Add(1)
					id := fmt.Sprintf("%020d", i)
					return &Checkpoint{
						Instance:  Instance{ID: id, Process: "{urn:po}PurchaseOrder", State: Waiting, Frames: make([]byte, 64)},
						Vars:      map[int][]byte{0: payload, 1: payload[:200]},
						AddRoutes: []Route{{Key: "ship|" + id}},
					}
				}
				b.ReportAllocs()
				start := time.Now()
				if par == 1 {
					for b.Loop() {
						if err := ts.Commit(cp()); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					// RunParallel starts parallelism * GOMAXPROCS goroutines.
					b.SetParallelism(max(1, par/runtime.GOMAXPROCS(0)))
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := ts.Commit(cp()); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				el := time.Since(start)
				st := ts.Stats()
				b.ReportMetric(float64(st.Checkpoints)/el.Seconds(), "checkpoints/s")
				b.ReportMetric(float64(st.Commits)/el.Seconds(), "txs/s")
				b.ReportMetric(float64(st.Checkpoints)/float64(max(st.Commits, 1)), "cps/tx")
				b.ReportMetric(float64(st.BytesWritten)/float64(max(st.Checkpoints, 1)), "B/cp")
			})
		}
	}
}
