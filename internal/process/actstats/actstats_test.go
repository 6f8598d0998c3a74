package actstats

import (
	"sync"
	"testing"
	"time"
)

func TestBuckets(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 1023, 1024, 1500, 2047, 2048, time.Millisecond, 1234567, time.Second, time.Hour, 100 * time.Hour} {
		i := bucket(d)
		if i < 0 || i >= numBuckets {
			t.Fatalf("%v: bucket %d", d, i)
		}
		if up := upper(i); uint64(d) >= up && i != numBuckets-1 {
			t.Errorf("%v: bucket %d's upper bound %d is not above it", d, i, up)
		}
		if i > 0 && i != numBuckets-1 {
			lo := upper(i - 1)
			if uint64(d) < lo || float64(upper(i)) > 1.25*float64(lo)+1 {
				t.Errorf("%v: bucket %d is [%d, %d): more than 25%% wide or not holding it", d, i, lo, upper(i))
			}
		}
	}
}

func TestQuantile(t *testing.T) {
	tests := []struct {
		name     string
		times    []time.Duration
		q        float64
		min, max time.Duration
	}{
		{"none", nil, 0.99, 0, 0},
		{"one", []time.Duration{3 * time.Millisecond}, 0.99, 3 * time.Millisecond, 3750 * time.Microsecond},
		{"99 fast, 1 slow: p99 is fast", append(repeat(time.Millisecond, 99), time.Second), 0.99, time.Millisecond, 1250 * time.Microsecond},
		{"98 fast, 2 slow: p99 is slow", append(repeat(time.Millisecond, 98), time.Second, time.Second), 0.99, time.Second, 1250 * time.Millisecond},
		{"median", []time.Duration{time.Microsecond, 10 * time.Microsecond, time.Millisecond}, 0.5, 10 * time.Microsecond, 12500 * time.Nanosecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab := New(3)
			for _, d := range tt.times {
				tab.Record(1, d)
			}
			got := time.Duration(tab[1].Quantile(tt.q))
			if got < tt.min || got > tt.max {
				t.Errorf("quantile %v = %v, want in [%v, %v]", tt.q, got, tt.min, tt.max)
			}
			if tab[1].Count.Load() != uint64(len(tt.times)) || tab[0].Count.Load() != 0 {
				t.Errorf("counts %d, %d", tab[1].Count.Load(), tab[0].Count.Load())
			}
		})
	}
}

func TestOutOfRangeAndConcurrent(t *testing.T) {
	tab := New(2)
	tab.Record(-1, time.Second)
	tab.Record(2, time.Second)
	tab.Fault(5)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				tab.Record(0, time.Millisecond)
				tab.Fault(0)
			}
		})
	}
	wg.Wait()
	if c, f := tab[0].Count.Load(), tab[0].Faults.Load(); c != 8000 || f != 8000 {
		t.Errorf("count %d, faults %d, want 8000 each", c, f)
	}
	if tab[1].Count.Load() != 0 || tab[1].Quantile(0.99) != 0 {
		t.Error("an activity never recorded has statistics")
	}
}

func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}
