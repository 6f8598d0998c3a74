package etcdtest

import (
	"io"
	"net"
	"sync"
)

// relay holds a loopback listener open for the life of a Cluster and
// forwards each connection to a member's current listener. A member
// listens on a port the system picks at each start (so no port is ever
// freed and taken again), and advertises the relay's address, which never
// changes: clients and peers reach the member across restarts, and no
// other process can take the address in between. While the member is
// stopped, connections are accepted and closed at once.
type relay struct {
	ln     net.Listener
	mu     sync.Mutex
	target string                // the member's listener; "" while stopped
	conns  map[net.Conn]struct{} // open connections, both sides, closed when the member stops
	wg     sync.WaitGroup
}

func newRelay() (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &relay{ln: ln, conns: map[net.Conn]struct{}{}}
	r.wg.Add(1)
	go r.serve()
	return r, nil
}

// addr is the address the relay listens on, which the member advertises.
func (r *relay) addr() string { return r.ln.Addr().String() }

// setTarget points the relay at the member's listener; "" (the member
// stops) also closes the connections open through it, as the member's
// going would.
func (r *relay) setTarget(addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.target = addr
	if addr == "" {
		for c := range r.conns {
			c.Close()
		}
		clear(r.conns)
	}
}

// close stops the relay and closes its connections.
func (r *relay) close() {
	r.ln.Close()
	r.setTarget("")
	r.wg.Wait()
}

func (r *relay) serve() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		go r.pipe(c)
	}
}

func (r *relay) pipe(c net.Conn) {
	r.mu.Lock()
	target := r.target
	r.mu.Unlock()
	if target == "" {
		c.Close()
		return
	}
	up, err := net.Dial("tcp", target)
	if err != nil {
		c.Close()
		return
	}
	r.mu.Lock()
	if r.target != target { // the member stopped meanwhile
		r.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	r.conns[c], r.conns[up] = struct{}{}, struct{}{}
	r.mu.Unlock()
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		dst.Close()
		src.Close()
		done <- struct{}{}
	}
	go cp(up, c)
	go cp(c, up)
	<-done
	<-done
	r.mu.Lock()
	delete(r.conns, c)
	delete(r.conns, up)
	r.mu.Unlock()
}
