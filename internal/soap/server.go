package soap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/beevik/etree"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/partnerallow"
	"github.com/orchd/orchd/internal/publicurl"
)

// DefaultMaxBodyBytes is the request size limit when
// ServerOptions.MaxBodyBytes is zero.
const DefaultMaxBodyBytes = 4 << 20

// ServerOptions configure a Server. The zero value is usable.
type ServerOptions struct {
	// MaxBodyBytes caps the size of a request body; larger requests get a
	// Client fault with HTTP 413. Zero means DefaultMaxBodyBytes (4 MiB).
	MaxBodyBytes int64
	// Limits bound the parsing of a request; a request over one gets a
	// Client fault naming the limit. The zero value means the defaults.
	Limits Limits
	// Logger receives the server's logs. Nil discards them.
	Logger *slog.Logger
	// Registerer is where the server's metrics are registered. Nil means
	// no metrics.
	Registerer prometheus.Registerer
	// MaxInflight bounds the SOAP exchanges (POST requests to endpoints)
	// served at once; zero or negative means no bound. A request over
	// the bound waits in turn for a slot, after its body is read and
	// before it is parsed, in a queue of MaxQueue; one that finds the
	// queue full, or waits out QueueWait in it (below), is shed: HTTP 503
	// with Retry-After and a Server fault saying the server is
	// overloaded.
	MaxInflight int
	// QueueWait is the longest a request waits in a queue that overflowed
	// (a request found it full) while it waited; a queue that never
	// overflowed keeps its requests while it moves, and sheds them once it
	// stood still (no request in it admitted) for a second or QueueWait if
	// longer (zero: no queue, shed at once when every slot is taken).
	QueueWait time.Duration
	// MaxQueue bounds the requests waiting for a slot; one more is shed
	// at once (under overload the queue stays full, and shedding costs
	// no wait). Zero means 4 x MaxInflight; negative, no wait at all.
	MaxQueue int
	// Adaptive turns MaxInflight into the start and floor of an adaptive
	// limit on all the exchanges admitted and not finished, waits for
	// partners included (limiter): it grows while their latency
	// stays under twice the lowest seen plus LatencySlack and is cut
	// when latency grows past that, back to MaxInflight at the least,
	// 64 x MaxInflight at the most. Without it, MaxInflight fixed slots bound the
	// exchanges using the CPU; exchanges waiting give theirs back.
	Adaptive bool
	// LatencySlack is the queueing the adaptive limit allows on top of
	// twice the lowest latency (zero: 20ms).
	LatencySlack time.Duration
	// Tracer, when set, makes each exchange a span (trace.go); nil
	// traces nothing.
	Tracer trace.Tracer
	// Callbacks sends the replies of requests whose wsa:ReplyTo (or
	// wsa:FaultTo) is not anonymous, as calls to an address chosen at
	// run time (under its partner address policy). Nil refuses such
	// requests with wsa:OnlyAnonymousAddressSupported.
	Callbacks *Client
	// CallbackRules, when set, returns the deploy.xml partner address
	// rules (orchd:partnerAllow) of the process serving an endpoint: its
	// callbacks go under the policy narrowed to them.
	CallbackRules func(ep *exchange.Endpoint) *partnerallow.List
	// CallbackRetry bounds how a callback that failed in a way safe to
	// repeat is tried again (wsa_retry.go); the zero value means
	// DefaultCallbackRetry.
	CallbackRetry CallbackRetry
	// Public computes the base URL (scheme://host:port) ?wsdl gives the
	// ports this server serves, from each request; nil means the
	// request's own (publicurl's zero Resolver).
	Public *publicurl.Resolver
}

// Server is the SOAP front door: an http.Handler serving endpoints, each
// backed by a Dispatcher. Register endpoints with Handle before serving;
// ServeHTTP is safe for concurrent use, also with Handle.
type Server struct {
	maxBody int64
	limits  Limits
	log     *slog.Logger
	metrics *metrics
	unknown *opMetrics // requests to unknown paths
	tracer  trace.Tracer

	mu     sync.Mutex                        // serializes Handle
	routes atomic.Pointer[map[string]*route] // immutable once stored

	bufs bufferPool

	// lim bounds the exchanges in flight (MaxInflight, Adaptive); nil
	// without a bound.
	lim *limiter
	// paused counts the requests paced before admission; nil without
	// metrics.
	paused prometheus.Counter
	// paceClock, when set (by tests), is the clock the pacing of retries
	// after sheds reads (connPace), in place of a shed's time.Now and a
	// request's receipt: with it held still, whether a retry is paused no
	// longer depends on how fast the client sent it.
	paceClock func() time.Time
	// callbacks and callbackRules are ServerOptions.Callbacks and
	// CallbackRules (wsa_server.go).
	callbacks     *Client
	callbackRules func(ep *exchange.Endpoint) *partnerallow.List
	callbackRetry CallbackRetry
	// shedFault holds the encoded overload fault by SOAP version
	// (exchange.SOAP11, exchange.SOAP12): shedding costs no encoding.
	shedFault [2][]byte
	// public is ServerOptions.Public.
	public *publicurl.Resolver
}

