package persist

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"
)

// Record format versions (first byte of every instance and outbox value).
const (
	instanceFormat byte = 1
	outboxFormat   byte = 1
)

// Key building blocks. See doc.go, "Layout".
const (
	sep       = 0x00 // separates an instance ID from what follows it in a key
	kindRoute = 'r'  // index entry for a route
	kindTimer = 't'  // index entry for a timer
	slotLen   = 4    // big-endian uint32 variable slot
	nanosLen  = 8    // big-endian, sign-flipped unix nanoseconds
	seqLen    = 8    // big-endian outbox sequence number
	schemaKey = "schema"
	schemaLen = 8 // big-endian uint64
)

// appendBytes appends a uvarint length followed by p.
func appendBytes(b, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

// encodeInstance returns the instance record (doc.go, "Instance record").
func encodeInstance(in *Instance) []byte {
	n := 2 + 2*binary.MaxVarintLen64 + 3*binary.MaxVarintLen32 +
		len(in.Process) + len(in.Fault) + len(in.Frames) + binary.MaxVarintLen32
	names := make([]string, 0, len(in.Correlations))
	for name, key := range in.Correlations {
		names = append(names, name)
		n += 2*binary.MaxVarintLen32 + len(name) + len(key)
	}
	slices.Sort(names)
	b := make([]byte, 0, n)
	b = append(b, instanceFormat, byte(in.State))
	b = binary.AppendVarint(b, in.Created.UnixNano())
	b = binary.AppendVarint(b, in.Updated.UnixNano())
	b = AppendString(b, in.Process)
	b = AppendString(b, in.Fault)
	b = appendBytes(b, in.Frames)
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, name := range names {
		b = AppendString(b, name)
		b = AppendString(b, in.Correlations[name])
	}
	return b
}

func decodeInstance(id string, v []byte) (*Instance, error) {
	d := Reader{B: v}
	if f := d.byte(); d.Err == nil && f != instanceFormat {
		return nil, fmt.Errorf("instance %q: unknown record format %d", id, f)
	}
	in := &Instance{ID: id}
	in.State = State(d.byte())
	in.Created = time.Unix(0, d.Varint())
	in.Updated = time.Unix(0, d.Varint())
	in.Process = d.String()
	in.Fault = d.String()
	in.Frames = d.bytes()
	n := d.Uvarint()
	if d.Err == nil && n > uint64(len(d.B)) {
		d.Err = ErrTruncated
	}
	if d.Err == nil && n > 0 {
		in.Correlations = make(map[string]string, n)
		for range n {
			name := d.String()
			in.Correlations[name] = d.String()
		}
	}
	if err := d.done(); err != nil {
		return nil, fmt.Errorf("instance %q: %w", id, err)
	}
	if !in.State.valid() {
		return nil, fmt.Errorf("instance %q: invalid state %d", id, uint8(in.State))
	}
	return in, nil
}

// encodeOutbox returns the outbox record (doc.go, "Outbox record").
func encodeOutbox(m *OutboxMessage) []byte {
	b := make([]byte, 0, 1+3*binary.MaxVarintLen32+len(m.InstanceID)+len(m.Partner)+len(m.Operation)+len(m.Payload))
	b = append(b, outboxFormat)
	b = AppendString(b, m.InstanceID)
	b = AppendString(b, m.Partner)
	b = AppendString(b, m.Operation)
	return append(b, m.Payload...)
}

func decodeOutbox(k, v []byte) (OutboxMessage, error) {
	if len(k) != seqLen {
		return OutboxMessage{}, fmt.Errorf("outbox key of %d bytes", len(k))
	}
	m := OutboxMessage{Seq: binary.BigEndian.Uint64(k)}
	d := Reader{B: v}
	if f := d.byte(); d.Err == nil && f != outboxFormat {
		return m, fmt.Errorf("outbox %d: unknown record format %d", m.Seq, f)
	}
	m.InstanceID = d.String()
	m.Partner = d.String()
	m.Operation = d.String()
	if d.Err != nil {
		return m, fmt.Errorf("outbox %d: %w", m.Seq, d.Err)
	}
	if len(d.B) > 0 {
		m.Payload = slices.Clone(d.B)
	}
	return m, nil
}

// varKey returns id + 0x00 + big-endian slot.
func varKey(id string, slot int) []byte {
	k := make([]byte, 0, len(id)+1+slotLen)
	k = append(k, id...)
	k = append(k, sep)
	return binary.BigEndian.AppendUint32(k, uint32(slot))
}

// idPrefix returns id + 0x00, the prefix of the instance's vars and index
// keys.
func idPrefix(id string) []byte {
	k := make([]byte, 0, len(id)+1)
	k = append(k, id...)
	return append(k, sep)
}

// dueNanos maps a time to 8 bytes that sort like the time, also before
// 1970. A time past the int64 nanosecond range (an instance that waits
// for a deadline that never falls due) saturates to the last key,
// before it to the first: it does not wrap into a due timer.
func dueNanos(t time.Time) uint64 {
	n := int64(math.MaxInt64)
	switch {
	case t.Before(time.Unix(0, math.MinInt64)):
		n = math.MinInt64
	case t.Before(time.Unix(0, math.MaxInt64)):
		n = t.UnixNano()
	}
	return uint64(n) ^ (1 << 63)
}

// timerKey returns due + id + 0x00 + tag.
func timerKey(t *Timer) []byte {
	k := make([]byte, 0, nanosLen+len(t.InstanceID)+1+len(t.Tag))
	k = binary.BigEndian.AppendUint64(k, dueNanos(t.Due))
	k = append(k, t.InstanceID...)
	k = append(k, sep)
	return append(k, t.Tag...)
}

func decodeTimerKey(k []byte) (Timer, error) {
	if len(k) < nanosLen+1 {
		return Timer{}, fmt.Errorf("timer key of %d bytes", len(k))
	}
	rest := k[nanosLen:]
	i := slices.Index(rest, sep)
	if i < 1 {
		return Timer{}, fmt.Errorf("timer key without instance ID")
	}
	return Timer{
		Due:        time.Unix(0, int64(binary.BigEndian.Uint64(k)^(1<<63))),
		InstanceID: string(rest[:i]),
		Tag:        string(rest[i+1:]),
	}, nil
}

// indexKey returns id + 0x00 + kind + key, the per-instance index entry for a
// route (key = route key) or a timer (key = timer key).
func indexKey(id string, kind byte, key []byte) []byte {
	k := make([]byte, 0, len(id)+2+len(key))
	k = append(k, id...)
	k = append(k, sep, kind)
	return append(k, key...)
}
