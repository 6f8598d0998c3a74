package persist

import (
	"encoding/binary"
	"fmt"
	"time"
)

// This file exports the record formats and the checkpoint preparation for
// other implementations of the instance store (internal/etcdstore), so that
// every store writes the same bytes under the same keys (doc.go, "Layout")
// and validates checkpoints the same way.

// Index entry kinds: the byte after id 0x00 in an index key.
const (
	IndexRoute = kindRoute
	IndexTimer = kindTimer
)

// Prepared is a validated checkpoint with its keys and records encoded:
// what a store writes for it, bucket by bucket (keys are bucket-relative,
// as in doc.go's "Layout"). Apply it in this order: outbox records, then
// (unless Delete) the instance record, Puts, Dels, RemoveRoutes,
// AddRoutes, RemoveTimers, AddTimers, each with its index entries.
type Prepared struct {
	ID                      string
	Delete                  bool
	Record                  []byte      // encoded instance record; nil when Delete
	Puts                    [][2][]byte // vars key, value
	Dels                    [][]byte    // vars keys
	AddRoutes, RemoveRoutes [][]byte    // route keys
	AddTimers, RemoveTimers [][]byte    // timer keys (timers bucket)
	Outbox                  [][]byte    // encoded outbox records, sequence assigned by the store
	Size                    uint64      // bytes put, as counted in Stats.BytesWritten
}

// Prepare validates cp as Commit does and encodes it; now replaces zero
// Created and Updated times. Errors wrap ErrInvalid.
func Prepare(cp *Checkpoint, now time.Time) (*Prepared, error) {
	if cp == nil {
		return nil, fmt.Errorf("%w: nil checkpoint", ErrInvalid)
	}
	var o op
	if err := prepare(&o, cp, now); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	p := &Prepared{ID: cp.Instance.ID, Delete: cp.Delete, Record: o.record, Dels: o.dels,
		AddRoutes: o.addRoutes, RemoveRoutes: o.rmRoutes, AddTimers: o.addTimers, RemoveTimers: o.rmTimers,
		Outbox: o.outbox, Size: o.size()}
	for _, kv := range o.puts {
		p.Puts = append(p.Puts, [2][]byte{kv.k, kv.v})
	}
	return p, nil
}

// EncodeInstance returns the instance record of in (doc.go, "Instance record").
func EncodeInstance(in *Instance) []byte { return encodeInstance(in) }

// DecodeInstance decodes the instance record v of instance id.
func DecodeInstance(id string, v []byte) (*Instance, error) { return decodeInstance(id, v) }

// DecodeView decodes the record v of instance id into view, in place, as
// ScanInstances does; a record that does not decode sets view.Err.
func DecodeView(id, v []byte, view *InstanceView) { decodeView(id, v, view) }

// SeqKey returns the outbox key of seq (big-endian uint64).
func SeqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// DecodeOutbox decodes the outbox record v stored under key k (SeqKey).
func DecodeOutbox(k, v []byte) (OutboxMessage, error) { return decodeOutbox(k, v) }

// VarKey returns the vars key of slot of instance id.
func VarKey(id string, slot int) []byte { return varKey(id, slot) }

// SlotOf returns the slot of a vars key of instance id.
func SlotOf(id string, k []byte) (int, error) {
	if len(k) != len(id)+1+slotLen {
		return 0, fmt.Errorf("variable key of %d bytes for instance %q", len(k), id)
	}
	return int(binary.BigEndian.Uint32(k[len(id)+1:])), nil
}

// KeyPrefix returns id 0x00, the prefix of instance id's vars and index keys.
func KeyPrefix(id string) []byte { return idPrefix(id) }

// TimerKey returns the timers key of t; t.InstanceID must be set.
func TimerKey(t *Timer) []byte { return timerKey(t) }

// DecodeTimerKey decodes a timers key.
func DecodeTimerKey(k []byte) (Timer, error) { return decodeTimerKey(k) }

// IndexKey returns the index key of a route or timer (kind IndexRoute or
// IndexTimer) of instance id.
func IndexKey(id string, kind byte, key []byte) []byte { return indexKey(id, kind, key) }
