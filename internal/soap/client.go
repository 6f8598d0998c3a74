package soap

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/beevik/etree"
	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/redact"
)

// Client defaults.
const (
	// DefaultCallTimeout bounds a partner call when ClientOptions.Timeout
	// is zero.
	DefaultCallTimeout = 30 * time.Second
	// DefaultMaxResponseBytes caps a partner response when
	// ClientOptions.MaxResponseBytes is zero.
	DefaultMaxResponseBytes = 4 << 20
)

// ClientOptions configure a Client. The zero value is usable.
type ClientOptions struct {
	// HTTPClient sends the requests. Nil means a client whose transport
	// keeps connections alive for reuse: no limit on idle connections
	// overall, 1024 per host, closed after 90s idle. SOAP calls never
	// follow redirects, whatever its CheckRedirect says.
	HTTPClient *http.Client
	// Timeout bounds each call, on top of the caller's context, unless the
	// call names its own (exchange.Call.Timeout). Zero means
	// DefaultCallTimeout (30s).
	Timeout time.Duration
	// MaxResponseBytes caps the size of a response body. Zero means
	// DefaultMaxResponseBytes (4 MiB).
	MaxResponseBytes int64
	// Limits bound the parsing of a response; a response over one fails
	// the call with an error wrapping ErrLimit. The zero value means the
	// defaults.
	Limits Limits
	// MaxConnsPerHost bounds the connections to one partner host (calls
	// beyond it wait for a free connection); used only when HTTPClient is
	// nil. Zero means DefaultMaxConnsPerHost; negative means no bound.
	MaxConnsPerHost int
	// TLS configures https calls (extra roots, a client certificate);
	// used only when HTTPClient is nil. Nil means the system roots and no
	// client certificate.
	TLS *tls.Config
	// Policy bounds the addresses calls to partners chosen at run time
	// connect to (AssignedPartner, PolicedHTTPClient); nil means the
	// default policy (no loopback, link-local or metadata addresses).
	// It is enforced by the Client's own transport only: with
	// HTTPClient set, those calls go through HTTPClient unchecked.
	Policy *PartnerPolicy
	// Logger receives the detail of failed calls to partners chosen at
	// run time (what they answered, why they could not be reached),
	// which their errors leave out; nil discards it.
	Logger *slog.Logger
}

// DefaultMaxConnsPerHost is the default bound on connections to one
// partner host: enough for the load a 2-core orchd can carry, without a
// connection (and two transport goroutines) per concurrent client at
// thousands of clients.
const DefaultMaxConnsPerHost = 256

// Client calls partner endpoints over SOAP/HTTP. It is safe for concurrent
// use; create one per server and share it.
type Client struct {
	// hc is the client HTTPClient returns; soap is the same transport
	// without redirects, for SOAP calls.
	hc, soap *http.Client
	// policed and policedSOAP are the same for partners chosen at run
	// time: the policy's dialer, no proxy, redirects to the same host
	// only (none for SOAP).
	policed, policedSOAP *http.Client
	// policy, conns and tls build the transports of policies narrowed
	// to a bundle's rules (assigned.go); policy is nil when HTTPClient
	// was given (no transport of our own).
	policy   *PartnerPolicy
	conns    int
	tls      *tls.Config
	narrowed sync.Map // *partnerallow.List -> *http.Client
	// narrowedREST are AssignedHTTPClient's clients, by rules.
	narrowedREST sync.Map
	log          *slog.Logger
	timeout      time.Duration
	maxResp      int64
	limits       Limits
	bufs         bufferPool
}