// route is one served endpoint with everything resolved at Handle.
type route struct {
	ep      *exchange.Endpoint
	d       exchange.Dispatcher
	process string // the process metric label

	byBody   map[exchange.QName][]*exchange.Operation
	byAction map[string][]*exchange.Operation
	noInput  []*exchange.Operation // operations whose input has no parts
	offered  string                // the operation names, for faults

	wsdl map[string]*servedDoc // rewritten WSDL documents by name

	opMetrics      map[*exchange.Operation]*opMetrics
	unknownMetrics *opMetrics
	shedCount      prometheus.Counter // nil without metrics
}

// NewServer returns a Server with no endpoints.
func NewServer(opts ServerOptions) *Server {
	s := &Server{
		maxBody: opts.MaxBodyBytes,
		limits:  opts.Limits.WithDefaults(),
		log:     opts.Logger,
		metrics: newMetrics(opts.Registerer),
		tracer:  opts.Tracer,

		callbacks:     opts.Callbacks,
		callbackRules: opts.CallbackRules,
		callbackRetry: opts.CallbackRetry.withDefaults(),
		public:        opts.Public,
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.unknown = s.metrics.forOp(unknownLabel, unknownLabel)
	if opts.MaxInflight > 0 {
		queueWait, maxQueue := max(opts.QueueWait, 0), int64(opts.MaxQueue)
		switch {
		case opts.MaxQueue == 0:
			maxQueue = 4 * int64(opts.MaxInflight)
		case opts.MaxQueue < 0:
			queueWait = 0
		}
		s.lim = newLimiter(opts.Adaptive, opts.MaxInflight, queueWait, maxQueue, opts.LatencySlack, time.Now())
		msg := fmt.Sprintf("%v: %d exchanges in flight (--max-inflight), and %d requests were waiting for a slot (--max-queue) or none came free in turn within %s (--queue-wait); retry later",
			ErrOverloaded, opts.MaxInflight, max(maxQueue, 0), queueWait)
		var limit func() int64 // the gauge only when it moves
		if opts.Adaptive {
			msg = fmt.Sprintf("%v: the exchanges in flight reached the adaptive limit (--admission adaptive), and %d requests were waiting (--max-queue) or none was admitted within %s (--queue-wait); retry later",
				ErrOverloaded, max(maxQueue, 0), queueWait)
			limit = s.lim.limit.Load
		}
		s.paused = s.metrics.admission(s.lim.inflight.Load, s.lim.queued.Load, limit)
		for _, v := range []exchange.SOAPVersion{exchange.SOAP11, exchange.SOAP12} {
			var b bytes.Buffer
			_ = EncodeFault(&b, v, FaultServer, msg, nil) // a bytes.Buffer takes every write
			s.shedFault[shedIndex(v)] = b.Bytes()
		}
	}
	return s
}

// Handle serves ep at ep.Path, dispatching its exchanges to d. It returns an
// error wrapping ErrPathTaken if another endpoint is served at that path.
func (s *Server) Handle(ep *exchange.Endpoint, d exchange.Dispatcher) error {
	if err := checkEndpoint("Handle", ep, d); err != nil {
		return err
	}
	rt := newRoute(ep, d, s.metrics)

	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.routes.Load()
	next := make(map[string]*route, 1)
	if old != nil {
		if prev, ok := (*old)[ep.Path]; ok {
			return fmt.Errorf("%w: %s is taken by %s", ErrPathTaken, ep.Path, prev.ep.Service)
		}
		maps.Copy(next, *old)
	}
	next[ep.Path] = rt
	s.routes.Store(&next)
	return nil
}

// Replace serves ep at ep.Path, dispatching to d, in place of whatever
// endpoint was served there (a redeployed process's new version).
// Requests already dispatched finish on the endpoint they came in by.
func (s *Server) Replace(ep *exchange.Endpoint, d exchange.Dispatcher) error {
	if err := checkEndpoint("Replace", ep, d); err != nil {
		return err
	}
	rt := newRoute(ep, d, s.metrics)
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.copyRoutes()
	next[ep.Path] = rt
	s.routes.Store(&next)
	return nil
}

// checkEndpoint says what is wrong with serving ep through d, or nil.
func checkEndpoint(verb string, ep *exchange.Endpoint, d exchange.Dispatcher) error {
	if ep == nil || d == nil {
		return fmt.Errorf("soap: %s needs an endpoint and a dispatcher", verb)
	}
	if !strings.HasPrefix(ep.Path, "/") {
		return fmt.Errorf("soap: endpoint %s path %q must start with /", ep.Service, ep.Path)
	}
	return nil
}

// Remove stops serving path (an undeployed process): later requests get
// the unknown-path fault (HTTP 404). It reports whether path was served.
func (s *Server) Remove(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.copyRoutes()
	if _, ok := next[path]; !ok {
		return false
	}
	delete(next, path)
	s.routes.Store(&next)
	return true
}

// copyRoutes copies the route table. The caller holds s.mu.
func (s *Server) copyRoutes() map[string]*route {
	next := map[string]*route{}
	if old := s.routes.Load(); old != nil {
		maps.Copy(next, *old)
	}
	return next
}

// Endpoints returns the served endpoints, ordered by path.
func (s *Server) Endpoints() []*exchange.Endpoint {
	routes := s.routes.Load()
	if routes == nil {
		return nil
	}
	paths := slices.Sorted(maps.Keys(*routes))
	eps := make([]*exchange.Endpoint, len(paths))
	for i, p := range paths {
		eps[i] = (*routes)[p].ep
	}
	return eps
}

func newRoute(ep *exchange.Endpoint, d exchange.Dispatcher, m *metrics) *route {
	rt := &route{
		ep:        ep,
		d:         d,
		process:   ep.Process.Local,
		byBody:    make(map[exchange.QName][]*exchange.Operation, len(ep.Operations)),
		byAction:  make(map[string][]*exchange.Operation, len(ep.Operations)),
		opMetrics: make(map[*exchange.Operation]*opMetrics, len(ep.Operations)),
		wsdl:      rewriteWSDL(ep.Path, ep.WSDL),
	}
	if rt.process == "" {
		rt.process = ep.Service.Local
	}
	names := make([]string, 0, len(ep.Operations))
	for _, op := range ep.Operations {
		names = append(names, op.Name)
		rt.opMetrics[op] = m.forOp(rt.process, op.Name)
		if op.Action != "" {
			rt.byAction[op.Action] = append(rt.byAction[op.Action], op)
		}
		var key exchange.QName
		switch {
		case op.Style == exchange.RPC:
			key = wrapperName(op, false)
		case op.Input != nil && len(bodyParts(op, op.Input, false)) > 0:
			key = partElementName(bodyParts(op, op.Input, false)[0])
		default:
			rt.noInput = append(rt.noInput, op)
			continue
		}
		rt.byBody[key] = append(rt.byBody[key], op)
	}
	rt.offered = strings.Join(names, ", ")
	rt.unknownMetrics = m.forOp(rt.process, unknownLabel)
	rt.shedCount = m.shedFor(rt.process)
	return rt
}

// resolve finds the operation a request is for: by its first body element,
// then by its action when the body is ambiguous or empty.
func (rt *route) resolve(body []*etree.Element, action string) (*exchange.Operation, error) {
	element := "(none)"
	if len(body) > 0 {
		q := qnameOf(body[0])
		element = q.String()
		cands := rt.byBody[q]
		if len(cands) == 1 {
			return cands[0], nil
		}
		var match *exchange.Operation
		for _, op := range cands {
			if op.Action == action {
				if match != nil {
					// Two operations take this body and action: picking
					// one would route the message to the wrong activity.
					return nil, fmt.Errorf("%w: body element %s with SOAPAction %q fits operations %s and %s of endpoint %s",
						ErrUnknownOperation, element, action, match.Name, op.Name, rt.ep.Path)
				}
				match = op
			}
		}
		if match != nil {
			return match, nil
		}
	} else {
		if ops := rt.byAction[action]; action != "" && len(ops) == 1 {
			return ops[0], nil
		}
		if len(rt.noInput) == 1 {
			return rt.noInput[0], nil
		}
	}
	return nil, fmt.Errorf("%w: body element %s, SOAPAction %q; endpoint %s offers: %s",
		ErrUnknownOperation, element, action, rt.ep.Path, rt.offered)
}

// ServeHTTP serves SOAP requests (POST) and WSDL documents (GET ?wsdl) of
// the registered endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	received := time.Now()
	var rt *route
	if routes := s.routes.Load(); routes != nil {
		rt = (*routes)[r.URL.Path]
	}
	if rt == nil {
		err := fmt.Errorf("%w: %s", ErrUnknownPath, r.URL.Path)
		s.writeFault(w, exchange.SOAP11, FaultClient, err.Error(), nil, http.StatusNotFound)
		s.unknown.done(outcomeClientError, received)
		return
	}
	switch r.Method {
	case http.MethodPost:
		s.serveExchange(w, r, rt, received)
	case http.MethodGet, http.MethodHead:
		s.serveWSDL(w, r, rt)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed: use POST for SOAP, GET ?wsdl for the WSDL", http.StatusMethodNotAllowed)
	}
}

