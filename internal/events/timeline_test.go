package events

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestTimelineBounds(t *testing.T) {
	// ev(i, n) is event number n of instance i (its Name says which).
	ev := func(inst, n int) Event {
		return Event{Kind: ActivityCompleted, Instance: fmt.Sprintf("i%d", inst), Name: fmt.Sprint(n)}
	}
	// end(i, n) is event n of instance i, its instanceCompleted.
	end := func(inst, n int) Event {
		e := ev(inst, n)
		e.Kind = InstanceCompleted
		return e
	}
	tests := []struct {
		name      string
		opts      TimelineOptions
		feed      []Event
		wantInst  int
		wantTotal int
		// want maps an instance to the Names of its kept events, oldest
		// first; nil means nothing kept.
		want map[string][]string
	}{
		{
			name:     "under the bounds everything is kept",
			opts:     TimelineOptions{Total: 10, PerInstance: 5},
			feed:     []Event{ev(1, 1), ev(2, 1), ev(1, 2)},
			wantInst: 2, wantTotal: 3,
			want: map[string][]string{"i1": {"1", "2"}, "i2": {"1"}},
		},
		{
			name:     "per-instance cap drops the instance's oldest",
			opts:     TimelineOptions{Total: 100, PerInstance: 3},
			feed:     []Event{ev(1, 1), ev(1, 2), ev(1, 3), ev(1, 4), ev(1, 5), ev(2, 1)},
			wantInst: 2, wantTotal: 4,
			want: map[string][]string{"i1": {"3", "4", "5"}, "i2": {"1"}},
		},
		{
			name:     "total cap evicts the instance first seen",
			opts:     TimelineOptions{Total: 4, PerInstance: 4},
			feed:     []Event{ev(1, 1), ev(1, 2), ev(2, 1), ev(2, 2), ev(3, 1)},
			wantInst: 2, wantTotal: 3,
			want: map[string][]string{"i1": nil, "i2": {"1", "2"}, "i3": {"1"}},
		},
		{
			name:     "an instance still active is evicted by age of first sight",
			opts:     TimelineOptions{Total: 3, PerInstance: 3},
			feed:     []Event{ev(1, 1), ev(2, 1), ev(1, 2), ev(3, 1)},
			wantInst: 2, wantTotal: 2,
			want: map[string][]string{"i1": nil, "i2": {"1"}, "i3": {"1"}},
		},
		{
			name:     "per-instance larger than total is cut to total",
			opts:     TimelineOptions{Total: 2, PerInstance: 50},
			feed:     []Event{ev(1, 1), ev(1, 2), ev(1, 3)},
			wantInst: 1, wantTotal: 2,
			want: map[string][]string{"i1": {"2", "3"}},
		},
		{
			name:     "an ended instance is evicted before an older live one",
			opts:     TimelineOptions{Total: 4, PerInstance: 4},
			feed:     []Event{ev(1, 1), ev(2, 1), end(2, 2), ev(3, 1), ev(3, 2)},
			wantInst: 2, wantTotal: 3,
			want: map[string][]string{"i1": {"1"}, "i2": nil, "i3": {"1", "2"}},
		},
		{
			name:     "ended instances go oldest ended first",
			opts:     TimelineOptions{Total: 4, PerInstance: 4},
			feed:     []Event{ev(1, 1), ev(2, 1), end(1, 2), end(2, 2), ev(3, 1)},
			wantInst: 2, wantTotal: 3,
			want: map[string][]string{"i1": nil, "i2": {"1", "2"}, "i3": {"1"}},
		},
		{
			name:     "an instance forgotten and seen again is kept as new",
			opts:     TimelineOptions{Total: 2, PerInstance: 2},
			feed:     []Event{ev(1, 1), ev(2, 1), ev(3, 1), ev(1, 2), ev(4, 1)},
			wantInst: 2, wantTotal: 2,
			want: map[string][]string{"i1": {"2"}, "i4": {"1"}},
		},
		{
			name:     "events of no instance are not kept",
			opts:     TimelineOptions{Total: 5},
			feed:     []Event{{Kind: InstanceCreated}},
			wantInst: 0, wantTotal: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := NewTimeline(tc.opts)
			// One at a time and in one batch must agree.
			for _, batched := range []bool{false, true} {
				if batched {
					tl = NewTimeline(tc.opts)
					_ = tl.Deliver(context.Background(), tc.feed)
				} else {
					for _, e := range tc.feed {
						_ = tl.Deliver(context.Background(), []Event{e})
					}
				}
				inst, total := tl.Len()
				if inst != tc.wantInst || total != tc.wantTotal {
					t.Errorf("batched=%v: kept %d instances, %d events; want %d, %d", batched, inst, total, tc.wantInst, tc.wantTotal)
				}
				for id, want := range tc.want {
					var got []string
					for _, e := range tl.Events(id) {
						got = append(got, e.Name)
					}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("batched=%v: %s kept %v, want %v", batched, id, got, want)
					}
				}
			}
		})
	}
}