// NewClient returns a Client.
func NewClient(opts ClientOptions) *Client {
	c := &Client{hc: opts.HTTPClient, timeout: opts.Timeout, maxResp: opts.MaxResponseBytes, limits: opts.Limits.WithDefaults(), log: opts.Logger}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.policed = c.hc
	if c.hc == nil {
		conns := opts.MaxConnsPerHost
		if conns == 0 {
			conns = DefaultMaxConnsPerHost
		} else if conns < 0 {
			conns = 0
		}
		c.hc = &http.Client{Transport: newTransport(conns, opts.TLS, nil)}
		policy := opts.Policy
		if policy == nil {
			policy = &PartnerPolicy{}
		}
		c.policed = &http.Client{Transport: newTransport(conns, opts.TLS, policy), CheckRedirect: sameHostRedirects}
		c.policy, c.conns, c.tls = policy, conns, opts.TLS
	}
	psoap := *c.policed
	psoap.CheckRedirect = noRedirects
	c.policedSOAP = &psoap
	// A SOAP request redirected elsewhere is a misconfigured partner
	// address: following it would resend (or, for 301-303, turn into a
	// GET) a request the operator never pointed there.
	soapHC := *c.hc
	soapHC.CheckRedirect = noRedirects
	c.soap = &soapHC
	if c.timeout <= 0 {
		c.timeout = DefaultCallTimeout
	}
	if c.maxResp <= 0 {
		c.maxResp = DefaultMaxResponseBytes
	}
	return c
}

// HTTPClient returns the HTTP client the Client sends with (its
// keep-alive pool), and the bound it puts on each call, for other calls
// made on the same terms (REST extension activities).
func (c *Client) HTTPClient() (*http.Client, time.Duration) { return c.hc, c.timeout }

// PolicedHTTPClient is HTTPClient for calls to addresses chosen at run
// time (REST extension activities): under the partner address policy,
// following redirects to the same host only.
func (c *Client) PolicedHTTPClient() (*http.Client, time.Duration) { return c.policed, c.timeout }

// newTransport returns a transport tuned for many calls to few hosts;
// with a policy, its dialer enforces it and no proxy is used (the
// policy applies to the partner's address, not a proxy's).
func newTransport(maxConns int, tc *tls.Config, policy *PartnerPolicy) *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	dial, proxy := d.DialContext, http.ProxyFromEnvironment
	if policy != nil {
		dial, proxy = policy.dialer(d), nil
	}
	return &http.Transport{
		Proxy:                 proxy,
		DialContext:           dial,
		TLSClientConfig:       tc,
		MaxIdleConns:          0,
		MaxIdleConnsPerHost:   1024,
		MaxConnsPerHost:       maxConns,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
	}
}

// Partner returns the partner binding that calls ep at ep.Address.
func (c *Client) Partner(ep *exchange.Endpoint) exchange.Partner {
	return &partner{c: c, ep: ep, hc: c.soap}
}

// AssignedPartner is Partner for an address chosen at run time (a
// copied endpoint reference): the call is under the partner address
// policy, and a failure's error says only which call failed and whether
// the policy refused it (the log has what the partner answered or why
// it could not be reached), so that a client cannot read an internal
// service's answer or tell its ports apart through a fault.
func (c *Client) AssignedPartner(ep *exchange.Endpoint) exchange.Partner {
	return c.AssignedPartnerUnder(ep, nil)
}

// noRedirects is the CheckRedirect of SOAP calls: a SOAP response is
// the answer, a redirect none (WS-I BP R1130-R1132: POSTs are not
// redirected silently).
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// callTimeout bounds call: its own timeout, else the client's.
func (c *Client) callTimeout(call *exchange.Call) time.Duration {
	if call.Timeout > 0 {
		return call.Timeout
	}
	return c.timeout
}

// partner is a SOAP/HTTP partner endpoint.
type partner struct {
	c        *Client
	ep       *exchange.Endpoint
	hc       *http.Client
	assigned bool
}

// Address implements exchange.Addressed: the address calls go to, its
// credentials redacted.
func (p *partner) Address() string { return Redact(p.ep.Address) }

// maxDrain is how much of an unread response body is read to keep its
// connection for reuse; a longer one closes the connection instead.
const maxDrain = 64 << 10

