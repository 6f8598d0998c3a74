package persist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func inst(id string, st State) Instance {
	return Instance{
		ID:           id,
		Process:      "{urn:po}PurchaseOrder",
		State:        st,
		Created:      time.Unix(1700000000, 123456789),
		Updated:      time.Unix(1700000001, 5),
		Frames:       []byte{1, 2, 3, 0, 255},
		Correlations: map[string]string{"order": "po-42", "customer": "c\x00-7"},
	}
}

func sameInstance(t *testing.T, got, want *Instance) {
	t.Helper()
	if got.ID != want.ID || got.Process != want.Process || got.State != want.State ||
		!got.Created.Equal(want.Created) || !got.Updated.Equal(want.Updated) ||
		string(got.Frames) != string(want.Frames) || got.Fault != want.Fault ||
		!maps.Equal(got.Correlations, want.Correlations) {
		t.Errorf("instance:\n got %+v\nwant %+v", *got, *want)
	}
}

func TestStateString(t *testing.T) {
	for s := Running; s <= Suspended; s++ {
		got, err := ParseState(s.String())
		if err != nil || got != s {
			t.Errorf("ParseState(%q) = %v, %v", s.String(), got, err)
		}
	}
	if got := State(0).String(); got != "state(0)" {
		t.Errorf("State(0) = %q", got)
	}
	if _, err := ParseState("Running"); err == nil {
		t.Error("ParseState is case-insensitive")
	}
}

func TestInstanceCodec(t *testing.T) {
	tests := []struct {
		name string
		in   Instance
	}{
		{"full", inst("a", Waiting)},
		{"minimal", Instance{ID: "b", State: Running, Created: time.Unix(0, 1), Updated: time.Unix(0, 2)}},
		{"faulted", Instance{ID: "c", State: Faulted, Fault: "{urn:x}boom: partner said no", Created: time.Unix(-5, 0), Updated: time.Unix(9e9, 0)}},
		{"big frames", Instance{ID: "d", State: Suspended, Frames: make([]byte, 1<<20), Created: time.Unix(1, 0), Updated: time.Unix(1, 0)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := encodeInstance(&tc.in)
			got, err := decodeInstance(tc.in.ID, rec)
			if err != nil {
				t.Fatal(err)
			}
			sameInstance(t, got, &tc.in)
			for n := range len(rec) - 1 {
				if _, err := decodeInstance("x", rec[:n]); err == nil {
					t.Fatalf("truncated to %d bytes: decoded", n)
				}
			}
			if _, err := decodeInstance("x", append(rec, 0)); err == nil {
				t.Fatal("trailing byte accepted")
			}
		})
	}
}

func TestInstanceAndVars(t *testing.T) {
	ts := newTestStore(t, Options{NoSync: true})
	a := inst(NewID(), Running)
	ts.mustCommit(&Checkpoint{Instance: a, Vars: map[int][]byte{0: []byte("<po/>"), 1: []byte("one"), 70000: {}}})

	// Only changed vars are passed: slot 1 is replaced, 70000 deleted,
	// slot 0 kept, slot 2 added.
	a.State, a.Frames = Waiting, []byte("frames-2")
	before := ts.Stats().BytesWritten
	ts.mustCommit(&Checkpoint{Instance: a, Vars: map[int][]byte{1: []byte("uno"), 70000: nil, 2: []byte("two")}})
	delta := ts.Stats().BytesWritten - before
	if limit := uint64(len(encodeInstance(&a)) + 2*(len(a.ID)+1+4) + len("uno") + len("two") + len(a.ID)); delta > limit {
		t.Errorf("second checkpoint wrote %d bytes, want <= %d (only the changed vars)", delta, limit)
	}

	for _, phase := range []string{"open", "reopened"} {
		got, vars, err := ts.Instance(a.ID)
		if err != nil {
			t.Fatalf("%s: %v", phase, err)
		}
		sameInstance(t, got, &a)
		want := map[int][]byte{0: []byte("<po/>"), 1: []byte("uno"), 2: []byte("two")}
		if !maps.EqualFunc(vars, want, func(x, y []byte) bool { return string(x) == string(y) }) {
			t.Errorf("%s: vars = %v, want %v", phase, vars, want)
		}
		ts.reopen()
	}

	if _, _, err := ts.Instance("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Instance(nope) = %v, want ErrNotFound", err)
	}
}