// shed answers a request no slot was found for, without parsing its body:
// HTTP 503, Retry-After: 1, a Server fault saying the server is
// overloaded.
func (s *Server) shed(w http.ResponseWriter, r *http.Request, rt *route) {
	if rt.shedCount != nil {
		rt.shedCount.Inc() // counted before the client hears it
	}
	if p := paceOf(r.Context()); p != nil {
		now := time.Now()
		if s.paceClock != nil {
			now = s.paceClock()
		}
		p.shed(now)
	}
	body := s.shedFault[shedIndex(rt.ep.Version)]
	h := w.Header()
	h.Set("Retry-After", "1")
	h.Set("Content-Type", contentType(rt.ep.Version))
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusServiceUnavailable)
	if _, err := w.Write(body); err != nil {
		s.log.Debug("writing response", logKeyErr, err)
	}
}

// shedIndex is the index of version v in Server.shedFault.
func shedIndex(v exchange.SOAPVersion) int {
	if v == exchange.SOAP12 {
		return 1
	}
	return 0
}

// serveExchange handles a SOAP request: read, admit, decode, resolve,
// dispatch, reply.
func (s *Server) serveExchange(w http.ResponseWriter, r *http.Request, rt *route, received time.Time) {
	ver := rt.ep.Version
	buf := s.bufs.get()
	action, err := s.readBody(w, r, rt, buf)
	// Admission comes after the body is read (a client trickling its
	// body holds no slot; --body-timeout bounds it) and before it is
	// parsed, the first costly step.
	lim := s.lim // nil unless admitted
	if err == nil && lim != nil {
		if !s.admit(r.Context(), received) {
			s.bufs.put(buf)
			s.shed(w, r, rt)
			return
		}
		// Released here unless the exchange finished (a failed decode,
		// a dispatcher's re-raised panic).
		defer func() {
			if lim != nil {
				lim.release()
			}
		}()
	} else {
		lim = nil
	}
	var op *exchange.Operation
	var env *Envelope
	if err == nil {
		op, env, err = s.decodeRequest(r, rt, buf.Bytes(), action)
	}
	s.bufs.put(buf)
	if err != nil {
		code, reason, status := faultFor(err, ver)
		s.writeFault(w, ver, code, reason, nil, status)
		rt.unknownMetrics.done(outcomeOf(code), received)
		s.log.Debug("rejected request", logKeyPath, rt.ep.Path, logKeyStatus, status, logKeyErr, err)
		return
	}
	hdrs, ok := s.authenticate(w, r, rt, op, env.Headers)
	if !ok {
		rt.opMetrics[op].done(outcomeClientError, received)
		return
	}
	var in *exchange.Message
	var wa *Addressing
	if len(hdrs) > 0 {
		err = checkUnderstood(ver, op, hdrs, op.InputParts)
		if err == nil {
			wa, err = parseAddressing(hdrs)
		}
	}
	if err == nil {
		in, err = decodeMessage(op, op.Input, env, false)
	}
	rp := &reply{s: s, rt: rt, op: op, w: w, ver: ver, received: received}
	ctx := r.Context()
	if err == nil && wa != nil {
		ctx, err = rp.addressed(ctx, wa)
	}
	if err != nil {
		code, reason, status := faultFor(err, ver)
		var nu *notUnderstoodError
		if ver == exchange.SOAP12 && errors.As(err, &nu) {
			s.writeFaultHeaders(w, ver, nu.notUnderstoodBlocks(), code, reason, status)
		} else {
			s.writeFault(w, ver, code, reason, nil, status)
		}
		rt.opMetrics[op].done(outcomeOf(code), received)
		s.log.Debug("rejected request", logKeyPath, rt.ep.Path, logKeyOp, op.Name, logKeyStatus, status, logKeyErr, err)
		return
	}
	ctx, span := s.startExchange(ctx, r, rt, op)
	if lim != nil {
		// Waits give the exchange's share back (limitHolder).
		rp.limit.l = lim
		ctx = exchange.WithIdler(ctx, &rp.limit)
	}
	ex := &exchange.Exchange{
		Endpoint:  rt.ep,
		Operation: op,
		Input:     in,
		Headers:   env.Headers,
		Received:  received,
		Respond:   rp.respond,
	}
	ex.Dispatched = time.Now()
	s.metrics.dispatched(received)
	err = s.dispatch(ctx, rt, ex)
	rp.finish(err)
	endExchange(span, rp)
	now := time.Now()
	if lim != nil {
		rp.limit.finish(now, now.Sub(ex.Dispatched))
		lim = nil // released
	}
	rt.opMetrics[op].doneAt(rp.outcome, received, now)
	if rp.cb != nil {
		rp.sendCallback(ctx)
	}
}

