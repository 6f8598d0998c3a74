package mockpartner

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
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

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/xmlparse"
)

// Namespaces of the workload contract.
const (
	// SOAPEnvNS is the SOAP 1.1 envelope namespace.
	SOAPEnvNS = "http://schemas.xmlsoap.org/soap/envelope/"
	// CRMNS is the CRM partner's namespace.
	CRMNS = "urn:example:crm"
	// ERPNS is the ERP partner's namespace.
	ERPNS = "urn:example:erp"
)

// MaxBodyBytes is the largest request body a partner reads. Larger bodies
// are refused with HTTP 413 and a SOAP Client fault.
const MaxBodyBytes = 1 << 20

// ShutdownTimeout bounds how long Serve waits for in-flight requests once
// its context is done.
const ShutdownTimeout = 5 * time.Second

// Partners holds the CRM and ERP mock partners and their counters. Its
// methods are safe for concurrent use. The zero value is not usable; call
// New.
type Partners struct {
	log    *slog.Logger
	crmSeq atomic.Uint64
	erpSeq atomic.Uint64
	bufs   sync.Pool // *bytes.Buffer, for request bodies and responses
}

// New returns partners whose counters start at 1. A nil logger discards
// log output.
func New(logger *slog.Logger) *Partners {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &Partners{log: logger}
	p.bufs.New = func() any { return new(bytes.Buffer) }
	return p
}

// CRM returns the handler of the CRM partner (crm:recordPurchaseOrder).
func (p *Partners) CRM() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.serve(w, r, "crm", p.crm)
	})
}

// ERP returns the handler of the ERP partner (erp:createWorkOrder).
func (p *Partners) ERP() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.serve(w, r, "erp", p.erp)
	})
}

// clientFault is a problem with the request, reported as a SOAP Client
// fault.
type clientFault struct {
	status int // HTTP status; 0 means 500
	msg    string
}

func (f *clientFault) Error() string { return f.msg }

func faultf(format string, args ...any) *clientFault {
	return &clientFault{msg: fmt.Sprintf(format, args...)}
}

// operation checks a request's body element and writes the response
// envelope to out. It returns the echoed poId and the reference handed out.
type operation func(op *etree.Element, out *bytes.Buffer) (poID, ref string, f *clientFault)

func (p *Partners) serve(w http.ResponseWriter, r *http.Request, name string, op operation) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed: use POST", http.StatusMethodNotAllowed)
		return
	}
	buf := p.bufs.Get().(*bytes.Buffer)
	defer p.putBuf(buf)
	buf.Reset()

	poID, ref, f := p.handle(r, buf, op)
	if f != nil {
		p.log.Info("mock partner: client fault", "partner", name, "remote", r.RemoteAddr, "fault", f.msg)
		status := f.status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		buf.Reset()
		writeFault(buf, f.msg)
		writeXML(w, status, buf.Bytes())
		return
	}
	p.log.Debug("mock partner: answered", "partner", name, "poId", poID, "ref", ref)
	writeXML(w, http.StatusOK, buf.Bytes())
}

// handle reads and parses the request into buf (reused for the response)
// and runs op on the body's operation element.
func (p *Partners) handle(r *http.Request, buf *bytes.Buffer, op operation) (poID, ref string, f *clientFault) {
	n, err := buf.ReadFrom(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return "", "", faultf("reading request body: %v", err)
	}
	if n > MaxBodyBytes {
		return "", "", &clientFault{status: http.StatusRequestEntityTooLarge,
			msg: fmt.Sprintf("request body exceeds %d bytes", MaxBodyBytes)}
	}
	doc := xmlparse.NewDocument()
	if err := doc.ReadFromBytes(buf.Bytes()); err != nil {
		return "", "", faultf("malformed XML: %v", err)
	}
	body, f := soapBody(doc)
	if f != nil {
		return "", "", f
	}
	buf.Reset()
	return op(body, buf)
}

// soapBody returns the single element child of the SOAP 1.1 Body.
func soapBody(doc *etree.Document) (*etree.Element, *clientFault) {
	env := doc.Root()
	if env == nil {
		return nil, faultf("malformed XML: no root element")
	}
	if env.Tag != "Envelope" || env.NamespaceURI() != SOAPEnvNS {
		return nil, faultf("not a SOAP 1.1 envelope: root element is {%s}%s", env.NamespaceURI(), env.Tag)
	}
	body := child(env, SOAPEnvNS, "Body")
	if body == nil {
		return nil, faultf("SOAP envelope has no Body")
	}
	var op *etree.Element
	for _, c := range body.ChildElements() {
		if op != nil {
			return nil, faultf("SOAP Body holds more than one element")
		}
		op = c
	}
	if op == nil {
		return nil, faultf("SOAP Body is empty")
	}
	return op, nil
}

