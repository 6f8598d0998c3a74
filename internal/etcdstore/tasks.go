package etcdstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// The human tasks of internal/humantask live under <prefix>tasks/<id>,
// opaque records as in the bbolt store's tasks bucket. Any node reads
// and updates any task: an update is a compare-and-swap on the key's
// revision, run again when another node changed the task in between.
// The methods make *Store a humantask.Store.

const bTasks = "tasks/"

// taskCASAttempts bounds the compare-and-swap retries of one UpdateTask.
const taskCASAttempts = 16

// errTaskContended is UpdateTask's error when other nodes kept changing
// the task.
var errTaskContended = errors.New("etcdstore: task update lost to concurrent updates too many times")

// Task returns the record of task id; ok is false when there is none.
func (s *Store) Task(id string) ([]byte, bool, error) {
	if err := s.enter(); err != nil {
		return nil, false, err
	}
	defer s.inflight.Done()
	ctx, cancel := s.ctx()
	defer cancel()
	resp, err := s.cli.Get(ctx, s.k(bTasks, []byte(id)))
	if err != nil {
		return nil, false, unavailable("task "+id, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, false, nil
	}
	return resp.Kvs[0].Value, true, nil
}

// UpdateTask replaces the record of task id with what fn returns for the
// current one (nil when there is none): a compare-and-swap on the key's
// revision, so fn runs again with the other node's record when one
// changed it meanwhile. A nil record deletes the task; an error of fn
// leaves it and is returned.
func (s *Store) UpdateTask(id string, fn func(old []byte) ([]byte, error)) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.inflight.Done()
	key := s.k(bTasks, []byte(id))
	for attempt := range taskCASAttempts {
		ctx, cancel := s.ctx()
		resp, err := s.cli.Get(ctx, key)
		cancel()
		if err != nil {
			return unavailable("task "+id, err)
		}
		var old []byte
		var rev int64
		if len(resp.Kvs) > 0 {
			old, rev = resp.Kvs[0].Value, resp.Kvs[0].ModRevision
		}
		nv, err := fn(old)
		if err != nil {
			return err
		}
		op := clientv3.OpPut(key, string(nv))
		if nv == nil {
			op = clientv3.OpDelete(key)
		}
		ctx, cancel = s.ctx()
		tr, err := s.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).Then(op).Commit()
		cancel()
		if err != nil {
			return unavailable("task "+id, err)
		}
		if tr.Succeeded {
			return nil
		}
		// Lost to another update: wait a random while, up to twice as
		// long each time, so that updaters of one hot task do not keep
		// colliding in step (one of them could lose every round).
		time.Sleep(rand.N(time.Millisecond << min(attempt, 6)))
	}
	return errTaskContended
}

// Tasks calls fn with every task record until fn returns false.
func (s *Store) Tasks(fn func(id string, rec []byte) bool) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.inflight.Done()
	pre := s.prefix + bTasks
	var rev int64
	return s.scan(context.Background(), pre, &rev, false, func(k, v []byte) (bool, error) {
		return fn(string(k), v), nil
	})
}
