package persist

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// op is one prepared checkpoint: everything that can be computed outside
// the write transaction is, so the shared transaction stays short.
type op struct {
	cp        *Checkpoint
	id        []byte
	prefix    []byte // id + 0x00
	record    []byte // encoded instance, nil when deleting
	puts      []kv   // vars to put
	dels      [][]byte
	addRoutes [][]byte
	rmRoutes  [][]byte
	addTimers [][]byte
	rmTimers  [][]byte
	outbox    [][]byte
}

type kv struct{ k, v []byte }

// Commit writes the checkpoints durably, all or nothing, and returns after
// the data is on disk (after fsync, unless Options.NoSync).
//
// Concurrent Commit calls share one write transaction and one fsync (group
// commit through bbolt's DB.Batch). A Commit that finds no other write in
// flight starts its transaction at once instead of waiting
// Options.MaxBatchDelay; callers arriving while it runs form the next group.
// Within a group each call stays all-or-nothing: a call that fails is taken
// out and retried alone, and the others are committed without it.
//
// Checkpoints are applied in order, so several checkpoints of one instance
// may be passed. On success Commit writes the assigned sequence numbers into
// each cp.Outbox[i].Seq. Errors: ErrInvalid (nothing was tried), ErrConflict,
// ErrClosed, ErrCorrupt, or the I/O error of the failed write (disk full...);
// in every case nothing of this call is visible.
func (s *Store) Commit(cps ...*Checkpoint) (err error) {
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
	ops := make([]op, len(cps))
	var written uint64
	for i, cp := range cps {
		if cp == nil {
			return fmt.Errorf("%w: checkpoint %d is nil", ErrInvalid, i)
		}
		if err := prepare(&ops[i], cp, start); err != nil {
			return fmt.Errorf("%w: checkpoint %d: %v", ErrInvalid, i, err)
		}
		written += ops[i].size()
	}
	var seqs []uint64
	err = s.update(func(tx *bolt.Tx) error {
		seqs = seqs[:0] // idempotent: Batch may rerun this
		bk := buckets(tx)
		for i := range ops {
			if err := ops[i].apply(bk, &seqs); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("persist: commit: %w", err)
	}
	n := 0
	for _, cp := range cps {
		for j := range cp.Outbox {
			cp.Outbox[j].Seq = seqs[n]
			n++
		}
	}
	s.checkpoints.Add(uint64(len(cps)))
	s.bytesWritten.Add(written)
	return nil
}

// validID reports why an instance ID cannot be used as a key prefix.
func validID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("empty instance ID")
	case len(id) > MaxIDLen:
		return fmt.Errorf("instance ID of %d bytes (max %d)", len(id), MaxIDLen)
	case strings.IndexByte(id, sep) >= 0:
		return fmt.Errorf("instance ID %q contains a NUL byte", id)
	}
	return nil
}

// owner checks that a route, timer or message names the checkpoint's
// instance (or none) and returns the instance ID to use.
func owner(what, named, id string) (string, error) {
	if named != "" && named != id {
		return "", fmt.Errorf("%s names instance %q, checkpoint is for %q", what, named, id)
	}
	return id, nil
}

func prepare(o *op, cp *Checkpoint, now time.Time) error {
	in := &cp.Instance
	if err := validID(in.ID); err != nil {
		return err
	}
	o.cp = cp
	o.id = []byte(in.ID)
	o.prefix = idPrefix(in.ID)
	for i := range cp.Outbox {
		m := cp.Outbox[i]
		var err error
		if m.InstanceID, err = owner("outbox message", m.InstanceID, in.ID); err != nil {
			return err
		}
		o.outbox = append(o.outbox, encodeOutbox(&m))
	}
	if cp.Delete {
		return nil
	}
	if !in.State.valid() {
		return fmt.Errorf("instance %q: invalid state %d", in.ID, uint8(in.State))
	}
	rec := *in
	if rec.Created.IsZero() {
		rec.Created = now
	}
	if rec.Updated.IsZero() {
		rec.Updated = now
	}
	o.record = encodeInstance(&rec)
	for slot, v := range cp.Vars {
		if slot < 0 || int64(slot) > 1<<32-1 {
			return fmt.Errorf("instance %q: variable slot %d out of range", in.ID, slot)
		}
		if v == nil {
			o.dels = append(o.dels, varKey(in.ID, slot))
		} else {
			o.puts = append(o.puts, kv{varKey(in.ID, slot), v})
		}
	}
	routes := func(rs []Route) ([][]byte, error) {
		var keys [][]byte
		for _, r := range rs {
			if _, err := owner("route", r.InstanceID, in.ID); err != nil {
				return nil, err
			}
			if r.Key == "" || len(r.Key) > MaxKeyLen {
				return nil, fmt.Errorf("route key of %d bytes (want 1 to %d)", len(r.Key), MaxKeyLen)
			}
			keys = append(keys, []byte(r.Key))
		}
		return keys, nil
	}
	timers := func(ts []Timer) ([][]byte, error) {
		var keys [][]byte
		for _, t := range ts {
			var err error
			if t.InstanceID, err = owner("timer", t.InstanceID, in.ID); err != nil {
				return nil, err
			}
			if t.Due.IsZero() {
				return nil, fmt.Errorf("timer %q has no due time", t.Tag)
			}
			if len(t.Tag) > MaxKeyLen {
				return nil, fmt.Errorf("timer tag of %d bytes (max %d)", len(t.Tag), MaxKeyLen)
			}
			keys = append(keys, timerKey(&t))
		}
		return keys, nil
	}
	var err error
	if o.addRoutes, err = routes(cp.AddRoutes); err != nil {
		return err
	}
	if o.rmRoutes, err = routes(cp.RemoveRoutes); err != nil {
		return err
	}
	if o.addTimers, err = timers(cp.AddTimers); err != nil {
		return err
	}
	if o.rmTimers, err = timers(cp.RemoveTimers); err != nil {
		return err
	}
	return nil
}