// Endpoint returns the endpoint served at path, or nil.
func (s *Server) Endpoint(path string) *exchange.Endpoint {
	if routes := s.routes.Load(); routes != nil {
		if rt := (*routes)[path]; rt != nil {
			return rt.ep
		}
	}
	return nil
}

// Decode reads a SOAP request whose body has been read already, as
// ServeHTTP would, without dispatching it: the endpoint served at its
// path, its operation and its input message. It is for a front that
// decides where a request runs before running it (cluster.Forwarder);
// the request itself is then served, and checked, as usual.
func (s *Server) Decode(r *http.Request, body []byte) (*exchange.Endpoint, *exchange.Operation, *exchange.Message, error) {
	var rt *route
	if routes := s.routes.Load(); routes != nil {
		rt = (*routes)[r.URL.Path]
	}
	if rt == nil {
		return nil, nil, nil, fmt.Errorf("%w: %s", ErrUnknownPath, r.URL.Path)
	}
	action, err := checkContentType(r, rt)
	if err != nil {
		return nil, nil, nil, err
	}
	op, env, err := s.decodeRequest(r, rt, body, action)
	if err != nil {
		return nil, nil, nil, err
	}
	in, err := decodeMessage(op, op.Input, env, false)
	if err != nil {
		return nil, nil, nil, err
	}
	return rt.ep, op, in, nil
}

