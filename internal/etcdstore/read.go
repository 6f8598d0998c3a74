package etcdstore

import (
	"context"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orchd/orchd/internal/persist"
)

// pageSize is how many keys one range read of a listing returns.
const pageSize = 512

// Instance returns the instance with the given ID and all its variables
// (slot -> serialized value), read in one transaction. It fails with
// persist.ErrNotFound if there is none.
func (s *Store) Instance(id string) (*persist.Instance, map[int][]byte, error) {
	if err := s.enter(); err != nil {
		return nil, nil, err
	}
	defer s.inflight.Done()
	ctx, cancel := s.ctx()
	defer cancel()
	resp, err := s.cli.Txn(ctx).Then(
		clientv3.OpGet(s.k(bInstances, []byte(id))),
		clientv3.OpGet(s.k(bVars, persist.KeyPrefix(id)), clientv3.WithPrefix()),
	).Commit()
	if err != nil {
		return nil, nil, unavailable(fmt.Sprintf("instance %q", id), err)
	}
	rec := resp.Responses[0].GetResponseRange().Kvs
	if len(rec) == 0 {
		return nil, nil, fmt.Errorf("etcdstore: instance %q: %w", id, persist.ErrNotFound)
	}
	in, err := persist.DecodeInstance(id, rec[0].Value)
	if err != nil {
		return nil, nil, fmt.Errorf("etcdstore: %w: %w", persist.ErrCorrupt, err)
	}
	var vars map[int][]byte
	vp := len(s.prefix) + len(bVars)
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		slot, err := persist.SlotOf(id, kv.Key[vp:])
		if err != nil {
			return nil, nil, fmt.Errorf("etcdstore: %w: %w", persist.ErrCorrupt, err)
		}
		if vars == nil {
			vars = make(map[int][]byte)
		}
		vars[slot] = kv.Value
	}
	return in, vars, nil
}

// Route returns the instance bound to key, if any.
func (s *Store) Route(key string) (string, bool, error) {
	if err := s.enter(); err != nil {
		return "", false, err
	}
	defer s.inflight.Done()
	ctx, cancel := s.ctx()
	defer cancel()
	resp, err := s.cli.Get(ctx, s.k(bRoutes, []byte(key)))
	if err != nil {
		return "", false, unavailable("route", err)
	}
	if len(resp.Kvs) == 0 {
		return "", false, nil
	}
	return string(resp.Kvs[0].Value), true, nil
}

// each calls fn with the key (after the bucket prefix) and value of every
// key in bucket, in key order, page by page at the revision of the first
// page, until fn returns false or an error.
func (s *Store) each(bucket string, keysOnly bool, fn func(k, v []byte) (bool, error)) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.inflight.Done()
	var rev int64
	return s.scan(context.Background(), s.prefix+bucket, &rev, keysOnly, fn)
}