func TestZeroTimesDefaultToCommitTime(t *testing.T) {
	ts := newTestStore(t, Options{NoSync: true})
	before := time.Now()
	ts.mustCommit(&Checkpoint{Instance: Instance{ID: "z", State: Running}})
	got, _, err := ts.Instance("z")
	if err != nil {
		t.Fatal(err)
	}
	if got.Created.Before(before.Truncate(time.Microsecond)) || got.Updated.IsZero() {
		t.Errorf("Created %v Updated %v, want commit time", got.Created, got.Updated)
	}
}

func TestRoutes(t *testing.T) {
	ts := newTestStore(t, Options{NoSync: true})
	a, b := inst("A", Waiting), inst("B", Waiting)
	ts.mustCommit(
		&Checkpoint{Instance: a, AddRoutes: []Route{{Key: "op1|po-1"}, {Key: "op2|po-1", InstanceID: "A"}}},
		&Checkpoint{Instance: b, AddRoutes: []Route{{Key: "op1|po-2"}}},
	)
	// Re-adding its own route is idempotent; taking another's is a conflict.
	ts.mustCommit(&Checkpoint{Instance: a, AddRoutes: []Route{{Key: "op1|po-1"}}})
	if err := ts.Commit(&Checkpoint{Instance: a, AddRoutes: []Route{{Key: "op1|po-2"}}}); !errors.Is(err, ErrConflict) {
		t.Errorf("taking B's route: %v, want ErrConflict", err)
	}
	ts.mustCommit(&Checkpoint{Instance: a, RemoveRoutes: []Route{{Key: "op1|po-1"}, {Key: "op1|po-2"}, {Key: "never"}}})
	ts.reopen()

	tests := []struct {
		key, id string
		ok      bool
	}{
		{"op1|po-1", "", false},
		{"op2|po-1", "A", true},
		{"op1|po-2", "B", true}, // A's attempt to remove B's route did nothing
		{"missing", "", false},
	}
	for _, tc := range tests {
		id, ok, err := ts.Route(tc.key)
		if err != nil || id != tc.id || ok != tc.ok {
			t.Errorf("Route(%q) = %q, %v, %v; want %q, %v", tc.key, id, ok, err, tc.id, tc.ok)
		}
	}
	var all []Route
	if err := ts.Routes(func(r Route) bool { all = append(all, r); return true }); err != nil {
		t.Fatal(err)
	}
	if want := []Route{{"op1|po-2", "B"}, {"op2|po-1", "A"}}; !slices.Equal(all, want) {
		t.Errorf("Routes = %v, want %v", all, want)
	}
}

