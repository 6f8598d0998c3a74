package mgmtbackend

import (
	"testing"
	"time"
)

func TestCountersRate(t *testing.T) {
	start := time.Now().Add(-4 * time.Second)
	c := &counters{started: start}
	n := c.sample(8)
	if n.Exchanges != 8 || n.InFlight != -1 || n.UptimeSeconds < 4 || !n.Started.Equal(start) {
		t.Fatalf("sample %+v", n)
	}
	// 8 exchanges over at least 4 seconds since the start.
	if n.TxPerSec <= 0 || n.TxPerSec > 2 {
		t.Fatalf("rate %v, want in (0, 2]", n.TxPerSec)
	}
}
