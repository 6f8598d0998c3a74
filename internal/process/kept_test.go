package process

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process/interp"
)

// Ended in-memory instances are listed and described (their summary)
// for their end state's retention period, newest KeptMax per version,
// and forgotten by the sweep once it has passed or by a delete; with no
// retention nothing is kept.
func TestRetentionInMemory(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	clk := &retentionClock{now: t0}
	e, p := inMemoryApproval(t, Options{Clock: clk, Retention: 3 * time.Hour, KeptMax: 3}, `completed="PT1H"`)
	done := approvalEnded(t, e, p, "done", false)
	gone := approvalEnded(t, e, p, "gone", true)
	listed := func(state string) []mgmt.Instance {
		t.Helper()
		pg, err := e.QueryInstances(ctx, mgmt.Query{State: state})
		if err != nil {
			t.Fatal(err)
		}
		return pg.Instances
	}
	if got := listed(mgmt.StateCompleted); len(got) != 1 || got[0].ID != done || !got[0].InMemory || got[0].Version != p.Number ||
		len(got[0].Correlations) == 0 || got[0].Started.IsZero() || !got[0].LastActive.Equal(t0) {
		t.Fatalf("completed instances listed: %+v", got)
	}
	if got := listed(mgmt.StateTerminated); len(got) != 1 || got[0].ID != gone {
		t.Fatalf("terminated instances listed: %+v", got)
	}
	d, err := e.InstanceDetail(ctx, done)
	if err != nil || d.State != mgmt.StateCompleted || len(d.Actions) != 1 || d.Actions[0] != mgmt.Delete {
		t.Fatalf("detail of the completed instance: %+v %v", d, err)
	}
	for _, step := range []struct {
		at         time.Duration
		done, gone bool // still kept after the sweep
	}{
		{time.Hour - time.Second, true, true},
		{time.Hour, false, true},
		{3*time.Hour - time.Second, false, true},
		{3 * time.Hour, false, false},
	} {
		clk.set(t0.Add(step.at))
		if _, err := e.SweepRetention(ctx); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]bool{done: step.done, gone: step.gone} {
			_, err := e.InstanceDetail(ctx, id)
			if got := err == nil; got != want || (err != nil && !errors.Is(err, mgmt.ErrNotFound)) {
				t.Fatalf("at +%v: %s kept %v (%v), want %v", step.at, id, got, err, want)
			}
		}
	}
	for state, want := range map[string]float64{"completed": 1, "terminated": 1} {
		if got := testutil.ToFloat64(e.retentionCounter().WithLabelValues(p.Name.Local, state)); got != want {
			t.Errorf("orchd_retention_deleted_total{state=%q} = %v, want %v", state, got, want)
		}
	}
	// The newest KeptMax of a version; a delete forgets one.
	var ids []string
	for _, r := range []string{"r1", "r2", "r3", "r4", "r5"} {
		ids = append(ids, approvalEnded(t, e, p, r, false))
	}
	got := listed(mgmt.StateCompleted)
	if len(got) != 3 || got[0].ID != ids[4] || got[2].ID != ids[2] {
		t.Fatalf("kept %+v, want the newest 3 of %v, newest first", got, ids)
	}
	if err := e.Act(ctx, ids[3], mgmt.Delete); err != nil {
		t.Fatal(err)
	}
	if got := listed(mgmt.StateCompleted); len(got) != 2 {
		t.Fatalf("after a delete: %+v", got)
	}
	if err := e.Act(ctx, ids[3], mgmt.Delete); !errors.Is(err, mgmt.ErrNotFound) {
		t.Fatalf("deleting it again: %v", err)
	}
}

// inMemoryApproval is an engine with opts and the approval process
// deployed in memory, its deploy.xml carrying retention.
func inMemoryApproval(t *testing.T, opts Options, retention string) (*Engine, *interp.Version) {
	t.Helper()
	procs := approvalBundle(t, true, retention)
	e := NewEngine(opts)
	t.Cleanup(e.Close)
	if err := e.Deploy(procs...); err != nil {
		t.Fatal(err)
	}
	return e, procs[0]
}

// With the real clock, RunRetention's memory sweep forgets a completed
// instance's summary once its period has passed, not before.
func TestRetentionInMemoryRealClock(t *testing.T) {
	const keep = 300 * time.Millisecond
	e, p := inMemoryApproval(t, Options{RetentionEvery: 20 * time.Millisecond}, `completed="PT0.3S"`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.RunRetention(ctx, SweepMemory)
	id := approvalEnded(t, e, p, "real", false)
	d, err := e.InstanceDetail(ctx, id)
	if err != nil {
		t.Fatalf("the completed instance is not kept: %v", err)
	}
	ended := d.LastActive // when it ended, as the sweep reads it
	swept := e.retentionCounter().WithLabelValues(p.Name.Local, "completed")
	for testutil.ToFloat64(swept) == 0 {
		if time.Since(ended) > 10*time.Second {
			t.Fatal("the completed instance was not swept within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if d := time.Since(ended); d < keep {
		t.Fatalf("swept %v after it ended, before its %v", d, keep)
	}
	if _, err := e.InstanceDetail(ctx, id); !errors.Is(err, mgmt.ErrNotFound) {
		t.Fatalf("after the sweep: %v", err)
	}
}

// A failed in-memory exchange is kept with its fault; without retention
// nothing ended is kept.
func TestRetentionInMemoryFaulted(t *testing.T) {
	ctx := context.Background()
	down := func(*exchange.Endpoint) exchange.Partner {
		return exchange.PartnerFunc(func(ctx context.Context, c *exchange.Call) (*exchange.Message, error) {
			return nil, errors.New("partner down")
		})
	}
	for _, keep := range []time.Duration{0, time.Hour} {
		procs, err := loadBundle(filepath.Join(bundlesDir, "mgmt-flow"))
		if err != nil {
			t.Fatal(err)
		}
		e := NewEngine(Options{Partners: down, Retention: keep})
		if err := e.Deploy(procs...); err != nil {
			t.Fatal(err)
		}
		dispatch(t, e, procs[0], testReq("F-1", "1", ""))
		pg, err := e.QueryInstances(ctx, mgmt.Query{State: mgmt.StateFaulted})
		e.Close()
		if err != nil {
			t.Fatal(err)
		}
		if keep == 0 {
			if len(pg.Instances) != 0 {
				t.Errorf("no retention, yet kept: %+v", pg.Instances)
			}
			continue
		}
		if len(pg.Instances) != 1 || !strings.HasSuffix(pg.Instances[0].Fault, "}activityFailure") {
			t.Errorf("faulted instances kept: %+v", pg.Instances)
		}
	}
}
