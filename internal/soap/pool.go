package soap

import (
	"bytes"
	"sync"
)

// maxPooledBuffer is the capacity above which a buffer is dropped rather
// than pooled, so one huge message does not pin memory.
const maxPooledBuffer = 1 << 20

// bufferPool recycles the byte buffers requests and responses are read
// into and encoded in.
type bufferPool struct{ p sync.Pool }

func (bp *bufferPool) get() *bytes.Buffer {
	if b, ok := bp.p.Get().(*bytes.Buffer); ok {
		return b
	}
	return new(bytes.Buffer)
}

func (bp *bufferPool) put(b *bytes.Buffer) {
	if b.Cap() > maxPooledBuffer {
		return
	}
	b.Reset()
	bp.p.Put(b)
}
