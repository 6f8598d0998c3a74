package persist

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// maxProblems bounds how many problems a VerifyReport lists; the count
// goes on.
const maxProblems = 20

// VerifyReport is what Verify found: what the file holds, and every way in
// which its entries disagree with each other.
type VerifyReport struct {
	// States counts the instances by state.
	States map[State]int
	// Instances, Vars, Routes, Timers, Index and Outbox count the entries
	// of each bucket.
	Instances, Vars, Routes, Timers, Index, Outbox int
	// Problems lists the first inconsistencies found (at most 20);
	// NProblems counts them all.
	Problems  []string
	NProblems int
}

func (r *VerifyReport) problem(format string, args ...any) {
	r.NProblems++
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// String summarizes the report on one line.
func (r VerifyReport) String() string {
	var states []string
	for s := Running; s <= Suspended; s++ {
		if n := r.States[s]; n > 0 {
			states = append(states, fmt.Sprintf("%s=%d", s, n))
		}
	}
	return fmt.Sprintf("instances=%d (%s) vars=%d routes=%d timers=%d index=%d outbox=%d problems=%d",
		r.Instances, strings.Join(states, " "), r.Vars, r.Routes, r.Timers, r.Index, r.Outbox, r.NProblems)
}

// Verify checks the whole file in one read transaction: bbolt's own page
// consistency check (tx.Check), that every record decodes, and that the
// buckets agree with each other:
//
//   - every route names an instance that exists and is waiting, and is
//     listed in that instance's index;
//   - every timer belongs to an instance that exists and is waiting, and
//     is listed in its index;
//   - every index entry belongs to an instance that exists and names a
//     route bound to it or a timer that exists;
//   - every variable belongs to an instance that exists.
//
// Outbox messages may outlive their instance and are only decoded. The
// error is nil when the file could be read and nothing was found; it wraps
// ErrCorrupt, naming the first problems, when something was. Verify reads
// every key, so it costs about as much as Open's verification. On a
// read-write store it runs in a write transaction that it rolls back
// (bbolt's check reads the free list, which commits change), so commits
// wait while it runs.
func (s *Store) Verify() (VerifyReport, error) {
	var rep VerifyReport
	check := func(tx *bolt.Tx) error {
		// (A group commit may run this more than once.)
		rep = VerifyReport{States: map[State]int{}}
		for err := range tx.Check() {
			rep.problem("bbolt: %v", err)
		}
		verifyTxBuckets(tx, &rep)
		return nil
	}
	var err error
	if s.readOnly {
		// No writer can hold the file meanwhile.
		err = s.view(check)
	} else {
		// bbolt's check reads the free list, which writers change: it
		// runs in a write transaction (rolled back), so that none does.
		err = s.update(func(tx *bolt.Tx) error {
			if err := check(tx); err != nil {
				return err
			}
			return errRollback
		})
		if errors.Is(err, errRollback) {
			err = nil
		}
	}
	if err != nil {
		return rep, err
	}
	if rep.NProblems > 0 {
		return rep, fmt.Errorf("%w: %s: %d inconsistencies: %s", ErrCorrupt, s.path, rep.NProblems, strings.Join(rep.Problems, "; "))
	}
	return rep, nil
}

// errRollback ends Verify's write transaction without writing.
var errRollback = errors.New("persist: verify: roll back")

// Check verifies the data file at path (Store.Verify) without writing to
// it: it opens the file read-only (Options.ReadOnly), so it can look at
// what a crash left before a restart recovers it.
func Check(path string) (VerifyReport, error) {
	s, err := Open(path, Options{ReadOnly: true, NoVerify: true})
	if err != nil {
		return VerifyReport{}, err
	}
	rep, err := s.Verify()
	if cerr := s.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return rep, err
}

// verifyTxBuckets cross-checks the buckets of tx into rep.
func verifyTxBuckets(tx *bolt.Tx, rep *VerifyReport) {
	bk := buckets(tx)
	if bk.instances == nil || bk.vars == nil || bk.routes == nil || bk.timers == nil || bk.outbox == nil || bk.index == nil {
		rep.problem("missing bucket")
		return
	}
	verifyBuckets(Buckets{Instances: bk.instances, Vars: bk.vars, Routes: bk.routes,
		Timers: bk.timers, Index: bk.index, Outbox: bk.outbox}, rep)
}

// Bucket is the read side of one bucket of the layout (doc.go, "Layout"),
// keys relative to the bucket, as *bolt.Bucket has it. Another store's
// checker (internal/etcdstore) passes its keys through it to VerifyBuckets.
type Bucket interface {
	Get(key []byte) []byte
	// ForEach calls fn for every key in key order.
	ForEach(fn func(k, v []byte) error) error
}

// Buckets are the buckets VerifyBuckets cross-checks.
type Buckets struct {
	Instances, Vars, Routes, Timers, Index, Outbox Bucket
}

// VerifyBuckets cross-checks one consistent snapshot of the buckets as
// Verify does (its list of checks), without bbolt's own page check, and
// returns what it found.
func VerifyBuckets(b Buckets) VerifyReport {
	rep := VerifyReport{States: map[State]int{}}
	verifyBuckets(b, &rep)
	return rep
}

// Problem records an inconsistency found beside VerifyBuckets' checks
// (a store's own keys), as VerifyBuckets records its own.
func (r *VerifyReport) Problem(format string, args ...any) { r.problem(format, args...) }

// verifyBuckets cross-checks the buckets into rep.
func verifyBuckets(b Buckets, rep *VerifyReport) {
	bk := struct{ instances, vars, routes, timers, index, outbox Bucket }{
		b.Instances, b.Vars, b.Routes, b.Timers, b.Index, b.Outbox}
	states := map[string]State{}
	_ = bk.instances.ForEach(func(k, v []byte) error {
		rep.Instances++
		in, err := decodeInstance(string(k), v)
		if err != nil {
			rep.problem("%v", err)
			states[string(k)] = 0
			return nil
		}
		states[in.ID] = in.State
		rep.States[in.State]++
		return nil
	})
	// owner splits a composite key (id 0x00 rest) and checks its instance.
	owner := func(what string, k []byte) (id string, rest []byte, ok bool) {
		i := bytes.IndexByte(k, sep)
		if i <= 0 {
			rep.problem("%s key %q has no instance ID", what, k)
			return "", nil, false
		}
		id, rest = string(k[:i]), k[i+1:]
		if _, live := states[id]; !live {
			rep.problem("%s %q belongs to missing instance %q", what, rest, id)
			return id, rest, false
		}
		return id, rest, true
	}
	_ = bk.vars.ForEach(func(k, _ []byte) error {
		rep.Vars++
		if _, rest, ok := owner("variable", k); ok && len(rest) != slotLen {
			rep.problem("variable key %q: slot of %d bytes", k, len(rest))
		}
		return nil
	})
	_ = bk.routes.ForEach(func(k, v []byte) error {
		rep.Routes++
		id := string(v)
		st, live := states[id]
		switch {
		case !live:
			rep.problem("route %q points to missing instance %q", k, id)
		case st != Waiting:
			rep.problem("route %q points to instance %q in state %s", k, id, st)
		case bk.index.Get(indexKey(id, kindRoute, k)) == nil:
			rep.problem("route %q of instance %q is not in its index", k, id)
		}
		return nil
	})
	_ = bk.timers.ForEach(func(k, _ []byte) error {
		rep.Timers++
		t, err := decodeTimerKey(k)
		if err != nil {
			rep.problem("timer: %v", err)
			return nil
		}
		st, live := states[t.InstanceID]
		switch {
		case !live:
			rep.problem("timer %s %q points to missing instance %q", t.Due, t.Tag, t.InstanceID)
		case st != Waiting:
			rep.problem("timer %s of instance %q in state %s", t.Due, t.InstanceID, st)
		case bk.index.Get(indexKey(t.InstanceID, kindTimer, k)) == nil:
			rep.problem("timer %s of instance %q is not in its index", t.Due, t.InstanceID)
		}
		return nil
	})
	_ = bk.index.ForEach(func(k, _ []byte) error {
		rep.Index++
		id, rest, ok := owner("index entry", k)
		if !ok {
			return nil
		}
		if len(rest) == 0 {
			rep.problem("empty index entry of instance %q", id)
			return nil
		}
		switch key := rest[1:]; rest[0] {
		case kindRoute:
			if cur := bk.routes.Get(key); !bytes.Equal(cur, []byte(id)) {
				rep.problem("index of instance %q lists route %q, bound to %q", id, key, cur)
			}
		case kindTimer:
			if bk.timers.Get(key) == nil {
				rep.problem("index of instance %q lists a timer that does not exist", id)
			}
		default:
			rep.problem("index entry of instance %q of unknown kind %q", id, rest[0])
		}
		return nil
	})
	_ = bk.outbox.ForEach(func(k, v []byte) error {
		rep.Outbox++
		if _, err := decodeOutbox(k, v); err != nil {
			rep.problem("%v", err)
		}
		return nil
	})
}