// Invoke implements exchange.Partner. Every failure is an error that
// names the partner address, the operation and what went wrong, wrapping
// ErrPartnerUnreachable, ErrPartnerTimeout, ErrTooLarge,
// ErrPartnerResponse or ErrPartnerFault.
func (p *partner) Invoke(ctx context.Context, call *exchange.Call) (*exchange.Message, error) {
	var start time.Time
	if p.assigned {
		start = time.Now() // failLate's
	}
	msg, err := p.invoke(ctx, call)
	if err == nil || !p.assigned {
		return msg, err
	}
	var f *exchange.Fault
	var uf *exchange.UndeclaredFault
	if errors.As(err, &f) || errors.As(err, &uf) {
		return msg, err // the partner's fault: the process handles it
	}
	p.c.log.Warn("call to a partner address chosen at run time failed", logKeyPartner, Redact(p.ep.Address),
		logKeyOp, call.Operation.Name, logKeyErr, err)
	if errors.Is(err, ErrPartnerNotAllowed) {
		return nil, fmt.Errorf("partner %s %s: %w: %w", Redact(p.ep.Address), call.Operation.Name, ErrPartnerUnreachable, ErrPartnerNotAllowed)
	}
	p.c.failLate(ctx, call, start)
	return nil, fmt.Errorf("partner %s %s: %w", Redact(p.ep.Address), call.Operation.Name, ErrAssignedFailed)
}

func (p *partner) invoke(ctx context.Context, call *exchange.Call) (*exchange.Message, error) {
	op := call.Operation
	if p.ep.Address == "" {
		// deploy.xml named a service no WSDL of the bundle gives an
		// address for, and no process here provides it.
		return nil, fmt.Errorf("partner service %s port %s has no address (no soap:address in the bundle's WSDLs)", p.ep.Service, p.ep.Port)
	}
	// The request buffer is not pooled: the transport may still hold the
	// body (for a retry) after Do returns.
	var req bytes.Buffer
	headers, err := securityHeaders(p.ep, call.Headers)
	if err != nil {
		return nil, p.errorf(op, "%w", err)
	}
	if p.ep.Addressing || len(p.ep.ReferenceParams) > 0 {
		headers = callAddressing(p.ep, op, call.ReplyTo, headers)
	}
	if err := encodeMessage(&req, p.ep.Version, op, op.Input, call.Input, headers, false); err != nil {
		return nil, p.errorf(op, "encoding request: %w", err)
	}
	timeout := p.c.callTimeout(call)
	sp := trace.SpanFromContext(ctx) // the call's span, if traced
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errCallTimeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.ep.Address, bytes.NewReader(req.Bytes()))
	if err != nil {
		return nil, p.errorf(op, "%w", redact.Error(err))
	}
	setSOAPHeaders(hreq, p.ep.Version, op.Action)
	if a := p.ep.BasicAuth; a != nil {
		hreq.SetBasicAuth(a.User, string(a.Password))
	}
	traceCall(ctx, sp, hreq, p.ep.Address)
	if id := exchange.IdlerOf(ctx); id != nil {
		id.Idle(exchange.WaitPartner)
		defer id.Busy(exchange.WaitPartner)
	}
	resp, err := p.hc.Do(hreq)
	if err != nil {
		return nil, p.errorf(op, "%w", transportError(ctx, err, timeout))
	}
	traceStatus(sp, resp.StatusCode)
	buf := p.c.bufs.get()
	defer p.c.bufs.put(buf)
	_, err = buf.ReadFrom(io.LimitReader(resp.Body, p.c.maxResp+1))
	if err == nil && int64(buf.Len()) <= p.c.maxResp {
		// Drain a little of what is left so the connection can be
		// reused; a body still longer is cut off with the connection.
		_, _ = io.CopyN(io.Discard, resp.Body, maxDrain)
	}
	_ = resp.Body.Close()
	if err != nil {
		return nil, p.errorf(op, "HTTP %s, reading the response: %w", resp.Status, transportError(ctx, err, timeout))
	}
	if int64(buf.Len()) > p.c.maxResp {
		return nil, p.errorf(op, "%w: response exceeds %d bytes", ErrTooLarge, p.c.maxResp)
	}
	return p.response(op, resp, buf.Bytes())
}