// readBody checks the content type and reads the request body into buf;
// it returns the request's action (SOAPAction or the action parameter).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, rt *route, buf *bytes.Buffer) (action string, err error) {
	action, err = checkContentType(r, rt)
	if err != nil {
		return "", err
	}
	if r.ContentLength > s.maxBody {
		return "", fmt.Errorf("%w: request body of %d bytes exceeds %d bytes", ErrTooLarge, r.ContentLength, s.maxBody)
	}
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.maxBody)); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return "", fmt.Errorf("%w: request body exceeds %d bytes", ErrTooLarge, mbe.Limit)
		}
		// The socket's error names both ends' addresses: the client
		// hears what happened, the log has the detail.
		s.log.Debug("reading request body failed", logKeyPath, rt.ep.Path, "remote", r.RemoteAddr, logKeyErr, err)
		return "", exchange.ClientError("reading request body: %s", bodyFailure(err))
	}
	return action, nil
}

// bodyFailure says in plain words why a request body could not be read.
func bodyFailure(err error) string {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return "it did not arrive in time (--body-timeout)"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the connection ended before the body did"
	}
	return "the connection failed"
}

// checkContentType checks that r's content type is the SOAP version rt
// speaks and returns its action (SOAPAction or the action parameter).
func checkContentType(r *http.Request, rt *route) (action string, err error) {
	ctVer, action, err := parseContentType(r)
	if err != nil {
		return "", err
	}
	if ver := rt.ep.Version; ctVer != ver {
		return "", fmt.Errorf("%w: endpoint %s speaks SOAP %s, request content type is %q",
			ErrContentType, rt.ep.Path, versionName(ver), r.Header.Get("Content-Type"))
	}
	return action, nil
}

