package reference

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of Options.
const (
	DefaultCRMURL       = "http://127.0.0.1:9101/crm"
	DefaultERPURL       = "http://127.0.0.1:9102/erp"
	DefaultMaxBodyBytes = 4 << 20
	DefaultTimeout      = 30 * time.Second
)

// Namespaces of the workload contract.
const (
	soapNS = "http://schemas.xmlsoap.org/soap/envelope/"
	poNS   = "urn:example:po"
	crmNS  = "urn:example:crm"
	erpNS  = "urn:example:erp"
)

// Options configures a Handler. The zero value calls the partners at
// their default addresses.
type Options struct {
	// CRMURL and ERPURL are the partners' endpoints.
	CRMURL, ERPURL string
	// Client calls the partners; nil means a keep-alive client from
	// NewPartnerClient.
	Client *http.Client
	// MaxBodyBytes bounds a request body (default DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// Logger receives one line per fault; nil discards.
	Logger *slog.Logger
	// TransportOnly makes the handler a measuring floor, not a process:
	// it reads the request, posts fixed CRM and ERP requests (encoded
	// once, at New) to the partners, reads their answers without
	// decoding them and answers a fixed acknowledgment. It does the HTTP
	// legs of an exchange and none of the XML work, so its throughput
	// bounds what any implementation of the workload gets on the same
	// machine and partners.
	TransportOnly bool
}

// Handler serves the purchase-order SOAP endpoint. It is safe for
// concurrent use.
type Handler struct {
	crm, erp string
	client   *http.Client
	maxBody  int64
	log      *slog.Logger
	states   sync.Pool // *state
	// Header values shared by all responses and partner requests, never
	// modified (assigned to header maps without allocating).
	ctXML, crmAction, erpAction []string
	// canned holds the fixed CRM request, ERP request and acknowledgment
	// of Options.TransportOnly; nil otherwise.
	canned *[3][]byte
}

// NewPartnerClient returns an HTTP client for partner calls whose
// keep-alive pool holds up to maxIdlePerHost connections per partner.
func NewPartnerClient(maxIdlePerHost int) *http.Client {
	return &http.Client{
		Timeout: DefaultTimeout,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        2 * maxIdlePerHost,
			MaxIdleConnsPerHost: maxIdlePerHost,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
	}
}

// New returns a Handler.
func New(o Options) *Handler {
	h := &Handler{crm: o.CRMURL, erp: o.ERPURL, client: o.Client, maxBody: o.MaxBodyBytes, log: o.Logger}
	if h.crm == "" {
		h.crm = DefaultCRMURL
	}
	if h.erp == "" {
		h.erp = DefaultERPURL
	}
	if h.client == nil {
		h.client = NewPartnerClient(1024)
	}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.ctXML = []string{"text/xml; charset=utf-8"}
	h.crmAction = []string{`"urn:example:crm#recordPurchaseOrder"`}
	h.erpAction = []string{`"urn:example:erp#createWorkOrder"`}
	h.states.New = func() any { return newState() }
	if o.TransportOnly {
		h.canned = cannedExchange()
	}
	return h
}

// fault is a SOAP fault to answer with.
type fault struct {
	code string // "soapenv:Client" or "soapenv:Server"
	msg  string
}

func (f *fault) Error() string { return f.code + ": " + f.msg }

func clientFault(format string, args ...any) *fault {
	return &fault{code: "soapenv:Client", msg: fmt.Sprintf(format, args...)}
}

func serverFault(format string, args ...any) *fault {
	return &fault{code: "soapenv:Server", msg: fmt.Sprintf(format, args...)}
}

// ServeHTTP handles one purchase order.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed: use POST", http.StatusMethodNotAllowed)
		return
	}
	st := h.states.Get().(*state)
	defer func() {
		if st.reset() {
			h.states.Put(st)
		}
	}()
	buf := &st.in
	if f := h.process(r, st); f != nil {
		h.log.Info("fault", slog.String("code", f.code), slog.String("reason", f.msg), slog.String("remote", r.RemoteAddr))
		buf.Reset()
		writeFault(buf, f)
		h.writeXML(w, http.StatusInternalServerError, buf.Bytes())
		return
	}
	h.writeXML(w, http.StatusOK, buf.Bytes())
}

// state is what one exchange needs, reused through a sync.Pool.
type state struct {
	in   bytes.Buffer // the request, then each partner's answer, then the ack
	out  bytes.Buffer // the partner requests
	body partnerBody
	o    order
}

func newState() *state {
	st := &state{o: order{items: make([]item, 0, 8)}}
	st.in.Grow(4096)
	st.out.Grow(4096)
	return st
}

// reset readies st for reuse; false means it grew too large to keep.
func (st *state) reset() bool {
	if st.in.Cap() > 1<<20 || st.out.Cap() > 1<<20 {
		return false
	}
	st.in.Reset()
	st.out.Reset()
	st.o.reset()
	return true
}

// partnerBody is a partner request's body. The HTTP transport may still
// read a request body after the response has arrived; wait blocks until
// the transport has closed it, so that the buffer can be reused.
type partnerBody struct {
	bytes.Reader
	closed atomic.Bool
	done   sync.WaitGroup
}

func (b *partnerBody) start(p []byte) {
	b.Reset(p)
	b.closed.Store(false)
	b.done.Add(1)
}

