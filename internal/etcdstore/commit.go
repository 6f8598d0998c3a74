package etcdstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orchd/orchd/internal/persist"
)

// call is one Commit call waiting for the committer.
type call struct {
	cps    []*persist.Checkpoint
	ops    []*persist.Prepared
	est    int // estimated puts and deletes
	bytes  int // estimated request bytes
	seqs   []uint64
	err    error
	done   chan struct{}
	arrive time.Time
	// fences are the checkpoints' Fence comparisons, fenced the IDs of
	// their instances; lost is set once a fence failed (the call is out
	// of its group for good).
	fences []clientv3.Cmp
	fenced []string
	lost   bool
	// folded are the fences that write (FoldedFence), nfold their
	// writes, rev the revision of the transaction that committed the
	// call.
	folded []FoldedFence
	nfold  int
	rev    int64
}

// opOverhead approximates the protobuf bytes of one request op besides its
// key and value; reserve is kept free of the request limit for the rest.
const (
	opOverhead = 16
	reserve    = 4096
)

// maxAttempts bounds how often a group is read and tried again after a
// comparison failed (another node wrote a key it read).
const maxAttempts = 8

// Commit writes the checkpoints in one etcd transaction, all or nothing,
// and returns after etcd acknowledged it. Concurrent calls share a
// transaction (doc.go, "Commit"). On success it writes the assigned
// sequence numbers into each cp.Outbox[i].Seq. A checkpoint whose Fence is
// set (it must be a Fence) commits only while that comparison holds.
// Errors wrap persist.ErrInvalid (nothing was tried), persist.ErrConflict,
// ErrFenced, persist.ErrClosed or ErrUnavailable.
func (s *Store) Commit(cps ...*persist.Checkpoint) (err error) {
	start := time.Now()
	defer func() {
		s.commitNanos.Add(uint64(time.Since(start)))
		if err != nil {
			s.commitErrors.Add(1)
		}
	}()
	if len(cps) == 0 {
		return nil
	}
	c := &call{cps: cps, done: make(chan struct{}), arrive: start}
	for i, cp := range cps {
		p, err := persist.Prepare(cp, start)
		if err != nil {
			return fmt.Errorf("etcdstore: commit: checkpoint %d: %w", i, err)
		}
		c.ops = append(c.ops, p)
		if cp.Fence != nil {
			f, ok := cp.Fence.(Fence)
			if !ok {
				return fmt.Errorf("etcdstore: commit: checkpoint %d: %w: fence of type %T", i, persist.ErrInvalid, cp.Fence)
			}
			cmp := f.Fence()
			c.fences = append(c.fences, cmp)
			c.fenced = append(c.fenced, p.ID)
			c.bytes += len(cmp.KeyBytes()) + opOverhead
			if ff, ok := f.(FoldedFence); ok {
				c.folded = append(c.folded, ff)
				n := len(ff.FenceOps())
				c.nfold += n
				c.est += n
				c.bytes += n * (len(cmp.KeyBytes()) + 2*opOverhead)
			}
		}
		n := 1 + len(p.Puts) + len(p.Dels) + 2*(len(p.AddRoutes)+len(p.RemoveRoutes)+len(p.AddTimers)+len(p.RemoveTimers)) + len(p.Outbox)
		c.est += n
		c.bytes += int(p.Size) + n*(opOverhead+len(s.prefix)+len(bIndex)+len(p.ID))
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.inflight.Done() // Close waits for the commits in flight
	s.reqs <- c
	<-c.done
	if c.err != nil {
		return fmt.Errorf("etcdstore: commit: %w", c.err)
	}
	n := 0
	for _, cp := range cps {
		for j := range cp.Outbox {
			cp.Outbox[j].Seq = c.seqs[n]
			n++
		}
	}
	return nil
}

// committer forms groups of calls and runs them, one group at a time.
func (s *Store) committer() {
	defer close(s.done)
	var next *call
	shared := false
	for {
		first := next
		next = nil
		if first == nil {
			select {
			case first = <-s.reqs:
			case <-s.stop:
				return
			}
		}
		group := []*call{first}
		ops, size := first.est, first.bytes
		// Wait for others only under concurrency (the last group had
		// company): a lone committer goes at once, as persist's does.
		deadline := first.arrive
		if shared {
			deadline = deadline.Add(s.opts.MaxBatchDelay)
		}
		var timer <-chan time.Time
	collect:
		for {
			var c *call
			select {
			case c = <-s.reqs:
			default:
				wait := time.Until(deadline)
				if wait <= 0 {
					break collect
				}
				if timer == nil {
					timer = time.After(wait)
				}
				select {
				case c = <-s.reqs:
				case <-timer:
					break collect
				}
			}
			if ops+c.est > s.opts.MaxTxnOps || size+c.bytes > s.opts.MaxRequestBytes-reserve {
				next = c // the next group starts with it
				break collect
			}
			group = append(group, c)
			ops += c.est
			size += c.bytes
		}
		shared = len(group) > 1 || next != nil || len(s.reqs) > 0
		s.run(group)
	}
}

// run commits a group, in as few transactions as the limits allow, and
// completes every call.
func (s *Store) run(group []*call) {
	for len(group) > 0 {
		n := s.runTxn(group)
		group = group[n:]
	}
}

// runTxn commits a prefix of calls in one transaction and returns how many
// calls it completed (at least one).
//
// A call whose fence fails is taken out of the group with ErrFenced and
// the others are tried again without it; that retry does not count as
// an attempt, since each one removes a call.
func (s *Store) runTxn(calls []*call) int {
	var lastErr error
	for attempt := 0; attempt < maxAttempts; {
		base, err := s.read(calls)
		if err != nil {
			finish(calls, err)
			return len(calls)
		}
		tx := &overlay{base: base, writes: map[string]*[]byte{}, seq: base.seq}
		var in, failed []*call
		taken, fences, folded, nest := 0, 0, 0, 0
		for _, c := range calls {
			if c.lost {
				taken++
				failed = append(failed, c)
				continue
			}
			child := tx.child()
			err := child.applyCall(s, c)
			if err == nil {
				ops, size := child.size()
				ops += folded + c.nfold // the fences' writes (write)
				// etcd allows a nested transaction (the fence probes
				// of write's Else) only the operations its parent
				// leaves of the limit: max(compares, ops, probes) plus
				// the largest probe must fit.
				n := max(nest, len(c.fences))
				if ops+n > s.opts.MaxTxnOps || len(child.compares())+fences+len(c.fences)+n > s.opts.MaxTxnOps || size > s.opts.MaxRequestBytes-reserve {
					if len(in) > 0 || len(failed) > 0 {
						break // the rest goes into the next transaction
					}
					err = fmt.Errorf("%w: checkpoint of %d etcd operations and about %d bytes exceeds etcd's limits (%d ops, %d bytes)",
						persist.ErrInvalid, ops, size, s.opts.MaxTxnOps, s.opts.MaxRequestBytes)
				}
			}
			taken++
			if err != nil {
				c.err = err
				failed = append(failed, c)
				continue
			}
			child.merge()
			in = append(in, c)
			fences += len(c.fences)
			folded += c.nfold
			nest = max(nest, len(c.fences))
		}
		if len(in) == 0 {
			finish(failed, nil)
			return taken
		}
		ok, rev, written, lost, err := s.write(tx, in)
		if err != nil {
			finish(in, err)
			finish(failed, nil)
			return taken
		}
		if !ok {
			for _, c := range failed {
				if !c.lost {
					c.err = nil
				}
				c.seqs = nil
			}
			for _, c := range in {
				c.seqs = nil
			}
			for _, c := range lost {
				c.lost = true
				c.err = fmt.Errorf("instance %s: %w", strings.Join(c.fenced, ", "), ErrFenced)
				s.fenceFailures.Add(1)
			}
			if len(lost) == 0 {
				// Another writer changed a key this group read: read again.
				lastErr = errors.New("keys kept changing under the transaction")
				attempt++
			}
			continue
		}
		cps := 0
		for _, c := range in {
			cps += len(c.cps)
		}
		s.commits.Add(1)
		s.checkpoints.Add(uint64(cps))
		s.bytesWritten.Add(written)
		for _, c := range in {
			c.rev = rev
		}
		finish(in, nil)
		finish(failed, nil)
		return taken
	}
	finish(calls, fmt.Errorf("%d attempts: %w", maxAttempts, lastErr))
	return len(calls)
}

// finish completes calls; a non-nil err replaces their own. Each call's
// folded fences learn its outcome first.
func finish(calls []*call, err error) {
	for _, c := range calls {
		if err != nil {
			c.err = err
		}
		for _, f := range c.folded {
			if c.err != nil {
				f.FenceDone(0, c.err)
			} else {
				f.FenceDone(c.rev, nil)
			}
		}
		close(c.done)
	}
}

// baseState is what a group read before its transaction.
type baseState struct {
	vals  map[string][]byte // current values (absent: not in the map)
	revs  map[string]int64  // mod revision of each key read (0: absent), compared in the Txn
	lists map[string][]string
	seq   uint64
}

// read fetches the values the calls' transaction depends on: the outbox
// counter, the route keys they bind or unbind, and for deleted instances
// their record, index and variable keys (and then the routes the index
// lists).
func (s *Store) read(calls []*call) (*baseState, error) {
	b := &baseState{vals: map[string][]byte{}, revs: map[string]int64{}, lists: map[string][]string{}}
	keys := map[string]bool{}
	var prefixes []string
	outbox := false
	for _, c := range calls {
		if c.lost {
			continue
		}
		for _, p := range c.ops {
			outbox = outbox || len(p.Outbox) > 0
			for _, k := range p.AddRoutes {
				keys[s.k(bRoutes, k)] = true
			}
			for _, k := range p.RemoveRoutes {
				keys[s.k(bRoutes, k)] = true
			}
			if p.Delete {
				keys[s.k(bInstances, []byte(p.ID))] = true
				prefixes = append(prefixes, s.k(bIndex, persist.KeyPrefix(p.ID)), s.k(bVars, persist.KeyPrefix(p.ID)))
			}
		}
	}
	if outbox {
		keys[s.prefix+kOutboxSeq] = true
	}
	if len(prefixes) > 0 {
		if err := s.get(b, nil, prefixes); err != nil {
			return nil, err
		}
		ip := s.prefix + bIndex
		for _, pre := range prefixes {
			if !strings.HasPrefix(pre, ip) {
				continue
			}
			for _, k := range b.lists[pre] {
				rest := k[len(pre):]
				if len(rest) > 0 && rest[0] == persist.IndexRoute {
					keys[s.prefix+bRoutes+rest[1:]] = true
				}
			}
		}
	}
	if len(keys) == 0 {
		return b, nil
	}
	if err := s.get(b, keys, nil); err != nil {
		return nil, err
	}
	if v, ok := b.vals[s.prefix+kOutboxSeq]; ok {
		if len(v) != 8 {
			return nil, fmt.Errorf("%w: outbox counter of %d bytes", persist.ErrCorrupt, len(v))
		}
		b.seq = binary.BigEndian.Uint64(v)
	}
	return b, nil
}

// get reads keys (values and revisions) and prefixes (key lists) in
// read-only transactions of at most MaxTxnOps gets each.
func (s *Store) get(b *baseState, keys map[string]bool, prefixes []string) error {
	var ops []clientv3.Op
	var names []string
	for _, k := range sortedKeys(keys) {
		ops = append(ops, clientv3.OpGet(k))
		names = append(names, k)
	}
	nkeys := len(ops)
	for _, p := range prefixes {
		ops = append(ops, clientv3.OpGet(p, clientv3.WithPrefix(), clientv3.WithKeysOnly()))
		names = append(names, p)
	}
	for start := 0; start < len(ops); start += s.opts.MaxTxnOps {
		end := min(start+s.opts.MaxTxnOps, len(ops))
		ctx, cancel := s.ctx()
		resp, err := s.cli.Txn(ctx).Then(ops[start:end]...).Commit()
		cancel()
		s.readTxns.Add(1)
		if err != nil {
			return unavailable("read", err)
		}
		for i, r := range resp.Responses {
			j := start + i
			kvs := r.GetResponseRange().Kvs
			if j < nkeys {
				b.revs[names[j]] = 0
				if len(kvs) == 1 {
					b.vals[names[j]] = kvs[0].Value
					b.revs[names[j]] = kvs[0].ModRevision
				}
				continue
			}
			for _, kv := range kvs {
				b.lists[names[j]] = append(b.lists[names[j]], string(kv.Key))
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// write sends the transaction of the calls in; ok is false when a
// comparison failed, and lost then lists the calls whose fence failed;
// rev is the committed transaction's revision. The folded fences' writes
// go with the calls' own.
// written counts the key and value bytes it puts (keys with the prefix:
// what etcd stores).
//
// The fences of all calls are comparisons of the transaction itself, so
// the common case costs no more than one comparison each. Which of them
// failed comes back in the same answer: the Else branch holds, for each
// fenced call, a nested transaction with only its comparisons (etcd >=
// 3.3), whose Succeeded says whether they hold.
func (s *Store) write(tx *overlay, in []*call) (ok bool, rev int64, written uint64, lost []*call, err error) {
	ops := make([]clientv3.Op, 0, len(tx.writes))
	for _, k := range sortedPtrKeys(tx.writes) {
		if v := tx.writes[k]; v == nil {
			ops = append(ops, clientv3.OpDelete(k))
		} else {
			ops = append(ops, clientv3.OpPut(k, string(*v)))
			written += uint64(len(k) + len(*v))
		}
	}
	for _, c := range in {
		for _, f := range c.folded {
			ops = append(ops, f.FenceOps()...)
		}
	}
	cmps := tx.compares()
	var probes []clientv3.Op
	var fenced []*call
	for _, c := range in {
		if len(c.fences) > 0 {
			cmps = append(cmps, c.fences...)
			probes = append(probes, clientv3.OpTxn(c.fences, nil, nil))
			fenced = append(fenced, c)
		}
	}
	ctx, cancel := s.ctx()
	defer cancel()
	resp, err := s.cli.Txn(ctx).If(cmps...).Then(ops...).Else(probes...).Commit()
	s.writeTxns.Add(1)
	if err != nil {
		return false, 0, 0, nil, unavailable("write", err)
	}
	if resp.Succeeded {
		return true, resp.Header.Revision, written, nil, nil
	}
	for i, r := range resp.Responses {
		if t := r.GetResponseTxn(); i < len(fenced) && t != nil && !t.Succeeded {
			lost = append(lost, fenced[i])
		}
	}
	return false, 0, 0, lost, nil
}

func sortedPtrKeys(m map[string]*[]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// overlay is a transaction being built: writes (nil: delete) over the base
// read. A child collects one call's writes so that a failing call leaves
// the transaction as it was.
type overlay struct {
	base   *baseState
	writes map[string]*[]byte
	parent *overlay
	seq    uint64
	seqs   []uint64
}

func (o *overlay) child() *overlay {
	return &overlay{base: o.base, writes: map[string]*[]byte{}, parent: o, seq: o.seq}
}

func (o *overlay) merge() {
	for k, v := range o.writes {
		o.parent.writes[k] = v
	}
	o.parent.seq = o.seq
}

// get returns the value of k as the transaction so far leaves it.
func (o *overlay) get(k string) ([]byte, bool) {
	for t := o; t != nil; t = t.parent {
		if v, ok := t.writes[k]; ok {
			if v == nil {
				return nil, false
			}
			return *v, true
		}
	}
	v, ok := o.base.vals[k]
	return v, ok
}

func (o *overlay) put(k string, v []byte) { o.writes[k] = &v }
func (o *overlay) del(k string)           { o.writes[k] = nil }

// keysWithPrefix lists the keys under pre as the transaction leaves them:
// the base's list (read for deleted instances) and the writes so far.
func (o *overlay) keysWithPrefix(pre string) []string {
	set := map[string]bool{}
	for _, k := range o.base.lists[pre] {
		set[k] = true
	}
	var chain []*overlay
	for t := o; t != nil; t = t.parent {
		chain = append(chain, t)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		for k, v := range chain[i].writes {
			if strings.HasPrefix(k, pre) {
				set[k] = v != nil
			}
		}
	}
	var out []string
	for k, live := range set {
		if live {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// size counts the operations and the approximate request bytes of the
// whole transaction (this overlay and its parents).
func (o *overlay) size() (ops, bytes int) {
	seen := map[string]bool{}
	for t := o; t != nil; t = t.parent {
		for k, v := range t.writes {
			if seen[k] {
				continue
			}
			seen[k] = true
			ops++
			bytes += len(k) + opOverhead
			if v != nil {
				bytes += len(*v)
			}
		}
	}
	return ops, bytes
}

// compares are the transaction's guards: every key read is unchanged.
func (o *overlay) compares() []clientv3.Cmp {
	var cmps []clientv3.Cmp
	for _, k := range slices.Sorted(mapKeys(o.base.revs)) {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", o.base.revs[k]))
	}
	return cmps
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// applyCall applies every checkpoint of c in order, as persist's op.apply
// does in a bbolt transaction.
func (o *overlay) applyCall(s *Store, c *call) error {
	c.seqs = c.seqs[:0]
	for _, p := range c.ops {
		if err := o.apply(s, p, &c.seqs); err != nil {
			return err
		}
	}
	return nil
}

func (o *overlay) apply(s *Store, p *persist.Prepared, seqs *[]uint64) error {
	id := []byte(p.ID)
	for _, v := range p.Outbox {
		o.seq++
		o.put(s.k(bOutbox, persist.SeqKey(o.seq)), v)
		o.put(s.prefix+kOutboxSeq, persist.SeqKey(o.seq))
		*seqs = append(*seqs, o.seq)
	}
	if p.Delete {
		return o.delete(s, p.ID)
	}
	o.put(s.k(bInstances, id), p.Record)
	for _, kv := range p.Puts {
		o.put(s.k(bVars, kv[0]), kv[1])
	}
	for _, k := range p.Dels {
		o.del(s.k(bVars, k))
	}
	for _, k := range p.RemoveRoutes {
		rk := s.k(bRoutes, k)
		if cur, ok := o.get(rk); ok && bytes.Equal(cur, id) {
			o.del(rk)
		}
		o.del(s.k(bIndex, persist.IndexKey(p.ID, persist.IndexRoute, k)))
	}
	for _, k := range p.AddRoutes {
		rk := s.k(bRoutes, k)
		if cur, ok := o.get(rk); ok && !bytes.Equal(cur, id) {
			return fmt.Errorf("%w: key %q is bound to instance %q", persist.ErrConflict, k, cur)
		}
		o.put(rk, id)
		o.put(s.k(bIndex, persist.IndexKey(p.ID, persist.IndexRoute, k)), []byte{})
	}
	for _, k := range p.RemoveTimers {
		o.del(s.k(bTimers, k))
		o.del(s.k(bIndex, persist.IndexKey(p.ID, persist.IndexTimer, k)))
	}
	for _, k := range p.AddTimers {
		o.put(s.k(bTimers, k), []byte{})
		o.put(s.k(bIndex, persist.IndexKey(p.ID, persist.IndexTimer, k)), []byte{})
	}
	return nil
}

// delete removes the instance, its variables and the routes and timers its
// index lists.
func (o *overlay) delete(s *Store, id string) error {
	pre := s.k(bIndex, persist.KeyPrefix(id))
	for _, k := range o.keysWithPrefix(pre) {
		rest := k[len(pre):]
		if rest == "" {
			return fmt.Errorf("%w: empty index entry for instance %q", persist.ErrCorrupt, id)
		}
		switch key := rest[1:]; rest[0] {
		case persist.IndexRoute:
			rk := s.prefix + bRoutes + key
			if cur, ok := o.get(rk); ok && string(cur) == id {
				o.del(rk)
			}
		case persist.IndexTimer:
			o.del(s.prefix + bTimers + key)
		}
		o.del(k)
	}
	for _, k := range o.keysWithPrefix(s.k(bVars, persist.KeyPrefix(id))) {
		o.del(k)
	}
	o.del(s.k(bInstances, []byte(id)))
	return nil
}

// AckOutbox durably removes the outbox message seq once it has been sent.
// Acknowledging an unknown or already acknowledged seq is not an error.
func (s *Store) AckOutbox(seq uint64) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.inflight.Done()
	ctx, cancel := s.ctx()
	defer cancel()
	if _, err := s.cli.Delete(ctx, s.k(bOutbox, persist.SeqKey(seq))); err != nil {
		return unavailable(fmt.Sprintf("ack outbox %d", seq), err)
	}
	return nil
}