// decodeRequest decodes the envelope read by readBody and resolves the
// operation.
func (s *Server) decodeRequest(r *http.Request, rt *route, body []byte, action string) (*exchange.Operation, *Envelope, error) {
	ctVer := rt.ep.Version // readBody checked that the content type says it
	env, err := decodeEnvelopeBytes(body, s.limits)
	if err != nil {
		return nil, nil, err
	}
	if env.Version != ctVer {
		return nil, nil, fmt.Errorf("%w: SOAP %s envelope sent as %q",
			ErrContentType, versionName(env.Version), r.Header.Get("Content-Type"))
	}
	op, err := rt.resolve(env.Body, action)
	if err != nil {
		if op = rt.resolveWSA(env.Headers, action); op == nil {
			return nil, nil, err
		}
	}
	return op, env, nil
}

// parseContentType returns the SOAP version a request's content type
// announces and its action (SOAPAction header or action parameter).
func parseContentType(r *http.Request) (exchange.SOAPVersion, string, error) {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return 0, "", fmt.Errorf("%w: %q: %w", ErrContentType, ct, err)
	}
	switch mt {
	case "text/xml":
		return exchange.SOAP11, unquote(r.Header.Get("SOAPAction")), nil
	case "application/soap+xml":
		return exchange.SOAP12, params["action"], nil
	}
	return 0, "", fmt.Errorf("%w: %q (SOAP 1.1 is text/xml, SOAP 1.2 application/soap+xml)", ErrContentType, ct)
}

// unquote strips one pair of surrounding double quotes.
func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

func versionName(v exchange.SOAPVersion) string {
	if v == exchange.SOAP12 {
		return "1.2"
	}
	return "1.1"
}

// dispatch runs the dispatcher, turning a panic into an ErrInternal error.
func (s *Server) dispatch(ctx context.Context, rt *route, ex *exchange.Exchange) (err error) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if p == http.ErrAbortHandler { //nolint:errorlint // sentinel panic value
			panic(p)
		}
		s.log.Error("dispatcher panicked", logKeyProcess, rt.process, logKeyOp, ex.Operation.Name,
			logKeyPanic, fmt.Sprint(p), logKeyStack, string(debug.Stack()))
		err = fmt.Errorf("%w: dispatcher panicked: %v", ErrInternal, p)
	}()
	return rt.d.Dispatch(ctx, ex)
}

// faultFor is the one place that turns a failed exchange into a SOAP fault:
// its code, its reason and the HTTP status to send it with (SOAP 1.1 sends
// every fault with 500 unless the HTTP layer itself rejects the request;
// SOAP 1.2 sends Sender faults with 400).
func faultFor(err error, v exchange.SOAPVersion) (code FaultCode, reason string, status int) {
	clientStatus := http.StatusInternalServerError
	if v == exchange.SOAP12 {
		clientStatus = http.StatusBadRequest
	}
	switch {
	case errors.Is(err, ErrPartnerResponse), errors.Is(err, ErrPartnerFault):
		// A partner's answer the process did not handle (malformed, over a
		// limit, too large, a fault) is no fault of the requester's.
		return FaultServer, err.Error(), http.StatusInternalServerError
	case errors.Is(err, ErrTooLarge):
		return FaultClient, err.Error(), http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrContentType):
		return FaultClient, err.Error(), http.StatusUnsupportedMediaType
	case errors.Is(err, ErrUnknownPath):
		return FaultClient, err.Error(), http.StatusNotFound
	case errors.Is(err, ErrVersionMismatch):
		return FaultVersionMismatch, err.Error(), http.StatusInternalServerError
	case errors.Is(err, ErrMustUnderstand):
		return FaultMustUnderstand, err.Error(), http.StatusInternalServerError
	case errors.Is(err, ErrInternal):
		return FaultServer, "internal error", http.StatusInternalServerError
	case errors.Is(err, ErrMalformed), errors.Is(err, ErrLimit), errors.Is(err, ErrNotEnvelope), errors.Is(err, ErrNoBody),
		errors.Is(err, ErrMessage), errors.Is(err, ErrUnknownOperation):
		return FaultClient, err.Error(), clientStatus
	}
	switch exchange.KindOf(err) {
	case exchange.KindClient:
		return FaultClient, err.Error(), clientStatus
	case exchange.KindUnavailable:
		return FaultServer, err.Error(), http.StatusServiceUnavailable
	}
	return FaultServer, err.Error(), http.StatusInternalServerError
}

