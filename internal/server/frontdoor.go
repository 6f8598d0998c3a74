package server

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Limits of the front door's connections, independent of what is served on
// them.
const (
	// refuseWriteTimeout bounds writing the answer to a refused connection.
	refuseWriteTimeout = 100 * time.Millisecond
	// refuseLinger is how long a refused connection is drained after its
	// answer, so that the client reads the answer rather than a reset.
	refuseLinger = 500 * time.Millisecond
	// maxLingering bounds the refused connections drained at once; beyond
	// it a refused connection is closed at once.
	maxLingering = 64
	// warnEvery spaces the warnings about refused connections.
	warnEvery = 10 * time.Second
)

// LimitListener wraps a net.Listener so that at most max connections are
// open at once. Unlike golang.org/x/net/netutil.LimitListener, a
// connection over the bound is not left waiting in the kernel's queue: it
// is accepted and at once answered (when answer is set) and closed, so a
// client learns in milliseconds that the server is full while the open
// connections are served as before.
type LimitListener struct {
	net.Listener
	max    int64
	answer []byte // written to a refused connection; nil: just close
	open   atomic.Int64
	linger chan struct{} // tokens: refused connections being drained

	refused  prometheus.Counter
	log      *slog.Logger
	lastWarn atomic.Int64 // unix nanoseconds of the last warning
}

// LimitOptions configure a LimitListener.
type LimitOptions struct {
	// Max is the most connections open at once; it must be positive.
	Max int
	// HTTPAnswer, when true, answers a refused connection with an HTTP
	// 503 and Retry-After before closing it (for a plain HTTP listener;
	// a TLS listener's refused connections are only closed).
	HTTPAnswer bool
	// Registerer, when not nil, gets orchd_connections_open and
	// orchd_connections_refused_total.
	Registerer prometheus.Registerer
	// Logger receives a warning when connections start being refused;
	// nil discards it.
	Logger *slog.Logger
}

// refusedBody is the text of the answer to a refused connection.
const refusedBody = "server busy: too many open connections (--max-conns); retry later\n"

// NewLimitListener returns ln bounded to opts.Max open connections.
func NewLimitListener(ln net.Listener, opts LimitOptions) *LimitListener {
	l := &LimitListener{Listener: ln, max: int64(opts.Max), linger: make(chan struct{}, maxLingering), log: opts.Logger}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if opts.HTTPAnswer {
		l.answer = []byte("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n" +
			"Content-Type: text/plain; charset=utf-8\r\nContent-Length: " + strconv.Itoa(len(refusedBody)) + "\r\n\r\n" + refusedBody)
	}
	l.refused = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "orchd_connections_refused_total",
		Help: "Connections closed at once because --max-conns were open.",
	})
	if opts.Registerer != nil {
		opts.Registerer.MustRegister(l.refused, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "orchd_connections_open",
			Help: "Connections open on the front door's listener.",
		}, func() float64 { return float64(l.open.Load()) }))
	}
	return l
}

// Open is the number of connections open now.
func (l *LimitListener) Open() int { return int(l.open.Load()) }

// Accept returns the next connection within the bound, refusing those over
// it as they come.
func (l *LimitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if n := l.open.Add(1); n > l.max {
			l.open.Add(-1)
			l.refuse(c)
			continue
		}
		return &limitConn{Conn: c, l: l}, nil
	}
}

// refuse answers c, if the listener answers, and closes it. A refused
// connection whose client has already sent its request is drained for a
// moment after the answer (in its own goroutine, at most maxLingering at
// once), so that the close does not reset the connection before the
// client reads the answer.
func (l *LimitListener) refuse(c net.Conn) {
	l.refused.Inc()
	if now := time.Now().UnixNano(); now-l.lastWarn.Load() > int64(warnEvery) {
		l.lastWarn.Store(now)
		l.log.Warn("refusing connections: --max-conns are open", slog.Int64("max", l.max), slog.String("client", c.RemoteAddr().String()))
	}
	if l.answer == nil {
		_ = c.Close()
		return
	}
	_ = c.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
	if _, err := c.Write(l.answer); err != nil {
		_ = c.Close()
		return
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		_ = c.Close()
		return
	}
	select {
	case l.linger <- struct{}{}:
	default:
		_ = c.Close()
		return
	}
	_ = tc.CloseWrite()
	go func() {
		defer func() { <-l.linger }()
		_ = c.SetReadDeadline(time.Now().Add(refuseLinger))
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
		_ = c.Close()
	}()
}

// limitConn gives its slot back when closed (once).
type limitConn struct {
	net.Conn
	l    *LimitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}

// BodyTimeout bounds the time a handler of h may spend reading a request
// body: the connection's read deadline is set to d from when the headers
// have been read, and cleared when the body has been read to its end, so
// the time the handler then takes (a partner call, say) is not bounded by
// it. A client that trickles its body is cut off after d: the body's Read
// fails and the connection is closed. http.Server.ReadTimeout is no
// substitute: its deadline stays on the connection while the handler
// runs, and when it passes, it cancels the request's context.
func BodyTimeout(h http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(d)); err != nil {
			h.ServeHTTP(w, r) // not a connection that has deadlines
			return
		}
		// A shallow copy: net/http looks at the original request's Body
		// after the handler to decide whether the rest of an unread body
		// is discarded (a wrapped one would be, up to the deadline) or
		// the connection closed (a large one is, at once).
		r2 := new(http.Request)
		*r2 = *r
		r2.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
		h.ServeHTTP(w, r2)
	})
}

// deadlineBody clears the connection's read deadline once the body has
// been read to its end.
type deadlineBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	cleared bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) && !b.cleared {
		b.cleared = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
