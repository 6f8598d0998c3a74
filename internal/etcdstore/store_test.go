package etcdstore_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/etcdstore"
	"github.com/orchd/orchd/internal/etcdtest"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process"
)

// store is what the tests use of both implementations.
type store interface {
	process.Store
	Stats() persist.Stats
	Close() error
}

var (
	_ store = (*persist.Store)(nil)
	_ store = (*etcdstore.Store)(nil)
)

// impls opens a fresh store of each implementation; the etcd ones share
// one embedded member, each under its own prefix.
func impls(t *testing.T) []struct {
	name string
	open func(t *testing.T) store
} {
	c := etcdtest.Start(t, 1)
	n := 0
	var mu sync.Mutex
	return []struct {
		name string
		open func(t *testing.T) store
	}{
		{"bbolt", func(t *testing.T) store {
			st, err := persist.Open(filepath.Join(t.TempDir(), "orchd.db"), persist.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
		{"etcd", func(t *testing.T) store {
			mu.Lock()
			n++
			prefix := fmt.Sprintf("/orchd/test%d", n)
			mu.Unlock()
			st, err := etcdstore.Open(etcdstore.Options{Endpoints: c.Endpoints(), Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
	}
}

func inst(id string, st persist.State) persist.Instance {
	return persist.Instance{
		ID: id, Process: "{urn:po}PurchaseOrder", State: st,
		Created: time.Unix(1700000000, 123456789), Updated: time.Unix(1700000001, 5),
		Frames:       []byte{1, 2, 3, 0, 255},
		Correlations: map[string]string{"order": "po-42", "customer": "c\x00-7"},
	}
}

func commit(t *testing.T, st store, cps ...*persist.Checkpoint) {
	t.Helper()
	if err := st.Commit(cps...); err != nil {
		t.Fatal(err)
	}
}

func routesOf(t *testing.T, st store, keys ...string) []string {
	t.Helper()
	var out []string
	for _, k := range keys {
		id, ok, err := st.Route(k)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			out = append(out, k+"="+id)
		}
	}
	return out
}

func timers(t *testing.T, st store) []persist.Timer {
	t.Helper()
	var out []persist.Timer
	if err := st.Timers(func(tm persist.Timer) bool { out = append(out, tm); return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

func outbox(t *testing.T, st store) []uint64 {
	t.Helper()
	var out []uint64
	if err := st.Outbox(func(m persist.OutboxMessage) bool { out = append(out, m.Seq); return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBothStores runs the same behaviour checks against the bbolt store and
// the etcd store: they must not be told apart.
func TestBothStores(t *testing.T) {
	checks := []struct {
		name string
		run  func(t *testing.T, st store)
	}{
		{"InstanceAndVars", func(t *testing.T, st store) {
			in := inst("A1", persist.Waiting)
			commit(t, st, &persist.Checkpoint{Instance: in, Vars: map[int][]byte{1: []byte("<a/>"), 7: []byte("<b/>")}})
			commit(t, st, &persist.Checkpoint{Instance: in, Vars: map[int][]byte{1: nil, 2: []byte("<c/>")}})
			got, vars, err := st.Instance("A1")
			if err != nil {
				t.Fatal(err)
			}
			if got.Process != in.Process || got.State != in.State || !got.Created.Equal(in.Created) ||
				!reflect.DeepEqual(got.Frames, in.Frames) || !reflect.DeepEqual(got.Correlations, in.Correlations) {
				t.Fatalf("instance = %+v, want %+v", got, in)
			}
			want := map[int][]byte{2: []byte("<c/>"), 7: []byte("<b/>")}
			if !reflect.DeepEqual(vars, want) {
				t.Fatalf("vars = %v, want %v", vars, want)
			}
			if _, _, err := st.Instance("nope"); !errors.Is(err, persist.ErrNotFound) {
				t.Fatalf("missing instance: %v, want ErrNotFound", err)
			}
			var ids []string
			if err := st.Instances(func(in *persist.Instance) bool { ids = append(ids, in.ID); return true }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids, []string{"A1"}) {
				t.Fatalf("Instances = %v", ids)
			}
		}},
		{"RoutesConflict", func(t *testing.T, st store) {
			a, b := inst("A", persist.Waiting), inst("B", persist.Waiting)
			commit(t, st, &persist.Checkpoint{Instance: a, AddRoutes: []persist.Route{{Key: "k1"}, {Key: "k2"}}})
			err := st.Commit(&persist.Checkpoint{Instance: b, Vars: map[int][]byte{1: []byte("x")}, AddRoutes: []persist.Route{{Key: "k3"}, {Key: "k2"}}})
			if !errors.Is(err, persist.ErrConflict) {
				t.Fatalf("conflicting route: %v, want ErrConflict", err)
			}
			if _, _, err := st.Instance("B"); !errors.Is(err, persist.ErrNotFound) {
				t.Fatalf("conflicting commit left instance B: %v", err)
			}
			// Re-binding one's own key is no conflict; removing a key of
			// another instance leaves it bound.
			commit(t, st, &persist.Checkpoint{Instance: a, RemoveRoutes: []persist.Route{{Key: "k1"}}, AddRoutes: []persist.Route{{Key: "k1"}}})
			commit(t, st, &persist.Checkpoint{Instance: b, RemoveRoutes: []persist.Route{{Key: "k2"}}, AddRoutes: []persist.Route{{Key: "k3"}}})
			if got, want := routesOf(t, st, "k1", "k2", "k3"), []string{"k1=A", "k2=A", "k3=B"}; !slices.Equal(got, want) {
				t.Fatalf("routes %v, want %v", got, want)
			}
			commit(t, st, &persist.Checkpoint{Instance: a, RemoveRoutes: []persist.Route{{Key: "k2"}}})
			commit(t, st, &persist.Checkpoint{Instance: b, AddRoutes: []persist.Route{{Key: "k2"}}})
			if got, want := routesOf(t, st, "k1", "k2", "k3"), []string{"k1=A", "k2=B", "k3=B"}; !slices.Equal(got, want) {
				t.Fatalf("routes %v, want %v", got, want)
			}
		}},
		{"TimersInDueOrder", func(t *testing.T, st store) {
			t0 := time.Unix(1800000000, 0)
			commit(t, st,
				&persist.Checkpoint{Instance: inst("B", persist.Waiting), AddTimers: []persist.Timer{{Due: t0.Add(2 * time.Second), Tag: "x"}}},
				&persist.Checkpoint{Instance: inst("A", persist.Waiting), AddTimers: []persist.Timer{{Due: t0.Add(2 * time.Second), Tag: "y"}, {Due: time.Unix(-5, 0), Tag: "old"}}},
				&persist.Checkpoint{Instance: inst("C", persist.Waiting), AddTimers: []persist.Timer{{Due: t0, Tag: "z"}}})
			commit(t, st, &persist.Checkpoint{Instance: inst("C", persist.Waiting), RemoveTimers: []persist.Timer{{Due: t0, Tag: "z"}}})
			var got []string
			for _, tm := range timers(t, st) {
				got = append(got, fmt.Sprintf("%d/%s/%s", tm.Due.Unix(), tm.InstanceID, tm.Tag))
			}
			want := []string{"-5/A/old", "1800000002/A/y", "1800000002/B/x"}
			if !slices.Equal(got, want) {
				t.Fatalf("timers %v, want %v", got, want)
			}
			its, err := st.InstanceTimers("A")
			if err != nil || len(its) != 2 || its[0].Tag != "old" {
				t.Fatalf("InstanceTimers(A) = %v, %v", its, err)
			}
		}},
		{"OutboxSeqAndAck", func(t *testing.T, st store) {
			cp1 := &persist.Checkpoint{Instance: inst("A", persist.Running),
				Outbox: []persist.OutboxMessage{{Partner: "erp", Operation: "ship", Payload: []byte("<p/>")}, {Partner: "crm", Operation: "tell"}}}
			cp2 := &persist.Checkpoint{Instance: inst("B", persist.Running), Outbox: []persist.OutboxMessage{{Partner: "erp", Operation: "ship"}}}
			commit(t, st, cp1, cp2)
			seqs := []uint64{cp1.Outbox[0].Seq, cp1.Outbox[1].Seq, cp2.Outbox[0].Seq}
			if seqs[0] == 0 || seqs[0] >= seqs[1] || seqs[1] >= seqs[2] {
				t.Fatalf("seqs %v not increasing from 1", seqs)
			}
			if got := outbox(t, st); !slices.Equal(got, seqs) {
				t.Fatalf("outbox %v, want %v", got, seqs)
			}
			var m0 persist.OutboxMessage
			st.Outbox(func(m persist.OutboxMessage) bool { m0 = m; return false })
			if m0.InstanceID != "A" || m0.Partner != "erp" || string(m0.Payload) != "<p/>" {
				t.Fatalf("first outbox message %+v", m0)
			}
			if err := st.AckOutbox(seqs[1]); err != nil {
				t.Fatal(err)
			}
			if err := st.AckOutbox(999); err != nil {
				t.Fatalf("ack of unknown seq: %v", err)
			}
			if got := outbox(t, st); !slices.Equal(got, []uint64{seqs[0], seqs[2]}) {
				t.Fatalf("after ack %v", got)
			}
			cp3 := &persist.Checkpoint{Instance: inst("A", persist.Running), Outbox: []persist.OutboxMessage{{Partner: "p", Operation: "o"}}}
			commit(t, st, cp3)
			if cp3.Outbox[0].Seq <= seqs[2] {
				t.Fatalf("seq reused: %d after %d", cp3.Outbox[0].Seq, seqs[2])
			}
		}},
		{"DeleteRemovesEverything", func(t *testing.T, st store) {
			due := time.Unix(1800000000, 0)
			commit(t, st, &persist.Checkpoint{Instance: inst("A", persist.Waiting), Vars: map[int][]byte{1: []byte("v")},
				AddRoutes: []persist.Route{{Key: "ka"}}, AddTimers: []persist.Timer{{Due: due, Tag: "t"}}})
			commit(t, st, &persist.Checkpoint{Instance: inst("B", persist.Waiting), AddRoutes: []persist.Route{{Key: "kb"}},
				AddTimers: []persist.Timer{{Due: due, Tag: "t"}}})
			// Added and deleted in one commit, and deleted with an outbox message.
			commit(t, st,
				&persist.Checkpoint{Instance: inst("A", persist.Waiting), AddRoutes: []persist.Route{{Key: "ka2"}}},
				&persist.Checkpoint{Instance: persist.Instance{ID: "A"}, Delete: true, Outbox: []persist.OutboxMessage{{Partner: "p", Operation: "o"}}})
			if _, _, err := st.Instance("A"); !errors.Is(err, persist.ErrNotFound) {
				t.Fatalf("deleted instance: %v", err)
			}
			if got := routesOf(t, st, "ka", "ka2", "kb"); !slices.Equal(got, []string{"kb=B"}) {
				t.Fatalf("routes after delete %v", got)
			}
			if tm := timers(t, st); len(tm) != 1 || tm[0].InstanceID != "B" {
				t.Fatalf("timers after delete %v", tm)
			}
			if its, _ := st.InstanceTimers("A"); len(its) != 0 {
				t.Fatalf("index of deleted instance lists %v", its)
			}
			if ob := outbox(t, st); len(ob) != 1 {
				t.Fatalf("outbox of a deleted instance: %v", ob)
			}
			// A new instance may take the deleted one's key.
			commit(t, st, &persist.Checkpoint{Instance: inst("C", persist.Waiting), AddRoutes: []persist.Route{{Key: "ka"}}})
		}},
		{"InvalidCheckpoint", func(t *testing.T, st store) {
			err := st.Commit(&persist.Checkpoint{Instance: persist.Instance{ID: "A", State: 99}})
			if !errors.Is(err, persist.ErrInvalid) {
				t.Fatalf("invalid state: %v, want ErrInvalid", err)
			}
		}},
		{"ScanPaging", func(t *testing.T, st store) {
			var ids []string
			var cps []*persist.Checkpoint
			for i := range 25 {
				id := fmt.Sprintf("I%03d", i)
				ids = append(ids, id)
				cps = append(cps, &persist.Checkpoint{Instance: inst(id, persist.State(1+i%2))})
			}
			commit(t, st, cps...)
			var got []string
			sc := persist.Scan{Limit: 4, MaxScanned: 7}
			pages := 0
			for {
				res, err := st.ScanInstances(sc, func(v *persist.InstanceView) bool {
					if v.State == persist.Waiting {
						got = append(got, v.ID())
						return true
					}
					return false
				})
				if err != nil {
					t.Fatal(err)
				}
				pages++
				if res.Next == "" {
					break
				}
				sc.Before = res.Next
			}
			var want []string
			for i := len(ids) - 1; i >= 0; i-- {
				if i%2 == 1 {
					want = append(want, ids[i])
				}
			}
			if !slices.Equal(got, want) || pages < 3 {
				t.Fatalf("scan (%d pages) = %v, want %v", pages, got, want)
			}
			var ranged []string
			st.ScanInstances(persist.Scan{From: "I010", Before: "I014"}, func(v *persist.InstanceView) bool {
				ranged = append(ranged, v.ID())
				return true
			})
			if want := []string{"I013", "I012", "I011", "I010"}; !slices.Equal(ranged, want) {
				t.Fatalf("range scan %v, want %v", ranged, want)
			}
		}},
	}
	for _, impl := range impls(t) {
		for _, c := range checks {
			t.Run(impl.name+"/"+c.name, func(t *testing.T) { c.run(t, impl.open(t)) })
		}
	}
}

// TestGroupCommit: many concurrent commits share fewer etcd transactions,
// each call stays whole, and a conflicting call fails alone.
func TestGroupCommit(t *testing.T) {
	c := etcdtest.Start(t, 1)
	st, err := etcdstore.Open(etcdstore.Options{Endpoints: c.Endpoints(), Prefix: "/orchd/group", MaxBatchDelay: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	commit(t, st, &persist.Checkpoint{Instance: inst("OWNER", persist.Waiting), AddRoutes: []persist.Route{{Key: "taken"}}})
	before := st.Stats()
	const n = 64
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			cp := &persist.Checkpoint{Instance: inst(fmt.Sprintf("G%02d", i), persist.Waiting),
				Vars:      map[int][]byte{1: []byte("v")},
				AddRoutes: []persist.Route{{Key: fmt.Sprintf("r%d", i)}},
				Outbox:    []persist.OutboxMessage{{Partner: "p", Operation: "o"}}}
			if i == 7 {
				cp.AddRoutes = append(cp.AddRoutes, persist.Route{Key: "taken"})
			}
			errs[i] = st.Commit(cp)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if (i == 7) != (err != nil) {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	if !errors.Is(errs[7], persist.ErrConflict) {
		t.Fatalf("conflicting commit: %v", errs[7])
	}
	after := st.Stats()
	txns := after.Commits - before.Commits
	if after.Checkpoints-before.Checkpoints != n-1 || txns >= n-1 {
		t.Fatalf("%d checkpoints in %d transactions: no grouping", after.Checkpoints-before.Checkpoints, txns)
	}
	t.Logf("%d checkpoints in %d etcd transactions (%d reads)", n-1, txns, st.ReadTxns())
	if ob := outbox(t, st); len(ob) != n-1 || ob[0] != 1 || ob[len(ob)-1] != n-1 {
		t.Fatalf("outbox seqs %v, want 1..%d", ob, n-1)
	}
	if _, _, err := st.Instance("G07"); !errors.Is(err, persist.ErrNotFound) {
		t.Fatalf("conflicting checkpoint written: %v", err)
	}
}

// TestGroupSplitsAtTxnLimit: a group larger than etcd's max ops per
// transaction is split between calls, and a checkpoint that alone exceeds
// it fails with ErrInvalid.
func TestGroupSplitsAtTxnLimit(t *testing.T) {
	c := etcdtest.Start(t, 1)
	st, err := etcdstore.Open(etcdstore.Options{Endpoints: c.Endpoints(), Prefix: "/orchd/split", MaxTxnOps: 16, MaxBatchDelay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range 10 {
		wg.Go(func() {
			vars := map[int][]byte{}
			for j := range 5 {
				vars[j] = []byte("v")
			}
			errs[i] = st.Commit(&persist.Checkpoint{Instance: inst(fmt.Sprintf("S%d", i), persist.Waiting), Vars: vars})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	if s := st.Stats(); s.Checkpoints != 10 || s.Commits < 4 {
		t.Fatalf("10 checkpoints of 6 ops in %d transactions of at most 16 ops", s.Commits)
	}
	big := map[int][]byte{}
	for j := range 20 {
		big[j] = []byte("v")
	}
	if err := st.Commit(&persist.Checkpoint{Instance: inst("BIG", persist.Waiting), Vars: big}); !errors.Is(err, persist.ErrInvalid) {
		t.Fatalf("oversized checkpoint: %v, want ErrInvalid", err)
	}
}

// TestUnavailable: without quorum Commit fails with ErrUnavailable within
// the request timeout, and works again once etcd is back.
func TestUnavailable(t *testing.T) {
	c := etcdtest.Start(t, 1)
	st, err := etcdstore.Open(etcdstore.Options{Endpoints: c.Endpoints(), Prefix: "/orchd/down", RequestTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cp := func() *persist.Checkpoint {
		return &persist.Checkpoint{Instance: inst("U", persist.Waiting), AddRoutes: []persist.Route{{Key: "u"}}}
	}
	commit(t, st, cp())
	c.Stop(0)
	if err := st.Commit(cp()); !errors.Is(err, etcdstore.ErrUnavailable) {
		t.Fatalf("commit without etcd: %v, want ErrUnavailable", err)
	}
	c.Restart(0)
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := st.Commit(cp())
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("commit after etcd returned: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTwoStoresOnOnePrefix: two stores (two orchd nodes) committing to
// the same prefix at once get distinct outbox sequence numbers, and only
// one of them binds a contested route key: the comparisons inside the
// transaction hold across nodes.
func TestTwoStoresOnOnePrefix(t *testing.T) {
	c := etcdtest.Start(t, 1)
	var nodes [2]*etcdstore.Store
	for i := range nodes {
		st, err := etcdstore.Open(etcdstore.Options{Endpoints: c.Endpoints(), Prefix: "/orchd/shared"})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		nodes[i] = st
	}
	const per = 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	seqs := map[uint64]bool{}
	won := 0
	for n, st := range nodes {
		for i := range per {
			wg.Go(func() {
				cp := &persist.Checkpoint{Instance: inst(fmt.Sprintf("N%d-%02d", n, i), persist.Waiting),
					AddRoutes: []persist.Route{{Key: fmt.Sprintf("own-%d-%d", n, i)}},
					Outbox:    []persist.OutboxMessage{{Partner: "p", Operation: "o"}}}
				if err := st.Commit(cp); err != nil {
					t.Errorf("node %d commit %d: %v", n, i, err)
					return
				}
				contested := &persist.Checkpoint{Instance: inst(fmt.Sprintf("N%d-%02d", n, i), persist.Waiting),
					AddRoutes: []persist.Route{{Key: "contested"}}}
				err := st.Commit(contested)
				mu.Lock()
				defer mu.Unlock()
				if seqs[cp.Outbox[0].Seq] {
					t.Errorf("outbox seq %d handed out twice", cp.Outbox[0].Seq)
				}
				seqs[cp.Outbox[0].Seq] = true
				switch {
				case err == nil:
					won++
				case !errors.Is(err, persist.ErrConflict):
					t.Errorf("contested route: %v", err)
				}
			})
		}
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d instances bound the contested key, want 1", won)
	}
	if ob := outbox(t, nodes[0]); len(ob) != 2*per {
		t.Fatalf("outbox holds %d messages, want %d", len(ob), 2*per)
	}
}