// size is the number of key and value bytes the op puts (Stats.BytesWritten).
func (o *op) size() uint64 {
	n := 0
	if o.record != nil {
		n += len(o.id) + len(o.record)
	}
	for _, p := range o.puts {
		n += len(p.k) + len(p.v)
	}
	for _, k := range o.addRoutes {
		n += 2*len(k) + 2*len(o.id) + 2
	}
	for _, k := range o.addTimers {
		n += 2*len(k) + len(o.id) + 2
	}
	for _, v := range o.outbox {
		n += seqLen + len(v)
	}
	return uint64(n)
}

// bucketSet holds the buckets of one write transaction.
type bucketSet struct {
	instances, vars, routes, timers, outbox, index *bolt.Bucket
}

func buckets(tx *bolt.Tx) *bucketSet {
	return &bucketSet{
		instances: tx.Bucket([]byte(bucketInstances)),
		vars:      tx.Bucket([]byte(bucketVars)),
		routes:    tx.Bucket([]byte(bucketRoutes)),
		timers:    tx.Bucket([]byte(bucketTimers)),
		outbox:    tx.Bucket([]byte(bucketOutbox)),
		index:     tx.Bucket([]byte(bucketIndex)),
	}
}

// apply writes the op in tx. It only reads and writes the transaction (and
// appends to *seqs), so a rerun after a rollback gives the same result.
func (o *op) apply(b *bucketSet, seqs *[]uint64) error {
	for _, v := range o.outbox {
		seq, err := b.outbox.NextSequence()
		if err != nil {
			return err
		}
		if err := b.outbox.Put(binary.BigEndian.AppendUint64(nil, seq), v); err != nil {
			return err
		}
		*seqs = append(*seqs, seq)
	}
	if o.cp.Delete {
		return o.delete(b)
	}
	if err := b.instances.Put(o.id, o.record); err != nil {
		return err
	}
	for _, p := range o.puts {
		if err := b.vars.Put(p.k, p.v); err != nil {
			return err
		}
	}
	for _, k := range o.dels {
		if err := b.vars.Delete(k); err != nil {
			return err
		}
	}
	for _, k := range o.rmRoutes {
		if cur := b.routes.Get(k); cur != nil && bytes.Equal(cur, o.id) {
			if err := b.routes.Delete(k); err != nil {
				return err
			}
		}
		if err := b.index.Delete(indexKey(o.cp.Instance.ID, kindRoute, k)); err != nil {
			return err
		}
	}
	for _, k := range o.addRoutes {
		if cur := b.routes.Get(k); cur != nil && !bytes.Equal(cur, o.id) {
			return fmt.Errorf("%w: key %q is bound to instance %q", ErrConflict, k, cur)
		}
		if err := b.routes.Put(k, o.id); err != nil {
			return err
		}
		if err := b.index.Put(indexKey(o.cp.Instance.ID, kindRoute, k), []byte{}); err != nil {
			return err
		}
	}
	for _, k := range o.rmTimers {
		if err := b.timers.Delete(k); err != nil {
			return err
		}
		if err := b.index.Delete(indexKey(o.cp.Instance.ID, kindTimer, k)); err != nil {
			return err
		}
	}
	for _, k := range o.addTimers {
		if err := b.timers.Put(k, []byte{}); err != nil {
			return err
		}
		if err := b.index.Put(indexKey(o.cp.Instance.ID, kindTimer, k), []byte{}); err != nil {
			return err
		}
	}
	return nil
}

// delete removes the instance record, its vars, and the routes and timers its
// index lists, without scanning other instances' entries.
func (o *op) delete(b *bucketSet) error {
	var idx [][]byte
	c := b.index.Cursor()
	for k, _ := c.Seek(o.prefix); k != nil && bytes.HasPrefix(k, o.prefix); k, _ = c.Next() {
		idx = append(idx, bytes.Clone(k))
	}
	for _, k := range idx {
		rest := k[len(o.prefix):]
		if len(rest) == 0 {
			return fmt.Errorf("%w: empty index entry for instance %q", ErrCorrupt, o.id)
		}
		switch key := rest[1:]; rest[0] {
		case kindRoute:
			if cur := b.routes.Get(key); cur != nil && bytes.Equal(cur, o.id) {
				if err := b.routes.Delete(key); err != nil {
					return err
				}
			}
		case kindTimer:
			if err := b.timers.Delete(key); err != nil {
				return err
			}
		}
		if err := b.index.Delete(k); err != nil {
			return err
		}
	}
	var vars [][]byte
	c = b.vars.Cursor()
	for k, _ := c.Seek(o.prefix); k != nil && bytes.HasPrefix(k, o.prefix); k, _ = c.Next() {
		vars = append(vars, bytes.Clone(k))
	}
	for _, k := range vars {
		if err := b.vars.Delete(k); err != nil {
			return err
		}
	}
	return b.instances.Delete(o.id)
}
