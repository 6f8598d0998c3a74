package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// retentionClock is a Clock whose time moves only when set; its timers
// never fire (the tests sweep by hand, or use the real clock).
type retentionClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *retentionClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *retentionClock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

func (c *retentionClock) AfterFunc(time.Duration, func()) Timer { return stoppedTimer{} }

type stoppedTimer struct{}

func (stoppedTimer) Stop() bool { return true }

// storeEngine is an engine with opts on a fresh store, nothing
// deployed; both are closed when the test ends.
func storeEngine(t *testing.T, opts Options) (*Engine, *persist.Store) {
	t.Helper()
	st, err := persist.Open(filepath.Join(t.TempDir(), "orchd.db"), persist.Options{MaxBatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	opts.Store = st
	e := NewEngine(opts)
	t.Cleanup(e.Close)
	return e, st
}

// retentionEngine is a persistent engine on a fresh store with the
// approval process deployed, its deploy.xml carrying retention.
func retentionEngine(t *testing.T, opts Options, retention string) (*Engine, *persist.Store, *interp.Version) {
	t.Helper()
	e, st := storeEngine(t, opts)
	procs := approvalBundle(t, false, retention)
	if err := e.Deploy(procs...); err != nil {
		t.Fatal(err)
	}
	return e, st, procs[0]
}

// approvalBundle loads the approval process, in memory or not, its
// deploy.xml carrying orchd:retention's attributes retention.
func approvalBundle(t *testing.T, inMemory bool, retention string) []*interp.Version {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "order-approval")
	copyDir(t, "../../deploy/order-approval", dir)
	editFile(t, filepath.Join(dir, "deploy.xml"), "<in-memory>false</in-memory>",
		fmt.Sprintf(`<in-memory>%v</in-memory><o:retention xmlns:o="urn:orchd:deploy" %s/>`, inMemory, retention))
	procs, err := loadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	return procs
}

// approvalEnded creates approval id and ends it: decided (completed)
// or terminated by an operator.
func approvalEnded(t *testing.T, e *Engine, p *interp.Version, id string, terminate bool) string {
	t.Helper()
	if st, err := approvalCall(t, e, p, "requestApproval", map[string]string{"requestId": id, "amount": "1", "requester": "ann"}); err != nil || st != "PENDING" {
		t.Fatalf("request %s: %q %v", id, st, err)
	}
	pg, err := e.QueryInstances(context.Background(), mgmt.Query{Correlation: id})
	if err != nil || len(pg.Instances) != 1 {
		t.Fatalf("instance of %s: %v %v", id, pg, err)
	}
	iid := pg.Instances[0].ID
	if terminate {
		if err := e.Act(context.Background(), iid, mgmt.Terminate); err != nil {
			t.Fatal(err)
		}
	} else if st, err := approvalCall(t, e, p, "decide", map[string]string{"requestId": id, "approved": "true", "approver": "bob"}); err != nil || st != "APPROVED" {
		t.Fatalf("decide %s: %q %v", id, st, err)
	}
	return iid
}

// Retention deletes an ended instance once its end state's period has
// passed since it ended, and not a moment before: completed after the
// process's hour, terminated after the engine's default of three hours;
// a waiting instance never.
func TestRetentionFakeClock(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	clk := &retentionClock{now: t0}
	reg := prometheus.NewRegistry()
	e, st, p := retentionEngine(t, Options{Clock: clk, Retention: 3 * time.Hour, Registerer: reg}, `completed="PT1H" faulted="P1D"`)
	done := approvalEnded(t, e, p, "done", false)
	gone := approvalEnded(t, e, p, "gone", true)
	if st, err := approvalCall(t, e, p, "requestApproval", map[string]string{"requestId": "waits", "amount": "1", "requester": "ann"}); err != nil || st != "PENDING" {
		t.Fatalf("request: %q %v", st, err)
	}
	stored := func(id string) bool {
		_, _, err := st.Instance(id)
		if err != nil && !errors.Is(err, persist.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	for _, step := range []struct {
		at         time.Duration
		done, gone bool // still stored after the sweep
		swept      string
	}{
		{0, true, true, ""},
		{time.Hour - time.Second, true, true, ""},
		{time.Hour, false, true, "OrderApproval completed"},
		{3*time.Hour - time.Second, false, true, ""},
		{3 * time.Hour, false, false, "OrderApproval terminated"},
		{100 * time.Hour, false, false, ""},
	} {
		clk.set(t0.Add(step.at))
		swept, err := e.SweepRetention(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for k, n := range swept {
			if n != 1 {
				t.Errorf("at +%v: %d %s deleted, want 1", step.at, n, k)
			}
			got = append(got, k)
		}
		if strings.Join(got, ",") != step.swept {
			t.Errorf("at +%v: swept %v, want %q", step.at, got, step.swept)
		}
		if stored(done) != step.done || stored(gone) != step.gone {
			t.Fatalf("at +%v: completed stored %v (want %v), terminated stored %v (want %v)", step.at, stored(done), step.done, stored(gone), step.gone)
		}
	}
	if pg, err := e.QueryInstances(context.Background(), mgmt.Query{State: mgmt.StateWaiting}); err != nil || len(pg.Instances) != 1 {
		t.Fatalf("the waiting instance: %+v %v", pg, err)
	}
	for _, c := range []struct {
		state string
		want  float64
	}{{"completed", 1}, {"terminated", 1}, {"faulted", 0}} {
		if got := testutil.ToFloat64(e.retentionCounter().WithLabelValues("OrderApproval", c.state)); got != c.want {
			t.Errorf("orchd_retention_deleted_total{state=%q} = %v, want %v", c.state, got, c.want)
		}
	}
	if n, err := testutil.GatherAndCount(reg, "orchd_retention_deleted_total"); err != nil || n == 0 {
		t.Errorf("the metric is not registered: %d %v", n, err)
	}
}

// With the real clock and short periods, RunRetention's sweeps delete a
// completed instance once its period has passed, not before.
func TestRetentionRealClock(t *testing.T) {
	const keep = 300 * time.Millisecond
	e, st, p := retentionEngine(t, Options{RetentionEvery: 20 * time.Millisecond}, `completed="PT0.3S"`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.RunRetention(ctx, SweepAll)
	id := approvalEnded(t, e, p, "real", false)
	rec, _, err := st.Instance(id)
	if err != nil {
		t.Fatalf("the completed instance is not stored: %v", err)
	}
	ended := rec.Updated // when it ended, as the sweep reads it
	for {
		_, _, err := st.Instance(id)
		if errors.Is(err, persist.ErrNotFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(ended) > 10*time.Second {
			t.Fatal("the completed instance was not deleted within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if d := time.Since(ended); d < keep {
		t.Fatalf("deleted %v after it ended, before its %v", d, keep)
	}
}

// editFile replaces old by new in file, failing when old is absent.
func editFile(t *testing.T, file, old, new string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s has no %q", file, old)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}
