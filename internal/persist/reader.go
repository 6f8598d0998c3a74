package persist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Reader reads the primitives of a stored record: bytes, varints and
// length-prefixed fields, as encoding/binary's Append functions and
// AppendString write them. It is the one reader of the store's records
// and of what callers keep inside them (the interpreter's frames).
//
// B is what remains to read; Err is the first failure, after which every
// read returns zero and leaves B as it is, so a caller may read a whole
// record and check Err once.
type Reader struct {
	B   []byte
	Err error
	// Bad is what a failed read sets Err to; nil means ErrTruncated.
	Bad error
}

// ErrTruncated is a record that ends before the field being read.
var ErrTruncated = errors.New("truncated record")

// fail records a failed read.
func (r *Reader) fail() {
	if r.Bad != nil {
		r.Err = r.Bad
		return
	}
	r.Err = ErrTruncated
}

// byte reads one byte.
func (r *Reader) byte() byte {
	if r.Err != nil {
		return 0
	}
	if len(r.B) < 1 {
		r.fail()
		return 0
	}
	c := r.B[0]
	r.B = r.B[1:]
	return c
}

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 {
	if r.Err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.B)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Varint reads a signed varint.
func (r *Reader) Varint() int64 {
	if r.Err != nil {
		return 0
	}
	v, n := binary.Varint(r.B)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Raw returns the next length-prefixed field in place (it shares B's
// memory, capped to the field).
func (r *Reader) Raw() []byte {
	n := r.Uvarint()
	if r.Err != nil {
		return nil
	}
	if n > uint64(len(r.B)) {
		r.fail()
		return nil
	}
	p := r.B[:n:n]
	r.B = r.B[n:]
	return p
}

// bytes returns a copy of the next length-prefixed field (nil if empty):
// the store's records are bbolt's mmap, valid only inside the
// transaction.
func (r *Reader) bytes() []byte {
	if p := r.Raw(); len(p) > 0 {
		return slices.Clone(p)
	}
	return nil
}

// String reads a length-prefixed string (AppendString).
func (r *Reader) String() string { return string(r.Raw()) }

// done fails a record with bytes after its last field.
func (r *Reader) done() error {
	if r.Err == nil && len(r.B) != 0 {
		r.Err = fmt.Errorf("%d trailing bytes", len(r.B))
	}
	return r.Err
}

// AppendString appends s to b, length-prefixed, as Reader.String reads
// it.
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}