func TestTimersInDueOrder(t *testing.T) {
	ts := newTestStore(t, Options{NoSync: true})
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	ts.mustCommit(
		&Checkpoint{Instance: inst("A", Waiting), AddTimers: []Timer{
			{Due: base.Add(3 * time.Hour), Tag: "wait1"},
			{Due: base.Add(time.Nanosecond), Tag: "pick/onAlarm"},
			{Due: time.Unix(-100, 0), Tag: "before-1970"},
		}},
		&Checkpoint{Instance: inst("B", Waiting), AddTimers: []Timer{
			{Due: base.Add(time.Hour), Tag: "w"},
			{Due: base.Add(3 * time.Hour), Tag: ""},
		}},
	)
	ts.mustCommit(&Checkpoint{Instance: inst("A", Waiting), RemoveTimers: []Timer{{Due: base.Add(3 * time.Hour), Tag: "wait1"}}})
	ts.reopen()
	var got []string
	var prev time.Time
	if err := ts.Timers(func(tm Timer) bool {
		if tm.Due.Before(prev) {
			t.Errorf("timer %v before %v", tm.Due, prev)
		}
		prev = tm.Due
		got = append(got, fmt.Sprintf("%s/%s@%d", tm.InstanceID, tm.Tag, tm.Due.Sub(base)))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("A/before-1970@%d", time.Unix(-100, 0).Sub(base)),
		"A/pick/onAlarm@1",
		fmt.Sprintf("B/w@%d", time.Hour),
		fmt.Sprintf("B/@%d", 3*time.Hour),
	}
	if !slices.Equal(got, want) {
		t.Errorf("timers:\n got %q\nwant %q", got, want)
	}
	// Stop early.
	n := 0
	_ = ts.Timers(func(Timer) bool { n++; return false })
	if n != 1 {
		t.Errorf("fn returning false: called %d times", n)
	}
}

func TestOutboxSeqAndAck(t *testing.T) {
	ts := newTestStore(t, Options{NoSync: true})
	cp := &Checkpoint{Instance: inst("A", Running), Outbox: []OutboxMessage{
		{Partner: "erp", Operation: "book", Payload: []byte("<book/>")},
		{Partner: "crm", Operation: "note", Payload: nil},
	}}
	ts.mustCommit(cp)
	cp2 := &Checkpoint{Instance: inst("B", Running), Outbox: []OutboxMessage{{Partner: "erp", Operation: "book", Payload: []byte("x")}}}
	ts.mustCommit(cp2)
	seqs := []uint64{cp.Outbox[0].Seq, cp.Outbox[1].Seq, cp2.Outbox[0].Seq}
	if !slices.IsSorted(seqs) || seqs[0] == 0 || seqs[0] == seqs[1] || seqs[1] == seqs[2] {
		t.Fatalf("assigned seqs %v, want increasing from 1", seqs)
	}
	if err := ts.AckOutbox(seqs[0]); err != nil {
		t.Fatal(err)
	}
	if err := ts.AckOutbox(seqs[0]); err != nil {
		t.Errorf("second ack: %v", err)
	}
	ts.reopen()
	var got []OutboxMessage
	if err := ts.Outbox(func(m OutboxMessage) bool { got = append(got, m); return true }); err != nil {
		t.Fatal(err)
	}
	want := []OutboxMessage{
		{Seq: seqs[1], InstanceID: "A", Partner: "crm", Operation: "note"},
		{Seq: seqs[2], InstanceID: "B", Partner: "erp", Operation: "book", Payload: []byte("x")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("outbox:\n got %+v\nwant %+v", got, want)
	}
	// Sequence numbers are never reused, also after a restart.
	cp3 := &Checkpoint{Instance: inst("C", Running), Outbox: []OutboxMessage{{Partner: "p", Operation: "o"}}}
	ts.mustCommit(cp3)
	if cp3.Outbox[0].Seq <= seqs[2] {
		t.Errorf("seq after reopen = %d, want > %d", cp3.Outbox[0].Seq, seqs[2])
	}
}

func TestDeleteRemovesEverything(t *testing.T) {
	ts := newTestStore(t, Options{NoSync: true})
	due := time.Now().Add(time.Hour)
	mk := func(id string) *Checkpoint {
		return &Checkpoint{
			Instance:  inst(id, Waiting),
			Vars:      map[int][]byte{0: []byte(id + "-v0"), 1: []byte(id + "-v1")},
			AddRoutes: []Route{{Key: "k-" + id}},
			AddTimers: []Timer{{Due: due, Tag: "t"}},
		}
	}
	// "A" and "A1": one ID is a prefix of the other, the separator keeps them apart.
	ts.mustCommit(mk("A"), mk("A1"))
	ts.mustCommit(&Checkpoint{Instance: Instance{ID: "A"}, Delete: true,
		Outbox: []OutboxMessage{{Partner: "p", Operation: "done"}}})
	ts.reopen()

	if _, _, err := ts.Instance("A"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted instance: %v", err)
	}
	if _, ok, _ := ts.Route("k-A"); ok {
		t.Error("deleted instance's route remains")
	}
	var timers []string
	_ = ts.Timers(func(tm Timer) bool { timers = append(timers, tm.InstanceID); return true })
	if !slices.Equal(timers, []string{"A1"}) {
		t.Errorf("timers after delete: %v", timers)
	}
	_, vars, err := ts.Instance("A1")
	if err != nil || len(vars) != 2 {
		t.Errorf("neighbour A1: %v, %d vars", err, len(vars))
	}
	if id, ok, _ := ts.Route("k-A1"); !ok || id != "A1" {
		t.Errorf("neighbour's route: %q %v", id, ok)
	}
	var msgs int
	_ = ts.Outbox(func(OutboxMessage) bool { msgs++; return true })
	if msgs != 1 {
		t.Errorf("outbox of the deleting checkpoint: %d messages, want 1", msgs)
	}
	// Deleting what is not there is fine.
	ts.mustCommit(&Checkpoint{Instance: Instance{ID: "A"}, Delete: true})
	var ids []string
	_ = ts.Instances(func(in *Instance) bool { ids = append(ids, in.ID); return true })
	if !slices.Equal(ids, []string{"A1"}) {
		t.Errorf("instances: %v", ids)
	}
}

func TestCommitAtomicity(t *testing.T) {
	valid := func() *Checkpoint {
		return &Checkpoint{Instance: inst("ok", Waiting), Vars: map[int][]byte{0: []byte("v")},
			AddRoutes: []Route{{Key: "r-ok"}}, AddTimers: []Timer{{Due: time.Now(), Tag: "t"}},
			Outbox: []OutboxMessage{{Partner: "p", Operation: "o"}}}
	}
	tests := []struct {
		name string
		bad  *Checkpoint
		want error
	}{
		{"empty ID", &Checkpoint{Instance: Instance{State: Running}}, ErrInvalid},
		{"NUL in ID", &Checkpoint{Instance: Instance{ID: "a\x00b", State: Running}}, ErrInvalid},
		{"long ID", &Checkpoint{Instance: Instance{ID: strings.Repeat("x", MaxIDLen+1), State: Running}}, ErrInvalid},
		{"zero state", &Checkpoint{Instance: Instance{ID: "x"}}, ErrInvalid},
		{"negative slot", &Checkpoint{Instance: inst("x", Running), Vars: map[int][]byte{-1: nil}}, ErrInvalid},
		{"foreign route", &Checkpoint{Instance: inst("x", Running), AddRoutes: []Route{{Key: "k", InstanceID: "y"}}}, ErrInvalid},
		{"empty route key", &Checkpoint{Instance: inst("x", Running), AddRoutes: []Route{{}}}, ErrInvalid},
		{"timer without due", &Checkpoint{Instance: inst("x", Running), AddTimers: []Timer{{Tag: "t"}}}, ErrInvalid},
		{"nil checkpoint", nil, ErrInvalid},
		// Found only inside the write transaction: the rollback path.
		{"route conflict", &Checkpoint{Instance: inst("x", Running), AddRoutes: []Route{{Key: "taken"}}}, ErrConflict},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestStore(t, Options{NoSync: true})
			ts.mustCommit(&Checkpoint{Instance: inst("owner", Waiting), AddRoutes: []Route{{Key: "taken"}}})
			before := ts.Stats()
			err := ts.Commit(valid(), tc.bad)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Commit = %v, want %v", err, tc.want)
			}
			if st := ts.Stats(); st.Checkpoints != before.Checkpoints || st.Commits != before.Commits || st.CommitErrors != 1 {
				t.Errorf("stats after failure: %+v (before %+v)", st, before)
			}
			for range 2 {
				if _, _, err := ts.Instance("ok"); !errors.Is(err, ErrNotFound) {
					t.Errorf("valid half visible: %v", err)
				}
				if _, ok, _ := ts.Route("r-ok"); ok {
					t.Error("route of the failed commit visible")
				}
				n := 0
				_ = ts.Timers(func(Timer) bool { n++; return true })
				_ = ts.Outbox(func(OutboxMessage) bool { n++; return true })
				if n != 0 {
					t.Errorf("%d timers/messages of the failed commit visible", n)
				}
				ts.reopen()
			}
		})
	}
}