// outcomeOf returns the metric outcome of a failure with fault code c.
func outcomeOf(c FaultCode) string {
	if c == FaultServer {
		return outcomeServerError
	}
	return outcomeClientError
}

// writeFault encodes and writes a fault.
func (s *Server) writeFault(w http.ResponseWriter, v exchange.SOAPVersion, code FaultCode, reason string, detail []*etree.Element, status int) {
	buf := s.bufs.get()
	defer s.bufs.put(buf)
	// Writing to a bytes.Buffer cannot fail.
	_ = EncodeFault(buf, v, code, reason, detail)
	s.write(w, v, status, buf)
}

// writeFaultHeaders encodes and writes a fault with header blocks and no
// detail.
func (s *Server) writeFaultHeaders(w http.ResponseWriter, v exchange.SOAPVersion, headers []*etree.Element, code FaultCode, reason string, status int) {
	buf := s.bufs.get()
	defer s.bufs.put(buf)
	_ = encodeFault(buf, v, headers, code, reason, nil)
	s.write(w, v, status, buf)
}

// write sends an encoded envelope and flushes it.
func (s *Server) write(w http.ResponseWriter, v exchange.SOAPVersion, status int, buf *bytes.Buffer) {
	h := w.Header()
	h.Set("Content-Type", contentType(v))
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	if _, err := w.Write(buf.Bytes()); err != nil {
		s.log.Debug("writing response", logKeyErr, err)
		return
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// reply is the state behind one exchange's Respond.
type reply struct {
	s        *Server
	rt       *route
	op       *exchange.Operation
	w        http.ResponseWriter
	ver      exchange.SOAPVersion
	received time.Time

	mu      sync.Mutex
	written bool   // a reply or fault went out
	closed  bool   // the handler returned; w is gone
	outcome string // the metric outcome
	status  int    // the HTTP status sent

	limit limitHolder // the exchange's share of the admission limit

	// wsa holds the request's WS-Addressing properties, nil without
	// them; async is set once a non-anonymous ReplyTo was answered with
	// 202; cb is the reply or fault to send to a non-anonymous ReplyTo
	// or FaultTo after Dispatch returns (wsa_server.go).
	wsa   *Addressing
	async bool
	cb    *callback
}

// respond is Exchange.Respond.
func (rp *reply) respond(out *exchange.Message, f *exchange.Fault) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	log := rp.s.log
	switch {
	case rp.closed:
		log.Warn("Respond after the exchange finished; ignored", logKeyProcess, rp.rt.process, logKeyOp, rp.op.Name)
		return
	case rp.written:
		log.Warn("Respond called twice; ignored", logKeyProcess, rp.rt.process, logKeyOp, rp.op.Name)
		return
	case rp.op.OneWay():
		log.Warn("Respond on a one-way operation; ignored", logKeyProcess, rp.rt.process, logKeyOp, rp.op.Name)
		return
	}
	rp.written = true
	buf := rp.s.bufs.get()
	defer rp.s.bufs.put(buf)
	status := http.StatusOK
	rp.outcome = outcomeOK
	to, action, hs := rp.replyAddressing(f != nil, faultActionOf(rp.op, f))
	if f != nil {
		reason := f.Name.Local
		if f.Reason != "" {
			reason += ": " + f.Reason
		}
		_ = encodeFault(buf, rp.ver, hs, FaultServer, reason, faultDetail(rp.op, f))
		status = http.StatusInternalServerError
		rp.outcome = outcomeFault
	} else if err := encodeMessage(buf, rp.ver, rp.op, rp.op.Output, out, hs, true); err != nil {
		log.Error("reply does not match the operation", logKeyProcess, rp.rt.process, logKeyOp, rp.op.Name, logKeyErr, err)
		buf.Reset()
		to, action, hs = rp.replyAddressing(true, wsaFaultActionURI)
		_ = encodeFault(buf, rp.ver, hs, FaultServer, "invalid reply: "+err.Error(), nil)
		status = http.StatusInternalServerError
		rp.outcome = outcomeServerError
	}
	rp.status = status
	if rp.deferred(to, action, buf) {
		return
	}
	rp.s.write(rp.w, rp.ver, status, buf)
	rp.s.metrics.replied(rp.received)
}

// faultDetail returns the detail elements of a declared fault: its
// message's parts, in the declared order when the fault is known.
func faultDetail(op *exchange.Operation, f *exchange.Fault) []*etree.Element {
	if f.Message == nil || len(f.Message.Parts) == 0 {
		return nil
	}
	var names []string
	if desc := op.Faults[f.Name.Local]; desc != nil {
		for _, p := range desc.Parts {
			names = append(names, p.Name)
		}
	} else {
		names = slices.Sorted(maps.Keys(f.Message.Parts))
	}
	detail := make([]*etree.Element, 0, len(names))
	for _, n := range names {
		if el := f.Message.Parts[n]; el != nil {
			detail = append(detail, el)
		}
	}
	return detail
}

// finish completes the exchange after Dispatch returned err: it answers a
// one-way operation with 202, and reports a failure or a missing reply as a
// fault. Later calls to Respond are ignored.
func (rp *reply) finish(err error) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	rp.closed = true
	log := rp.s.log
	if rp.written {
		if err != nil {
			log.Warn("dispatch failed after replying", logKeyProcess, rp.rt.process, logKeyOp, rp.op.Name, logKeyErr, err)
		}
		return
	}
	if err == nil {
		if rp.op.OneWay() {
			rp.w.WriteHeader(http.StatusAccepted)
			rp.outcome, rp.status = outcomeAccepted, http.StatusAccepted
			rp.s.metrics.replied(rp.received)
			return
		}
		err = fmt.Errorf("%w to %s", ErrNoReply, rp.op.Name)
	}
	code, reason, status := faultFor(err, rp.ver)
	if !rp.faultDeferred(code, reason) {
		rp.s.writeFault(rp.w, rp.ver, code, reason, nil, status)
	}
	rp.s.metrics.replied(rp.received)
	rp.outcome, rp.status = outcomeOf(code), status
	switch {
	case errors.Is(err, ErrInternal): // logged with its stack already
	case code == FaultServer:
		log.Error("exchange failed", logKeyProcess, rp.rt.process, logKeyOp, rp.op.Name, logKeyStatus, status, logKeyErr, err)
	default:
		log.Debug("exchange rejected", logKeyProcess, rp.rt.process, logKeyOp, rp.op.Name, logKeyStatus, status, logKeyErr, err)
	}
}

