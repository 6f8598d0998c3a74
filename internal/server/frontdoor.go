package server

import (
	"errors"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
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
//
// With a per-client share, one client address may hold at most that many
// of them: a connection over its address's share is refused the same way
// (with its own answer and counter), so a client opening connections
// without end cannot keep others out.
type LimitListener struct {
	net.Listener
	max    int64
	answer []byte // written to a refused connection; nil: just close
	open   atomic.Int64
	linger chan struct{} // tokens: refused connections being drained

	// perClient is the share of one client address (0: none); byClient
	// counts the open connections of each address that has one.
	perClient    int
	clientAnswer []byte
	mu           sync.Mutex
	byClient     map[netip.Addr]int

	refused, refusedClient prometheus.Counter
	log                    *slog.Logger
	lastWarn               atomic.Int64 // unix nanoseconds of the last warning
}

// LimitOptions configure a LimitListener.
type LimitOptions struct {
	// Max is the most connections open at once; zero or less: no bound
	// on all of them (PerClient may still bound each client's).
	Max int
	// PerClient is the most connections one client address (IPv4, or
	// IPv6 as it is) may hold open at once; zero: no share. Loopback
	// addresses are clients like any other (each its own).
	PerClient int
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

// refusedBody and clientBody are the texts of the answer to a
// connection refused over --max-conns and over its client's share.
const (
	refusedBody = "server busy: too many open connections (--max-conns); retry later\n"
	clientBody  = "too many open connections from your address (--max-conns-per-client); close some or retry later\n"
)

// answer503 is the HTTP answer with body.
func answer503(body string) []byte {
	return []byte("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

// NewLimitListener returns ln bounded to opts.Max open connections.
func NewLimitListener(ln net.Listener, opts LimitOptions) *LimitListener {
	l := &LimitListener{Listener: ln, max: int64(opts.Max), linger: make(chan struct{}, maxLingering), log: opts.Logger,
		perClient: max(opts.PerClient, 0), byClient: map[netip.Addr]int{}}
	if l.max <= 0 {
		l.max = math.MaxInt64
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if opts.HTTPAnswer {
		l.answer, l.clientAnswer = answer503(refusedBody), answer503(clientBody)
	}
	l.refused = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "orchd_connections_refused_total",
		Help: "Connections closed at once because --max-conns were open.",
	})
	l.refusedClient = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "orchd_connections_refused_per_client_total",
		Help: "Connections closed at once because their client address held --max-conns-per-client.",
	})
	if opts.Registerer != nil {
		opts.Registerer.MustRegister(l.refused, l.refusedClient, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
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
			l.refuse(c, l.answer, l.refused, "refusing connections: --max-conns are open", l.max)
			continue
		}
		client, ok := l.take(c)
		if !ok {
			l.open.Add(-1)
			l.refuse(c, l.clientAnswer, l.refusedClient, "refusing connections: a client holds --max-conns-per-client", int64(l.perClient))
			continue
		}
		return &limitConn{Conn: c, l: l, client: client}, nil
	}
}

// take counts c against its client's share, reporting false when the
// share is full. The address is the zero Addr when no share applies.
func (l *LimitListener) take(c net.Conn) (netip.Addr, bool) {
	if l.perClient == 0 {
		return netip.Addr{}, true
	}
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return netip.Addr{}, true // not an IP connection
	}
	a := ap.Addr().Unmap()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byClient[a] >= l.perClient {
		return a, false
	}
	l.byClient[a]++
	return a, true
}

// give gives back a connection of client a.
func (l *LimitListener) give(a netip.Addr) {
	if !a.IsValid() {
		return
	}
	l.mu.Lock()
	if l.byClient[a]--; l.byClient[a] <= 0 {
		delete(l.byClient, a)
	}
	l.mu.Unlock()
}

// refuse answers c, if the listener answers, and closes it. A refused
// connection whose client has already sent its request is drained for a
// moment after the answer (in its own goroutine, at most maxLingering at
// once), so that the close does not reset the connection before the
// client reads the answer.
func (l *LimitListener) refuse(c net.Conn, answer []byte, count prometheus.Counter, warning string, bound int64) {
	count.Inc()
	if now := time.Now().UnixNano(); now-l.lastWarn.Load() > int64(warnEvery) {
		l.lastWarn.Store(now)
		l.log.Warn(warning, slog.Int64("max", bound), slog.String("client", c.RemoteAddr().String()))
	}
	if answer == nil {
		_ = c.Close()
		return
	}
	_ = c.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
	if _, err := c.Write(answer); err != nil {
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
	l      *LimitListener
	client netip.Addr // whose share it counts against (zero: none)
	once   sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.open.Add(-1)
		c.l.give(c.client)
	})
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