func TestTimelineSubscribers(t *testing.T) {
	tl := NewTimeline(TimelineOptions{SubscriberQueue: 2})
	fast, cancelFast := tl.Subscribe()
	slow, cancelSlow := tl.Subscribe()
	defer cancelSlow()
	batch := func(n int) {
		t.Helper()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; i < n; i++ {
				_ = tl.Deliver(context.Background(), []Event{{Kind: InstanceCreated, Instance: fmt.Sprint(i)}})
			}
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Deliver blocked on a subscriber")
		}
	}
	batch(2)
	for i := 0; i < 2; i++ {
		if e := <-fast; e.Instance != fmt.Sprint(i) {
			t.Fatalf("fast got %q, want %d", e.Instance, i)
		}
	}
	// slow read nothing: its queue (2) is full, the next event drops it.
	batch(1)
	if e := <-fast; e.Instance != "0" {
		t.Fatalf("fast got %q after the slow one fell behind", e.Instance)
	}
	n := 0
	for range slow {
		n++
	}
	if n != 2 {
		t.Errorf("the dropped subscriber's channel held %d events before closing, want 2", n)
	}
	cancelFast()
	if _, ok := <-fast; ok {
		t.Error("cancel left the channel open")
	}
	cancelFast() // twice is harmless
	tl.Close()
	late, cancel := tl.Subscribe()
	defer cancel()
	if _, ok := <-late; ok {
		t.Error("a subscription after Close is open")
	}
}

// A busy process's 1,000 in-memory exchanges (each created, a few
// activities, completed) do not evict the events of an instance that
// waits, though they are far more than the timeline keeps; the bound
// holds and the newest exchanges are kept.
func TestTimelineBusyProcessKeepsWaitingInstance(t *testing.T) {
	tl := NewTimeline(TimelineOptions{Total: 500, PerInstance: 50})
	waiting := []Event{{Kind: InstanceCreated, Instance: "01PERSISTENT"}, {Kind: ActivityStarted, Instance: "01PERSISTENT", Name: "receive approve"}}
	_ = tl.Deliver(context.Background(), waiting)
	for i := 1; i <= 1000; i++ {
		id := fmt.Sprintf("m%d", i)
		_ = tl.Deliver(context.Background(), []Event{
			{Kind: InstanceCreated, Instance: id}, {Kind: ActivityCompleted, Instance: id, Name: "invoke"},
			{Kind: ActivityCompleted, Instance: id, Name: "reply"}, {Kind: InstanceCompleted, Instance: id}})
		if _, n := tl.Len(); n > 500 {
			t.Fatalf("after %d exchanges %d events are kept, over the bound of 500", i, n)
		}
	}
	if got := tl.Events("01PERSISTENT"); len(got) != 2 || got[1].Name != "receive approve" {
		t.Fatalf("the waiting instance's events: %+v", got)
	}
	if got := tl.Events("m1000"); len(got) != 4 {
		t.Errorf("the newest exchange's events: %+v", got)
	}
	if got := tl.Events("m1"); got != nil {
		t.Errorf("the oldest exchange is still kept: %+v", got)
	}
	if len(tl.order) > 2*len(tl.byID)+1024 || len(tl.ended) > 2*len(tl.byID)+1024 {
		t.Errorf("the eviction orders grew: %d and %d entries for %d instances", len(tl.order), len(tl.ended), len(tl.byID))
	}
}