// errCallTimeout is the cause of a call's context when its timeout ends
// it.
var errCallTimeout = errors.New("call timeout")

// transportError says in a few words what failed when sending a request or
// reading its response: a timeout (ErrPartnerTimeout), a host or
// connection that could not be reached (ErrPartnerUnreachable), a TLS
// problem, a connection cut. It keeps err wrapped.
func transportError(ctx context.Context, err error, timeout time.Duration) error {
	var (
		dns  *net.DNSError
		cert *tls.CertificateVerificationError
		uerr *url.Error
		rec  tls.RecordHeaderError
		alrt tls.AlertError
	)
	if errors.As(err, &uerr) {
		// The partner's address is named already.
		err = uerr.Err
	}
	switch {
	case errors.Is(context.Cause(ctx), errCallTimeout):
		return fmt.Errorf("%w: no answer within %s", ErrPartnerTimeout, timeout)
	case ctx.Err() != nil:
		return fmt.Errorf("call cancelled: %w", err)
	case errors.As(err, &dns):
		return fmt.Errorf("%w: cannot resolve host %s: %w", ErrPartnerUnreachable, dns.Name, err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w: connection refused: %w", ErrPartnerUnreachable, err)
	case errors.As(err, &cert):
		return fmt.Errorf("%w: TLS: partner certificate not accepted: %w", ErrPartnerUnreachable, err)
	case errors.As(err, &rec), errors.As(err, &alrt):
		return fmt.Errorf("%w: TLS: %w", ErrPartnerUnreachable, err)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fmt.Errorf("connection cut by the partner: %w", err)
	}
	return err
}

// response interprets a partner's answer.
func (p *partner) response(op *exchange.Operation, resp *http.Response, body []byte) (*exchange.Message, error) {
	empty := len(bytes.TrimSpace(body)) == 0
	switch {
	case resp.StatusCode == http.StatusAccepted || (resp.StatusCode == http.StatusOK && empty):
		if op.OneWay() {
			return nil, nil
		}
		return nil, p.errorf(op, "%w: HTTP %d without a response message", ErrPartnerResponse, resp.StatusCode)
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return nil, p.errorf(op, "%w: HTTP %s, a redirect to %q (not followed: correct the partner's address)", ErrPartnerResponse, resp.Status, resp.Header.Get("Location"))
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		what := "no credentials configured (orchd:basicAuth, orchd:usernameToken)"
		switch {
		case p.ep.BasicAuth != nil:
			what = "credentials of user " + strconv.Quote(p.ep.BasicAuth.User) + " refused"
		case p.ep.Security != nil:
			what = fmt.Sprintf("WS-Security %v refused", p.ep.Security)
		}
		return nil, p.errorf(op, "%w: HTTP %s: %s", ErrPartnerResponse, resp.Status, what)
	case resp.StatusCode == http.StatusOK, resp.StatusCode == http.StatusInternalServerError,
		resp.StatusCode == http.StatusBadRequest:
	default:
		p.logBody(op, resp, body)
		return nil, p.errorf(op, "%w: HTTP %s", ErrPartnerResponse, resp.Status)
	}
	env, err := decodeEnvelopeBytes(body, p.c.limits)
	if err != nil {
		ct := resp.Header.Get("Content-Type")
		if ct == "" {
			ct = "no Content-Type"
		}
		p.logBody(op, resp, body)
		return nil, p.errorf(op, "%w: HTTP %s (%s), not a SOAP envelope: %w", ErrPartnerResponse, resp.Status, ct, err)
	}
	if f := env.Fault(); f != nil {
		return nil, p.fault(op, f)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, p.errorf(op, "%w: HTTP %s with an envelope that holds no fault", ErrPartnerResponse, resp.Status)
	}
	if op.OneWay() {
		return nil, nil
	}
	msg, err := decodeMessage(op, op.Output, env, true)
	if err != nil {
		return nil, p.errorf(op, "%w: %w%s", ErrPartnerResponse, err, bodyHolds(env))
	}
	return msg, nil
}

// fault maps a SOAP fault to a declared fault of op, or to an error.
func (p *partner) fault(op *exchange.Operation, f *Fault) error {
	if len(f.Detail) > 0 {
		got := qnameOf(f.Detail[0])
		for name, desc := range op.Faults {
			if desc == nil || len(desc.Parts) != 1 || desc.Parts[0].Element != got {
				continue
			}
			msg := &exchange.Message{Name: desc.Name, Parts: map[string]*etree.Element{desc.Parts[0].Name: f.Detail[0]}}
			return &exchange.Fault{Name: op.FaultName(name), Message: msg, Reason: f.Reason}
		}
	}
	// A fault named by its faultcode (as ODE's partners answer declared
	// faults of several parts): the detail's children are the parts.
	code := f.CodeValue
	if i := strings.LastIndexByte(code, ':'); i >= 0 {
		code = code[i+1:]
	}
	if desc, ok := op.Faults[code]; ok && desc != nil {
		msg := &exchange.Message{Name: desc.Name, Parts: map[string]*etree.Element{}}
		for _, pd := range desc.Parts {
			for _, d := range f.Detail {
				if d.Tag == pd.Name || (len(desc.Parts) == 1 && !pd.Element.IsZero()) {
					msg.Parts[pd.Name] = d
					break
				}
			}
		}
		return &exchange.Fault{Name: op.FaultName(code), Message: msg, Reason: f.Reason}
	}
	if sp := f.CodeName.Space; sp != "" && sp != NS11 && sp != NS12 {
		// An application fault the WSDL does not declare: still a fault
		// (ODE raised it by name), named by its faultcode, carrying the
		// detail's elements as parts named after them.
		msg := &exchange.Message{Parts: make(map[string]*etree.Element, len(f.Detail))}
		for _, d := range f.Detail {
			msg.Parts[d.Tag] = d
		}
		return &exchange.Fault{Name: f.CodeName, Message: msg, Reason: f.Reason}
	}
	uf := &exchange.UndeclaredFault{Code: f.CodeName, Reason: f.Reason, Detail: f.Detail}
	return p.errorf(op, "%w %s (undeclared): %w", ErrPartnerFault, f.CodeValue, uf)
}

// errorf returns an error naming the partner address and operation.
func (p *partner) errorf(op *exchange.Operation, format string, args ...any) error {
	return fmt.Errorf("partner %s %s: %w", Redact(p.ep.Address), op.Name, fmt.Errorf(format, args...))
}

// bodyHolds names the elements of a response body that did not match
// the operation's output message.
func bodyHolds(env *Envelope) string {
	if len(env.Body) == 0 {
		return "; the body is empty"
	}
	names := make([]string, 0, min(len(env.Body), 3))
	for _, el := range env.Body[:min(len(env.Body), 3)] {
		names = append(names, "{"+el.NamespaceURI()+"}"+el.Tag)
	}
	return "; the body holds " + strings.Join(names, ", ")
}

// logBody logs the start of a partner's answer that was no usable SOAP
// response: it goes to the log, never into an error (whose text a
// client's fault may carry).
func (p *partner) logBody(op *exchange.Operation, resp *http.Response, body []byte) {
	const limit = 200
	s := strings.TrimSpace(string(body[:min(len(body), limit)]))
	p.c.log.Warn("partner answer is no SOAP response", logKeyPartner, Redact(p.ep.Address), logKeyOp, op.Name,
		logKeyStatus, resp.StatusCode, "body", s)
}
