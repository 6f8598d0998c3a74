package server

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
)

// Request smuggling (RFC 9112 6.1, 11.2). net/http reads a request that
// carries both Content-Length and Transfer-Encoding: chunked as chunked
// and drops the Content-Length header before a handler sees it, so a
// handler cannot tell; a proxy in front that framed the request by its
// Content-Length would then see the rest of the connection differently,
// and a second request hidden in the first one's body would run. The
// guard answers such a request at once with 400 and closes the
// connection:
//
//   - GuardListener wraps a plain HTTP listener's connections with a
//     scanner of the request heads read from them (it follows the
//     Content-Length of each request to find the next head; after a
//     chunked request the connection is closed, so it stops there);
//   - GuardConnContext puts the connection's scanner in the requests'
//     context (chain it into http.Server.ConnContext);
//   - Guard, the handler, refuses a request whose head had both, and
//     closes the connection after every chunked request (on TLS, where
//     the scanner does not see the plain text, that alone keeps a
//     hidden request from running).

// GuardListener returns ln whose connections record whether a request
// head read from them carried both Content-Length and Transfer-Encoding.
// Use it on plain HTTP listeners, outermost (after NewLimitListener).
func GuardListener(ln net.Listener) net.Listener { return &guardListener{Listener: ln} }

type guardListener struct{ net.Listener }

func (l *guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &guardConn{Conn: c}, nil
}

// guardConn scans what is read from it for request heads.
type guardConn struct {
	net.Conn
	sc headScanner
	// both is set once a head had both framing headers.
	both atomic.Bool
}

func (c *guardConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.sc.scan(p[:n]) {
		c.both.Store(true)
	}
	return n, err
}

type guardKey struct{}

// GuardConnContext returns an http.Server.ConnContext that records a
// guarded connection in its requests' context, then calls next (which
// may be nil).
func GuardConnContext(next func(context.Context, net.Conn) context.Context) func(context.Context, net.Conn) context.Context {
	return func(ctx context.Context, c net.Conn) context.Context {
		if g, ok := c.(*guardConn); ok {
			ctx = context.WithValue(ctx, guardKey{}, g)
		}
		if next != nil {
			ctx = next(ctx, c)
		}
		return ctx
	}
}

// SmuggleReason is the answer to a request with both framing headers.
const SmuggleReason = "the request has both Content-Length and Transfer-Encoding (RFC 9112 6.1): refused, and the connection closed\n"

// Guard refuses a request whose head carried both Content-Length and
// Transfer-Encoding (400, connection closed) and closes the connection
// after any chunked request.
func Guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g, ok := r.Context().Value(guardKey{}).(*guardConn); ok && g.both.Load() {
			w.Header().Set("Connection", "close")
			http.Error(w, SmuggleReason, http.StatusBadRequest)
			return
		}
		for _, te := range r.TransferEncoding {
			if te == "chunked" {
				w.Header().Set("Connection", "close")
				break
			}
		}
		h.ServeHTTP(w, r)
	})
}

// headScanner follows the HTTP/1.x requests of one connection far
// enough to see each head's framing headers. It is not a parser: net/http
// parses; what it gets wrong can only make the guard refuse a request.
type headScanner struct {
	state  uint8
	line   [40]byte // the start of the current line, lower case
	n      int      // bytes of the line seen (may exceed len(line))
	start  bool     // a request line was seen in this head
	cl, te bool
	length int64 // the head's Content-Length
	skip   int64 // body bytes still to pass over
}

const (
	scanHead uint8 = iota
	scanBody
	scanDone // after a chunked request, or a head with both
)

// scan feeds b and reports whether a head had both framing headers.
func (s *headScanner) scan(b []byte) bool {
	both := false
	for len(b) > 0 {
		switch s.state {
		case scanDone:
			return both
		case scanBody:
			k := int64(len(b))
			if k > s.skip {
				k = s.skip
			}
			s.skip -= k
			b = b[k:]
			if s.skip == 0 {
				s.state = scanHead
			}
		case scanHead:
			c := b[0]
			b = b[1:]
			if c != '\n' {
				if s.n < len(s.line) && c != '\r' {
					if 'A' <= c && c <= 'Z' {
						c += 'a' - 'A'
					}
					s.line[s.n] = c
				}
				if c != '\r' {
					s.n++
				}
				continue
			}
			if s.endLine() {
				both = true
			}
		}
	}
	return both
}

// endLine ends the current line of a head; it reports a head with both
// framing headers.
func (s *headScanner) endLine() bool {
	line := s.line[:min(s.n, len(s.line))]
	long := s.n > len(s.line)
	s.n = 0
	if len(line) == 0 && !long {
		if !s.start {
			return false // empty lines before a request line
		}
		both := s.cl && s.te
		switch {
		case s.te:
			s.state = scanDone
		case s.length > 0:
			s.state, s.skip = scanBody, s.length
		}
		s.start, s.cl, s.te, s.length = false, false, false, 0
		return both
	}
	if !s.start {
		s.start = true
		return false
	}
	if v, ok := headerValue(line, "content-length:"); ok {
		s.cl = true
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			s.length = n
		}
	} else if _, ok := headerValue(line, "transfer-encoding:"); ok {
		s.te = true
	}
	return false
}

// headerValue returns the value of line if it is the header name (lower
// case, with its colon).
func headerValue(line []byte, name string) (string, bool) {
	if len(line) < len(name) || string(line[:len(name)]) != name {
		return "", false
	}
	v := line[len(name):]
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return string(v), true
}
