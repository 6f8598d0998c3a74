package persist

import (
	"bytes"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Scan bounds one page of ScanInstances: a range of instance IDs, walked
// newest (highest ID) first, and the work the page may do.
type Scan struct {
	// Before is the exclusive upper bound: only IDs below it are read
	// (the cursor of the previous page, or IDPrefix of a time bound);
	// empty means from the newest.
	Before string
	// From is the inclusive lower bound; empty means to the oldest.
	From string
	// Limit stops the page after this many matches; 0 means no limit.
	Limit int
	// MaxScanned stops the page after this many records were read,
	// matching or not; 0 means no cap.
	MaxScanned int
}

// ScanResult says how far a page of ScanInstances got.
type ScanResult struct {
	// Next is the ID of the last record read when the page stopped
	// early (Limit or MaxScanned): pass it as the next page's Before.
	// Empty when the range was read to its end.
	Next string
	// Scanned counts the records read; Matched those fn accepted.
	Scanned, Matched int
}

// InstanceView is an instance record as ScanInstances reads it: its header
// is decoded, its frames and correlation keys are read in place. A view
// and every slice it returns are valid only during the callback; copy what
// must outlive it.
type InstanceView struct {
	State            State
	Created, Updated time.Time
	// Err is set when the record cannot be decoded (the other fields are
	// then zero): a listing shows the instance as broken.
	Err error

	id, process, fault, frames, corr []byte
	ncorr                            uint64
}

// ID returns the instance ID (a copy).
func (v *InstanceView) ID() string { return string(v.id) }

// Process returns the process QName, {ns}local (a copy).
func (v *InstanceView) Process() string { return string(v.process) }

// ProcessIs reports whether the process QName is name, without copying.
func (v *InstanceView) ProcessIs(name string) bool { return string(v.process) == name }

// Fault returns why the instance faulted or was suspended (a copy).
func (v *InstanceView) Fault() string { return string(v.fault) }

// Frames returns the opaque control state, in place: valid only during
// the callback.
func (v *InstanceView) Frames() []byte { return v.frames }

// Correlations calls fn for each correlation set, in name order, with
// the set name and its opaque key, both in place, until fn returns false.
func (v *InstanceView) Correlations(fn func(name, key []byte) bool) {
	d := Reader{B: v.corr}
	for range v.ncorr {
		name, key := d.Raw(), d.Raw()
		if d.Err != nil || !fn(name, key) {
			return
		}
	}
}

// decodeView reads the record v of instance k into view, in place.
func decodeView(k, v []byte, view *InstanceView) {
	*view = InstanceView{id: k}
	d := Reader{B: v}
	if f := d.byte(); d.Err == nil && f != instanceFormat {
		view.Err = fmt.Errorf("instance %q: unknown record format %d", k, f)
		return
	}
	st := State(d.byte())
	created, updated := d.Varint(), d.Varint()
	process, fault, frames := d.Raw(), d.Raw(), d.Raw()
	n := d.Uvarint()
	corr := d.B
	for i := uint64(0); i < n && d.Err == nil; i++ {
		d.Raw()
		d.Raw()
	}
	if err := d.done(); err != nil {
		view.Err = fmt.Errorf("instance %q: %w", k, err)
		return
	}
	if !st.valid() {
		view.Err = fmt.Errorf("instance %q: invalid state %d", k, uint8(st))
		return
	}
	view.State, view.Created, view.Updated = st, time.Unix(0, created), time.Unix(0, updated)
	view.process, view.fault, view.frames, view.corr, view.ncorr = process, fault, frames, corr, n
}

// ScanInstances reads the instances whose IDs lie in sc's range, newest
// (highest ID) first, and calls fn with each; fn reports whether the
// instance matches what the caller looks for. The page stops after
// sc.Limit matches or sc.MaxScanned records, whichever comes first, and
// the result's Next says where the next page starts. Each record's header
// is decoded in place: variables are not read, nothing is copied unless fn
// copies it, so a page costs about MaxScanned small reads however many
// instances the store holds.
//
// fn runs inside a read transaction, with the same rules as Instances'.
func (s *Store) ScanInstances(sc Scan, fn func(*InstanceView) bool) (ScanResult, error) {
	var res ScanResult
	from := []byte(sc.From)
	err := s.view(func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte(bucketInstances)).Cursor()
		var k, v []byte
		if sc.Before == "" {
			k, v = c.Last()
		} else if k, v = c.Seek([]byte(sc.Before)); k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		var view InstanceView
		for ; k != nil; k, v = c.Prev() {
			if len(from) > 0 && bytes.Compare(k, from) < 0 {
				return nil
			}
			res.Scanned++
			decodeView(k, v, &view)
			if callback(fn, &view) {
				res.Matched++
			}
			if (sc.Limit > 0 && res.Matched >= sc.Limit) || (sc.MaxScanned > 0 && res.Scanned >= sc.MaxScanned) {
				// More may follow: the next page starts below this one.
				if pk, _ := c.Prev(); pk != nil && (len(from) == 0 || bytes.Compare(pk, from) >= 0) {
					res.Next = string(k)
				}
				return nil
			}
		}
		return nil
	})
	return res, err
}

// InstanceTimers returns the pending timers of instance id, in Due order,
// from the per-instance index (no scan of the timers bucket).
func (s *Store) InstanceTimers(id string) ([]Timer, error) {
	var out []Timer
	prefix := append(idPrefix(id), kindTimer)
	err := s.view(func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte(bucketIndex)).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			t, err := decodeTimerKey(k[len(prefix):])
			if err != nil {
				return fmt.Errorf("%w: index of instance %q: %v", ErrCorrupt, id, err)
			}
			out = append(out, t)
		}
		return nil
	})
	return out, err
}

// IDPrefix returns the first 10 characters NewID gives an ID created at t
// (its Unix millisecond in Crockford base32). IDs of instances created at
// or after t sort at or above IDPrefix(t), those created before it below:
// a creation-time bound is an ID range (Scan.From, Scan.Before).
func IDPrefix(t time.Time) string {
	ms := uint64(t.UnixMilli())
	if t.UnixMilli() < 0 {
		ms = 0
	}
	var out [10]byte
	for i := 9; i >= 0; i-- {
		out[i] = crockford[ms&31]
		ms >>= 5
	}
	return string(out[:])
}