// crm checks crm:recordPurchaseOrder and writes its response.
func (p *Partners) crm(op *etree.Element, out *bytes.Buffer) (string, string, *clientFault) {
	if f := expectOp(op, CRMNS, "recordPurchaseOrder"); f != nil {
		return "", "", f
	}
	poID, f := requiredText(op, CRMNS, "poId")
	if f != nil {
		return "", "", f
	}
	if _, f := requiredText(op, CRMNS, "account", "accountId"); f != nil {
		return "", "", f
	}
	if _, f := requiredText(op, CRMNS, "orderTotal"); f != nil {
		return "", "", f
	}
	ref := reference("CRM-", p.crmSeq.Add(1))
	out.WriteString(`<soapenv:Envelope xmlns:soapenv="` + SOAPEnvNS + `"><soapenv:Body>` +
		`<crm:recordPurchaseOrderResponse xmlns:crm="` + CRMNS + `"><crm:poId>`)
	escape(out, poID)
	out.WriteString(`</crm:poId><crm:crmRef>`)
	out.WriteString(ref)
	out.WriteString(`</crm:crmRef></crm:recordPurchaseOrderResponse></soapenv:Body></soapenv:Envelope>`)
	return poID, ref, nil
}

// erp checks erp:createWorkOrder and writes its response.
func (p *Partners) erp(op *etree.Element, out *bytes.Buffer) (string, string, *clientFault) {
	if f := expectOp(op, ERPNS, "createWorkOrder"); f != nil {
		return "", "", f
	}
	poID, f := requiredText(op, ERPNS, "poId")
	if f != nil {
		return "", "", f
	}
	if _, f := requiredText(op, ERPNS, "crmRef"); f != nil {
		return "", "", f
	}
	lines := child(op, ERPNS, "lines")
	if lines == nil {
		return "", "", faultf("missing required field erp:lines")
	}
	n := 0
	for _, l := range lines.ChildElements() {
		if l.Tag != "line" || l.NamespaceURI() != ERPNS {
			continue
		}
		n++
		for _, field := range [...]string{"sku", "quantity"} {
			if _, f := requiredText(l, ERPNS, field); f != nil {
				return "", "", faultf("missing required field erp:lines/erp:line[%d]/erp:%s", n, field)
			}
		}
	}
	if n == 0 {
		return "", "", faultf("missing required field erp:lines/erp:line (at least one line is required)")
	}
	ref := reference("WO-", p.erpSeq.Add(1))
	out.WriteString(`<soapenv:Envelope xmlns:soapenv="` + SOAPEnvNS + `"><soapenv:Body>` +
		`<erp:createWorkOrderResponse xmlns:erp="` + ERPNS + `"><erp:poId>`)
	escape(out, poID)
	out.WriteString(`</erp:poId><erp:workOrderId>`)
	out.WriteString(ref)
	out.WriteString(`</erp:workOrderId></erp:createWorkOrderResponse></soapenv:Body></soapenv:Envelope>`)
	return poID, ref, nil
}

func expectOp(op *etree.Element, space, local string) *clientFault {
	if op.Tag != local || op.NamespaceURI() != space {
		return faultf("unexpected operation element {%s}%s: this partner accepts {%s}%s",
			op.NamespaceURI(), op.Tag, space, local)
	}
	return nil
}

// requiredText follows path (local names in namespace space) from e and
// returns the trimmed text of the element it reaches, or a fault naming the
// path when an element is missing or its text is empty.
func requiredText(e *etree.Element, space string, path ...string) (string, *clientFault) {
	for _, local := range path {
		if e = child(e, space, local); e == nil {
			break
		}
	}
	var text string
	if e != nil {
		text = strings.TrimSpace(e.Text())
	}
	if text == "" {
		prefix := space[strings.LastIndexByte(space, ':')+1:]
		var name strings.Builder
		for i, local := range path {
			if i > 0 {
				name.WriteByte('/')
			}
			name.WriteString(prefix + ":" + local)
		}
		return "", faultf("missing required field %s", name.String())
	}
	return text, nil
}