// scan calls fn with the key (after pre) and value of every key under
// pre, in key order, page by page (each page bounded by
// Options.RequestTimeout within ctx) at revision *rev, until fn returns
// false or an error. A zero *rev is set to the revision of the first page.
func (s *Store) scan(ctx context.Context, pre string, rev *int64, keysOnly bool, fn func(k, v []byte) (bool, error)) error {
	end := clientv3.GetPrefixRangeEnd(pre)
	from := pre
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(pageSize)}
		if keysOnly {
			opts = append(opts, clientv3.WithKeysOnly())
		}
		if *rev != 0 {
			opts = append(opts, clientv3.WithRev(*rev))
		}
		pctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
		resp, err := s.cli.Get(pctx, from, opts...)
		cancel()
		if err != nil {
			return unavailable("list "+strings.TrimPrefix(pre, s.prefix), err)
		}
		if *rev == 0 {
			*rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			more, err := fn(kv.Key[len(pre):], kv.Value)
			if err != nil || !more {
				return err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// Instances calls fn for every instance (without its variables) in ID
// order until fn returns false. A record that cannot be decoded is passed
// as an Instance with only ID and Err set.
func (s *Store) Instances(fn func(*persist.Instance) bool) error {
	return s.each(bInstances, false, func(k, v []byte) (bool, error) {
		in, err := persist.DecodeInstance(string(k), v)
		if err != nil {
			in = &persist.Instance{ID: string(k), Err: fmt.Errorf("%w: %w", persist.ErrCorrupt, err)}
		}
		return fn(in), nil
	})
}

// Timers calls fn for every timer in Due order (ties by instance ID, then
// tag) until fn returns false.
func (s *Store) Timers(fn func(persist.Timer) bool) error {
	return s.each(bTimers, true, func(k, _ []byte) (bool, error) {
		t, err := persist.DecodeTimerKey(k)
		if err != nil {
			return false, fmt.Errorf("etcdstore: %w: %w", persist.ErrCorrupt, err)
		}
		return fn(t), nil
	})
}

// Outbox calls fn for every unacknowledged outbox message in Seq order
// until fn returns false.
func (s *Store) Outbox(fn func(persist.OutboxMessage) bool) error {
	return s.each(bOutbox, false, func(k, v []byte) (bool, error) {
		m, err := persist.DecodeOutbox(k, v)
		if err != nil {
			m.Err = fmt.Errorf("etcdstore: %w: %w", persist.ErrCorrupt, err)
		}
		return fn(m), nil
	})
}

// InstanceTimers returns the pending timers of instance id, in Due order,
// from the per-instance index.
func (s *Store) InstanceTimers(id string) ([]persist.Timer, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.inflight.Done()
	pre := s.k(bIndex, append(persist.KeyPrefix(id), persist.IndexTimer))
	ctx, cancel := s.ctx()
	defer cancel()
	resp, err := s.cli.Get(ctx, pre, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, unavailable("instance timers", err)
	}
	var out []persist.Timer
	for _, kv := range resp.Kvs {
		t, err := persist.DecodeTimerKey(kv.Key[len(pre):])
		if err != nil {
			return nil, fmt.Errorf("etcdstore: %w: index of instance %q: %w", persist.ErrCorrupt, id, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// ScanInstances reads the instances whose IDs lie in sc's range, newest
// (highest ID) first, and calls fn with each, as persist.Store's does: the
// page stops after sc.Limit matches or sc.MaxScanned records, and the
// result's Next says where the next page starts.
func (s *Store) ScanInstances(sc persist.Scan, fn func(*persist.InstanceView) bool) (persist.ScanResult, error) {
	var res persist.ScanResult
	if err := s.enter(); err != nil {
		return res, err
	}
	defer s.inflight.Done()
	pre := s.prefix + bInstances
	lo := pre + sc.From
	hi := clientv3.GetPrefixRangeEnd(pre)
	if sc.Before != "" {
		hi = pre + sc.Before
	}
	var rev int64
	var view persist.InstanceView
	for {
		limit := int64(pageSize)
		if sc.MaxScanned > 0 {
			// One more than needed tells whether a next page exists.
			limit = min(limit, int64(sc.MaxScanned-res.Scanned)+1)
		}
		opts := []clientv3.OpOption{clientv3.WithRange(hi), clientv3.WithLimit(limit),
			clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.RequestTimeout)
		resp, err := s.cli.Get(ctx, lo, opts...)
		cancel()
		if err != nil {
			return res, unavailable("scan instances", err)
		}
		rev = resp.Header.Revision
		for i, kv := range resp.Kvs {
			k := kv.Key[len(pre):]
			res.Scanned++
			persist.DecodeView(k, kv.Value, &view)
			if fn(&view) {
				res.Matched++
			}
			if (sc.Limit > 0 && res.Matched >= sc.Limit) || (sc.MaxScanned > 0 && res.Scanned >= sc.MaxScanned) {
				if i+1 < len(resp.Kvs) || resp.More {
					res.Next = string(k)
				}
				return res, nil
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return res, nil
		}
		hi = string(resp.Kvs[len(resp.Kvs)-1].Key)
	}
}
