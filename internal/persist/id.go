package persist

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

// crockford is Crockford's base32 alphabet: digits and upper-case letters
// without I, L, O and U, in ASCII order, so encoded IDs sort like their bytes.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewID returns a new instance ID: 26 characters of Crockford base32 for a
// 48-bit Unix millisecond timestamp followed by 80 random bits from
// crypto/rand (the ULID layout). IDs sort by creation time to the
// millisecond; within a millisecond their order is random. They contain no
// NUL byte and fit MaxIDLen.
func NewID() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	_, _ = rand.Read(b[6:]) // never fails (Go 1.24+: it crashes the program instead)
	// 128 bits -> 26 digits of 5 bits; the first digit takes the top 3 bits.
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}