// Close marks the body as no longer used by the transport.
func (b *partnerBody) Close() error {
	if b.closed.CompareAndSwap(false, true) {
		b.done.Done()
	}
	return nil
}

func (b *partnerBody) wait() { b.done.Wait() }

// process runs the whole exchange; on success st.in holds the ack
// envelope.
func (h *Handler) process(r *http.Request, st *state) *fault {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/xml") {
		return clientFault("Content-Type %q: want text/xml (SOAP 1.1)", ct)
	}
	in, out, o := &st.in, &st.out, &st.o
	n, err := in.ReadFrom(io.LimitReader(r.Body, h.maxBody+1))
	if err != nil {
		return clientFault("reading request body: %v", err)
	}
	if n > h.maxBody {
		return clientFault("request body exceeds %d bytes", h.maxBody)
	}
	if h.canned != nil {
		return h.processTransportOnly(r.Context(), st)
	}
	if f := decodeOrder(in.Bytes(), o); f != nil {
		return f
	}
	total, f := o.total()
	if f != nil {
		return f
	}

	out.Reset()
	writeCRMRequest(out, o, total)
	crmRef, f := h.call(r.Context(), st, "CRM", h.crm, h.crmAction, crmNS, "recordPurchaseOrderResponse", "crmRef")
	if f != nil {
		return f
	}

	out.Reset()
	writeERPRequest(out, o, crmRef)
	woID, f := h.call(r.Context(), st, "ERP", h.erp, h.erpAction, erpNS, "createWorkOrderResponse", "workOrderId")
	if f != nil {
		return f
	}

	in.Reset()
	writeAck(in, o.poID, crmRef, woID, total)
	return nil
}

// call posts the envelope in st.out to a partner, reads the answer into
// st.in and returns the text of its field respNS:field under
// respNS:respLocal.
func (h *Handler) call(ctx context.Context, st *state, name, url string, action []string, respNS, respLocal, field string) (string, *fault) {
	status, f := h.post(ctx, st, name, url, action, st.out.Bytes())
	if f != nil {
		return "", f
	}
	v, f := decodePartnerResponse(st.in.Bytes(), respNS, respLocal, field)
	if f != nil {
		return "", serverFault("%s partner at %s (HTTP %d): %s", name, url, status, f.msg)
	}
	if status < 200 || status > 299 {
		return "", serverFault("%s partner at %s: HTTP %d", name, url, status)
	}
	return v, nil
}

// post sends body to a partner and reads its answer into st.in,
// returning the HTTP status.
func (h *Handler) post(ctx context.Context, st *state, name, url string, action []string, body []byte) (int, *fault) {
	st.body.start(body)
	defer st.body.wait()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, &st.body)
	if err != nil {
		st.body.Close()
		return 0, serverFault("%s partner at %s: %v", name, url, err)
	}
	req.ContentLength = int64(len(body))
	req.Header["Content-Type"] = h.ctXML
	req.Header["Soapaction"] = action
	resp, err := h.client.Do(req)
	if err != nil {
		return 0, serverFault("%s partner at %s: %v", name, url, err)
	}
	buf := &st.in
	buf.Reset()
	_, err = buf.ReadFrom(io.LimitReader(resp.Body, h.maxBody+1))
	resp.Body.Close()
	if err != nil {
		return 0, serverFault("%s partner at %s: reading response: %v", name, url, err)
	}
	return resp.StatusCode, nil
}

// processTransportOnly is process for Options.TransportOnly: the two
// partner calls with the fixed requests, their answers read but not
// decoded, then the fixed acknowledgment in st.in.
func (h *Handler) processTransportOnly(ctx context.Context, st *state) *fault {
	c := h.canned
	for i, p := range [2]struct {
		name, url string
		action    []string
	}{{"CRM", h.crm, h.crmAction}, {"ERP", h.erp, h.erpAction}} {
		status, f := h.post(ctx, st, p.name, p.url, p.action, c[i])
		if f != nil {
			return f
		}
		if status < 200 || status > 299 {
			return serverFault("%s partner at %s: HTTP %d", p.name, p.url, status)
		}
	}
	st.in.Reset()
	st.in.Write(c[2])
	return nil
}

// cannedExchange encodes the fixed messages of Options.TransportOnly:
// the workload's own partner requests and acknowledgment (those of
// testdata/workload/po-request.xml).
func cannedExchange() *[3][]byte {
	o := &order{poID: "PO-000123", custID: "CUST-42", custName: "Acme Widgets Ltd", custEmail: "buyer@acme.example",
		street: "1 Industrial Way", city: "Springfield", postal: "12345", country: "US",
		items: []item{{"SKU-A100", "2", ""}, {"SKU-B200", "1", ""}, {"SKU-C300", "10", ""}}}
	var c [3][]byte
	var b bytes.Buffer
	writeCRMRequest(&b, o, "322.48")
	c[0] = bytes.Clone(b.Bytes())
	b.Reset()
	writeERPRequest(&b, o, "CRM-00000001")
	c[1] = bytes.Clone(b.Bytes())
	b.Reset()
	writeAck(&b, o.poID, "CRM-00000001", "WO-00000001", "322.48")
	c[2] = bytes.Clone(b.Bytes())
	return &c
}

func (h *Handler) writeXML(w http.ResponseWriter, status int, b []byte) {
	hd := w.Header()
	hd["Content-Type"] = h.ctXML
	hd["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