// servedPath returns the path this server serves the service port at
// (not on the exchange path: ?wsdl only).
func (s *Server) servedPath(service exchange.QName, port string) (string, bool) {
	routes := s.routes.Load()
	if routes == nil {
		return "", false
	}
	found := ""
	for p, rt := range *routes {
		if rt.ep.Service == service && rt.ep.Port == port && (found == "" || p < found) {
			found = p // the least, should two paths serve one port
		}
	}
	return found, found != ""
}

// serveWSDL serves GET <path>?wsdl and <path>?wsdl=<name>.
func (s *Server) serveWSDL(w http.ResponseWriter, r *http.Request, rt *route) {
	var (
		name  string
		found bool
	)
	for k, vs := range r.URL.Query() {
		if strings.EqualFold(k, "wsdl") {
			found = true
			if len(vs) > 0 {
				name = vs[0]
			}
		}
	}
	if !found {
		w.Header().Set("Allow", "POST")
		http.Error(w, "GET serves only "+rt.ep.Path+"?wsdl; send SOAP requests with POST", http.StatusMethodNotAllowed)
		return
	}
	if name == "" && rt.ep.WSDL != nil {
		name = rt.ep.WSDL.Main
	}
	sd, ok := rt.wsdl[name]
	if !ok {
		http.Error(w, "no WSDL document "+strconv.Quote(name)+" at "+rt.ep.Path, http.StatusNotFound)
		return
	}
	doc := sd.render(s.public.Base(r), rt.ep, s.servedPath)
	h := w.Header()
	// A bundle's files are data, never a page of this origin (where the
	// console keeps its token): an imported "schema" that is really
	// XHTML or SVG with a script must not run.
	h.Set("Content-Type", "application/xml; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	h.Set("Content-Length", strconv.Itoa(len(doc)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if _, err := io.Copy(w, bytes.NewReader(doc)); err != nil {
		s.log.Debug("writing WSDL", logKeyPath, rt.ep.Path, logKeyErr, err)
	}
}