func TestGroupCommit(t *testing.T) {
	// fsync on: this is the configuration group commit exists for.
	ts := newTestStore(t, Options{MaxBatchDelay: 5 * time.Millisecond})
	const workers, each = 64, 8
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("w%02d", w)
			for i := range each {
				cp := &Checkpoint{
					Instance:  inst(id, Waiting),
					Vars:      map[int][]byte{i: []byte(fmt.Sprint(i))},
					AddRoutes: []Route{{Key: fmt.Sprintf("%s-%d", id, i)}},
					Outbox:    []OutboxMessage{{Partner: "p", Operation: id}},
				}
				if i == each-1 {
					// One caller in the group fails; the others must still commit.
					cp.AddRoutes = append(cp.AddRoutes, Route{Key: "w00-0"})
				}
				if err := ts.Commit(cp); err != nil && !(w != 0 && i == each-1 && errors.Is(err, ErrConflict)) {
					errs <- fmt.Errorf("%s/%d: %w", id, i, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := ts.Stats()
	t.Logf("%d checkpoints in %d commits", st.Checkpoints, st.Commits)
	if want := uint64(workers*each - (workers - 1)); st.Checkpoints != want {
		t.Errorf("Checkpoints = %d, want %d", st.Checkpoints, want)
	}
	if st.Commits >= st.Checkpoints {
		t.Errorf("Commits = %d, not fewer than Checkpoints = %d: no group commit", st.Commits, st.Checkpoints)
	}
	ts.reopen()
	for w := range workers {
		id := fmt.Sprintf("w%02d", w)
		_, vars, err := ts.Instance(id)
		want := each
		if w != 0 {
			want = each - 1
		}
		if err != nil || len(vars) != want {
			t.Errorf("%s: %v, %d vars, want %d", id, err, len(vars), want)
		}
	}
	msgs := 0
	_ = ts.Outbox(func(OutboxMessage) bool { msgs++; return true })
	if msgs != int(st.Checkpoints) {
		t.Errorf("%d outbox messages, want %d", msgs, st.Checkpoints)
	}
}

func TestClosed(t *testing.T) {
	ts := newTestStore(t, Options{NoSync: true})
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ts.Commit(&Checkpoint{Instance: inst("a", Running)}); !errors.Is(err, ErrClosed) {
		t.Errorf("Commit after Close: %v", err)
	}
	if _, _, err := ts.Instance("a"); !errors.Is(err, ErrClosed) {
		t.Errorf("Instance after Close: %v", err)
	}
}

func TestCallbackPanicPassesThrough(t *testing.T) {
	ts := newTestStore(t, Options{NoSync: true})
	ts.mustCommit(&Checkpoint{Instance: inst("a", Running)})
	defer func() {
		if p := recover(); p != "mine" {
			t.Errorf("recovered %v, want the callback's panic", p)
		}
		// The read transaction was released: a write still works.
		ts.mustCommit(&Checkpoint{Instance: inst("b", Running)})
	}()
	_ = ts.Instances(func(*Instance) bool { panic("mine") })
}

func TestNewID(t *testing.T) {
	seen := make(map[string]bool)
	prev := ""
	for i := range 2000 {
		id := NewID()
		if len(id) != 26 || validID(id) != nil || seen[id] {
			t.Fatalf("bad or duplicate ID %q", id)
		}
		seen[id] = true
		if i%500 == 0 {
			time.Sleep(2 * time.Millisecond)
			next := NewID()
			if prev != "" && next < prev {
				t.Errorf("IDs not time-ordered: %q after %q", next, prev)
			}
			prev = next
		}
	}
}

// TestOutboxDamagedRecord: a record that does not decode neither keeps
// the file from opening nor stops Outbox: it is reported with Err (and
// its Seq), between the others.
func TestOutboxDamagedRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orchd.db")
	st, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	cp := &Checkpoint{Instance: inst("A", Running), Outbox: []OutboxMessage{
		{Partner: "erp", Operation: "book", Payload: []byte("<a/>")},
		{Partner: "erp", Operation: "book", Payload: []byte("<b/>")},
		{Partner: "erp", Operation: "book", Payload: []byte("<c/>")},
	}}
	if err := st.Commit(cp); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	damaged := cp.Outbox[1].Seq
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucketOutbox)).Put(binary.BigEndian.AppendUint64(nil, damaged), []byte{outboxFormat, 0xff})
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	st, err = Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatalf("Open with a damaged outbox record: %v", err)
	}
	defer st.Close()
	var seqs []uint64
	var bad []OutboxMessage
	if err := st.Outbox(func(m OutboxMessage) bool {
		seqs = append(seqs, m.Seq)
		if m.Err != nil {
			bad = append(bad, m)
		}
		return true
	}); err != nil {
		t.Fatalf("Outbox: %v", err)
	}
	if len(seqs) != 3 || len(bad) != 1 || bad[0].Seq != damaged || !errors.Is(bad[0].Err, ErrCorrupt) {
		t.Fatalf("Outbox listed %v with damaged %+v; want all 3, seq %d damaged (ErrCorrupt)", seqs, bad, damaged)
	}
	if err := st.AckOutbox(damaged); err != nil {
		t.Errorf("AckOutbox of the damaged record: %v", err)
	}
}
