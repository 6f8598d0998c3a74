package persist

import (
	"bytes"

	bolt "go.etcd.io/bbolt"
)

// The tasks bucket holds the human tasks of internal/humantask: opaque
// records under the task's id, which this package never decodes. The
// methods make *Store a humantask.Store.

// Task returns the record of task id; ok is false when there is none.
func (s *Store) Task(id string) (rec []byte, ok bool, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketTasks))
		if b == nil {
			return nil
		}
		if v := b.Get([]byte(id)); v != nil {
			rec, ok = bytes.Clone(v), true
		}
		return nil
	})
	return rec, ok, err
}

// UpdateTask replaces the record of task id with what fn returns for the
// current one (nil when there is none), in one write transaction that
// may be shared with others (group commit; fn may run more than once).
// A nil record deletes the task; an error of fn leaves it and is
// returned. It returns once the change is on disk.
func (s *Store) UpdateTask(id string, fn func(old []byte) ([]byte, error)) error {
	return s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(bucketTasks))
		if err != nil {
			return err
		}
		var old []byte
		if v := b.Get([]byte(id)); v != nil {
			old = bytes.Clone(v)
		}
		nv, err := fn(old)
		if err != nil {
			return err
		}
		if nv == nil {
			return b.Delete([]byte(id))
		}
		return b.Put([]byte(id), nv)
	})
}

// Tasks calls fn with every task record, in id order, until fn returns
// false.
func (s *Store) Tasks(fn func(id string, rec []byte) bool) error {
	type kv struct {
		k string
		v []byte
	}
	var all []kv
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketTasks))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			all = append(all, kv{string(k), bytes.Clone(v)})
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, x := range all {
		if !fn(x.k, x.v) {
			return nil
		}
	}
	return nil
}
