package restcall

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/partnerallow"
	"github.com/orchd/orchd/internal/redact"
)

const (
	// DefaultTimeout bounds a call when New is given no timeout.
	DefaultTimeout = 30 * time.Second
	// MaxResponse caps a response body.
	MaxResponse = 4 << 20
)

// Client sends the HTTP requests of REST extension activities.
type Client struct {
	hc       *http.Client
	assigned func(only *partnerallow.List) *http.Client
	timeout  time.Duration
	tracer   trace.Tracer
}

// New returns the client of REST activities: hc (nil: Go's default
// transport) for URIs the bundle names, assigned (nil: hc) for URIs
// taken from a variable, under the partner address policy narrowed to
// the process's orchd:partnerAllow rules; each request bounded by
// timeout (zero: 30s), traced by tracer (nil: not traced).
func New(hc *http.Client, assigned func(only *partnerallow.List) *http.Client, timeout time.Duration, tracer trace.Tracer) *Client {
	c := &Client{hc: hc, assigned: assigned, timeout: timeout, tracer: tracer}
	if c.hc == nil {
		c.hc = &http.Client{}
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	return c
}

// Request is a REST call, built in the instance's goroutine from its
// variables, so it may be sent from another.
type Request struct {
	Method, URL, Accept, ContentType string
	Body                             []byte
	HasBody                          bool
	// Assigned is set when URL was taken from a variable: the call goes
	// under the partner address policy narrowed to Only.
	Assigned bool
	Only     *partnerallow.List
	// Parent is the span the call is a child of (invalid: not traced).
	Parent trace.SpanContext
}

// Response is what the server answered.
type Response struct {
	Status int
	Body   []byte
}

// Do sends r under ctx, bounded by the client's timeout. A nil client
// (a host without one) is an error, not a panic.
func (c *Client) Do(ctx context.Context, r *Request) (*Response, error) {
	if c == nil {
		return nil, errors.New("no REST client")
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var body io.Reader
	if r.HasBody {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", r.Accept)
	if r.HasBody {
		req.Header.Set("Content-Type", r.ContentType)
	}
	if id := exchange.IdlerOf(ctx); id != nil {
		id.Idle(exchange.WaitPartner)
		defer id.Busy(exchange.WaitPartner)
	}
	hc, policed := c.hc, r.Assigned && c.assigned != nil
	if policed {
		hc = c.assigned(r.Only)
	}
	sp := c.start(ctx, r, req)
	resp, err := hc.Do(req)
	end(sp, resp, err)
	if err != nil {
		var ue *url.Error
		if policed && errors.As(err, &ue) {
			// The URI is the client's own; the fault is the same text
			// whatever it was (the policy's log line has the detail).
			err = ue.Err
		}
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("reading the response: %w", err)
	}
	if len(b) > MaxResponse {
		return nil, fmt.Errorf("the response is larger than %d bytes", MaxResponse)
	}
	return &Response{Status: resp.StatusCode, Body: b}, nil
}

// Span attribute keys (OpenTelemetry's HTTP conventions).
const (
	attrURL    = attribute.Key("url.full")
	attrStatus = attribute.Key("http.response.status_code")
	attrMethod = attribute.Key("http.request.method")
)

// start starts the span of r (nil without tracing) and puts its trace
// context on req.
func (c *Client) start(ctx context.Context, r *Request, req *http.Request) trace.Span {
	if c.tracer == nil || !r.Parent.IsValid() {
		return nil
	}
	ctx, sp := c.tracer.Start(trace.ContextWithSpanContext(ctx, r.Parent), "REST "+r.Method,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrMethod.String(r.Method), attrURL.String(redact.AddressNoQuery(r.URL))))
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	return sp
}

// end ends a call's span.
func end(sp trace.Span, resp *http.Response, err error) {
	if sp == nil {
		return
	}
	if resp != nil {
		sp.SetAttributes(attrStatus.Int(resp.StatusCode))
	}
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, err.Error())
	}
	sp.End()
}