// child returns the first child element of e named {space}local.
func child(e *etree.Element, space, local string) *etree.Element {
	for _, c := range e.Child {
		if ce, ok := c.(*etree.Element); ok && ce.Tag == local && ce.NamespaceURI() == space {
			return ce
		}
	}
	return nil
}

// reference formats prefix followed by n zero-padded to eight digits.
func reference(prefix string, n uint64) string {
	var b [32]byte
	out := append(b[:0], prefix...)
	digits := strconv.AppendUint(nil, n, 10)
	for i := len(digits); i < 8; i++ {
		out = append(out, '0')
	}
	return string(append(out, digits...))
}

// escape writes s to out as XML character data.
func escape(out *bytes.Buffer, s string) {
	if strings.IndexAny(s, "<>&'\"\r\n\t") < 0 {
		out.WriteString(s)
		return
	}
	_ = xml.EscapeText(out, []byte(s)) // writes to a bytes.Buffer cannot fail
}

// writeFault writes a SOAP 1.1 Client fault envelope to out.
func writeFault(out *bytes.Buffer, msg string) {
	out.WriteString(`<soapenv:Envelope xmlns:soapenv="` + SOAPEnvNS + `"><soapenv:Body><soapenv:Fault>` +
		`<faultcode>soapenv:Client</faultcode><faultstring>`)
	escape(out, msg)
	out.WriteString(`</faultstring></soapenv:Fault></soapenv:Body></soapenv:Envelope>`)
}

func writeXML(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/xml; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (p *Partners) putBuf(b *bytes.Buffer) {
	if b.Cap() > 4*MaxBodyBytes {
		return // do not keep huge buffers alive
	}
	p.bufs.Put(b)
}

// Serve runs the CRM partner on crmAddr and the ERP partner on erpAddr
// (host:port; each serves any URL path, conventionally /crm and /erp) until
// ctx is done, then shuts both down gracefully, waiting up to
// ShutdownTimeout for requests in flight. A listen error (for example an
// address already in use) is returned at once and names the address. Serve
// returns nil after a shutdown caused by ctx.
func (p *Partners) Serve(ctx context.Context, crmAddr, erpAddr string) error {
	var lc net.ListenConfig
	crmLn, err := lc.Listen(ctx, "tcp", crmAddr)
	if err != nil {
		return fmt.Errorf("mock CRM partner: listen on %s: %w", crmAddr, err)
	}
	erpLn, err := lc.Listen(ctx, "tcp", erpAddr)
	if err != nil {
		crmLn.Close()
		return fmt.Errorf("mock ERP partner: listen on %s: %w", erpAddr, err)
	}
	return p.ServeListeners(ctx, crmLn, erpLn)
}

// ServeListeners is Serve on listeners the caller opened (useful with
// port 0). It closes both listeners before returning.
func (p *Partners) ServeListeners(ctx context.Context, crmLn, erpLn net.Listener) error {
	servers := []struct {
		name string
		ln   net.Listener
		srv  *http.Server
	}{
		{"crm", crmLn, p.newServer(ctx, p.CRM())},
		{"erp", erpLn, p.newServer(ctx, p.ERP())},
	}
	errc := make(chan error, len(servers))
	for _, s := range servers {
		p.log.Info("mock partner listening", "partner", s.name, "addr", s.ln.Addr().String())
		go func() {
			err := s.srv.Serve(s.ln)
			if errors.Is(err, http.ErrServerClosed) {
				err = nil
			} else if err != nil {
				err = fmt.Errorf("mock %s partner on %s: %w", s.name, s.ln.Addr(), err)
			}
			errc <- err
		}()
	}

	var first error
	remaining := len(servers) // Serve results still to collect
	select {
	case <-ctx.Done():
	case first = <-errc: // a server stopped on its own: stop the other one
		remaining--
		if first == nil {
			first = errors.New("mock partner: server stopped unexpectedly")
		}
	}

	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	for _, s := range servers {
		if err := s.srv.Shutdown(shutCtx); err != nil {
			s.srv.Close()
			if first == nil {
				first = fmt.Errorf("mock %s partner: shutdown: %w", s.name, err)
			}
		}
	}
	// Collect the remaining Serve results so no goroutine outlives us.
	for range remaining {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	p.log.Info("mock partners stopped")
	return first
}

func (p *Partners) newServer(ctx context.Context, h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelWarn),
	}
}
