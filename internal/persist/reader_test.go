package persist

import (
	"encoding/binary"
	"errors"
	"testing"
)

// TestReader reads back what the Append functions wrote, and checks
// that a failure sticks: it is Bad (or ErrTruncated), later reads return
// zero and B stays where the failure was.
func TestReader(t *testing.T) {
	b := binary.AppendUvarint(nil, 300)
	b = binary.AppendVarint(b, -7)
	b = AppendString(b, "frames")
	r := Reader{B: b}
	if u, v, s := r.Uvarint(), r.Varint(), r.String(); u != 300 || v != -7 || s != "frames" || r.Err != nil || len(r.B) != 0 {
		t.Fatalf("read back %d %d %q, err %v, %d left", u, v, s, r.Err, len(r.B))
	}

	bad := errors.New("bad frames")
	for _, c := range []struct {
		name string
		b    []byte
		read func(*Reader)
	}{
		{"empty uvarint", nil, func(r *Reader) { r.Uvarint() }},
		{"cut varint", []byte{0x80}, func(r *Reader) { r.Varint() }},
		{"string past the end", AppendString(nil, "abc")[:3], func(r *Reader) { _ = r.String() }},
		{"byte of nothing", nil, func(r *Reader) { r.byte() }},
	} {
		for _, with := range []error{nil, bad} {
			r := Reader{B: c.b, Bad: with}
			c.read(&r)
			want := with
			if want == nil {
				want = ErrTruncated
			}
			if r.Err != want {
				t.Errorf("%s (Bad %v): Err %v, want %v", c.name, with, r.Err, want)
			}
			left := len(r.B)
			r.B = append(r.B, binary.AppendUvarint(nil, 5)...)
			if v := r.Uvarint(); v != 0 || len(r.B) != left+1 || r.Err != want {
				t.Errorf("%s: a read after the failure gave %d, left %d bytes of %d, Err %v", c.name, v, len(r.B), left+1, r.Err)
			}
		}
	}
}
