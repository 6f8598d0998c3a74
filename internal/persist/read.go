package persist

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Instance returns the instance with the given ID and all its variables
// (slot -> serialized value). It fails with ErrNotFound if there is none.
func (s *Store) Instance(id string) (*Instance, map[int][]byte, error) {
	var (
		in   *Instance
		vars map[int][]byte
	)
	err := s.view(func(tx *bolt.Tx) error {
		v := tx.Bucket([]byte(bucketInstances)).Get([]byte(id))
		if v == nil {
			return fmt.Errorf("persist: instance %q: %w", id, ErrNotFound)
		}
		var err error
		if in, err = decodeInstance(id, v); err != nil {
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		prefix := idPrefix(id)
		c := tx.Bucket([]byte(bucketVars)).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(k) != len(prefix)+slotLen {
				return fmt.Errorf("variable key of %d bytes for instance %q", len(k), id)
			}
			if vars == nil {
				vars = make(map[int][]byte)
			}
			vars[int(binary.BigEndian.Uint32(k[len(prefix):]))] = bytes.Clone(v)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return in, vars, nil
}

// Route returns the instance bound to key, if any.
func (s *Store) Route(key string) (instanceID string, ok bool, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		if v := tx.Bucket([]byte(bucketRoutes)).Get([]byte(key)); v != nil {
			instanceID, ok = string(v), true
		}
		return nil
	})
	return instanceID, ok, err
}

// Routes calls fn for every route in key order until fn returns false.
func (s *Store) Routes(fn func(Route) bool) error {
	return s.view(func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte(bucketRoutes)).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if !callback(fn, Route{Key: string(k), InstanceID: string(v)}) {
				return nil
			}
		}
		return nil
	})
}

// Instances calls fn for every instance (without its variables) in ID order,
// which is creation order for IDs from NewID, until fn returns false. Each
// *Instance is fresh; fn may keep it. A record that cannot be decoded is
// passed too, as an Instance with only ID and Err set, so one damaged
// record does not hide the others.
//
// fn (here and in Routes, Timers and Outbox) runs inside a read transaction:
// it must not call Commit or AckOutbox, because a write that grows the file
// waits for open read transactions to end, and would wait for this one
// forever. Collect, return false or finish, then write.
func (s *Store) Instances(fn func(*Instance) bool) error {
	return s.view(func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte(bucketInstances)).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			in, err := decodeInstance(string(k), v)
			if err != nil {
				in = &Instance{ID: string(k), Err: fmt.Errorf("%w: %w", ErrCorrupt, err)}
			}
			if !callback(fn, in) {
				return nil
			}
		}
		return nil
	})
}

// Timers calls fn for every timer in Due order (ties by instance ID, then
// tag) until fn returns false.
func (s *Store) Timers(fn func(Timer) bool) error {
	return s.view(func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte(bucketTimers)).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			t, err := decodeTimerKey(k)
			if err != nil {
				return err
			}
			if !callback(fn, t) {
				return nil
			}
		}
		return nil
	})
}

// Outbox calls fn for every unacknowledged outbox message in Seq order until
// fn returns false.
func (s *Store) Outbox(fn func(OutboxMessage) bool) error {
	return s.view(func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte(bucketOutbox)).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			m, err := decodeOutbox(k, v)
			if err != nil {
				m.Err = fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
			if !callback(fn, m) {
				return nil
			}
		}
		return nil
	})
}

// AckOutbox durably removes the outbox message seq once it has been sent.
// Acknowledging an unknown or already acknowledged seq is not an error.
// Concurrent acknowledgements (and Commits) share a write transaction.
func (s *Store) AckOutbox(seq uint64) error {
	key := binary.BigEndian.AppendUint64(nil, seq)
	err := s.update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucketOutbox)).Delete(key)
	})
	if err != nil {
		return fmt.Errorf("persist: ack outbox %d: %w", seq, err)
	}
	return nil
}
