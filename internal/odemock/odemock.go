package odemock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/soap"
)

// Namespaces and portTypes of the two partners.
const (
	ProbeNS = "http://ode/bpel/unit-test/ProbeService.wsdl"
	FaultNS = "http://ode/bpel/unit-test/FaultService.wsdl"
)

// The portTypes the partners implement (ODE routed by these).
var (
	ProbePortType = exchange.QName{Space: ProbeNS, Local: "probeMessagePT"}
	FaultPortType = exchange.QName{Space: FaultNS, Local: "faultMessagePT"}
)

// maxBody bounds a request body.
const maxBody = 1 << 20

// Probe returns the ProbeService handler.
func Probe(log *slog.Logger) http.Handler {
	return handler{log: orDiscard(log), name: "probe", answer: probe}
}

// Fault returns the FaultService handler.
func Fault(log *slog.Logger) http.Handler {
	return handler{log: orDiscard(log), name: "fault", answer: fault}
}

func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}

// request is a decoded call: its parts by name, and how it was wrapped.
type request struct {
	version exchange.SOAPVersion
	parts   map[string]string
	order   []string
	// wrapper is the rpc wrapper element, nil for document style.
	wrapper *etree.Element
}

// answer is a reply: parts in order, or a fault.
type answer struct {
	names, values []string
	fault         exchange.QName
}

type handler struct {
	log    *slog.Logger
	name   string
	answer func(*request) answer
}

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST a SOAP request", http.StatusMethodNotAllowed)
		return
	}
	env, err := soap.DecodeEnvelope(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		h.write(w, exchange.SOAP11, http.StatusInternalServerError, func(b *bytes.Buffer) error {
			return soap.EncodeFault(b, exchange.SOAP11, soap.FaultClient, fmt.Sprintf("odemock %s: %v", h.name, err), nil)
		})
		return
	}
	req := decode(env)
	a := h.answer(req)
	h.log.Debug("odemock call", slog.String("partner", h.name), slog.Any("parts", req.parts), slog.String("fault", a.fault.String()))
	if !a.fault.IsZero() {
		h.write(w, req.version, http.StatusInternalServerError, func(b *bytes.Buffer) error {
			return encodeFault(b, req.version, a)
		})
		return
	}
	h.write(w, req.version, http.StatusOK, func(b *bytes.Buffer) error {
		return soap.EncodeEnvelope(b, req.version, nil, encodeParts(req, a))
	})
}

func (h handler) write(w http.ResponseWriter, v exchange.SOAPVersion, status int, enc func(*bytes.Buffer) error) {
	var b bytes.Buffer
	if err := enc(&b); err != nil {
		h.log.Error("odemock encode", slog.String("partner", h.name), slog.Any("err", err))
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	ct := "text/xml; charset=utf-8"
	if v == exchange.SOAP12 {
		ct = "application/soap+xml; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// decode reads the parts of a document/literal body (one unqualified
// element per part) or of an rpc wrapper.
func decode(env *soap.Envelope) *request {
	req := &request{version: env.Version, parts: map[string]string{}}
	body := env.Body
	if len(body) == 1 && len(body[0].ChildElements()) > 0 {
		req.wrapper = body[0]
		body = body[0].ChildElements()
	}
	for _, el := range body {
		req.parts[el.Tag] = el.Text()
		req.order = append(req.order, el.Tag)
	}
	return req
}

func probe(req *request) answer {
	a := answer{}
	for _, n := range req.order {
		v := req.parts[n]
		if n == "probeData" {
			v = v + " -> " + req.parts["probeName"]
		}
		a.names = append(a.names, n)
		a.values = append(a.values, v)
	}
	if len(a.names) == 0 { // nothing sent: still answer in the message's shape
		a.names = []string{"probeName", "probeData"}
		a.values = []string{"", " -> "}
	}
	return a
}

func fault(req *request) answer {
	name := "UnKnownFault"
	switch {
	case req.parts["faultIndicator1"] == "yes":
		name = "FaultMessage1"
	case req.parts["faultIndicator2"] == "yes":
		name = "FaultMessage2"
	}
	return answer{
		names:  []string{"errorID", "errorText"},
		values: []string{"FA-1", req.parts["faultData"]},
		fault:  exchange.QName{Space: FaultNS, Local: name},
	}
}

// partElements returns the answer's parts as unqualified elements.
func partElements(a answer) []*etree.Element {
	out := make([]*etree.Element, len(a.names))
	for i, n := range a.names {
		el := etree.NewElement(n)
		el.SetText(a.values[i])
		out[i] = el
	}
	return out
}

// encodeParts shapes the reply like the request: bare parts, or wrapped in
// an rpc response element.
func encodeParts(req *request, a answer) []*etree.Element {
	parts := partElements(a)
	if req.wrapper == nil {
		return parts
	}
	w := etree.NewElement(req.wrapper.Tag + "Response")
	if ns := req.wrapper.NamespaceURI(); ns != "" {
		w.Space = "m"
		w.CreateAttr("xmlns:m", ns)
	}
	for _, p := range parts {
		w.AddChild(p)
	}
	return []*etree.Element{w}
}

// encodeFault writes a fault whose code is the fault's QName.
func encodeFault(b *bytes.Buffer, v exchange.SOAPVersion, a answer) error {
	// soap.EncodeFault writes a standard code; write the envelope by hand
	// to carry the application-defined one.
	env := etree.NewDocument()
	envNS, p := soap.NS11, "soapenv"
	if v == exchange.SOAP12 {
		envNS, p = soap.NS12, "env"
	}
	root := env.CreateElement(p + ":Envelope")
	root.CreateAttr("xmlns:"+p, envNS)
	f := root.CreateElement(p + ":Body").CreateElement(p + ":Fault")
	f.CreateAttr("xmlns:fs", a.fault.Space)
	code := "fs:" + a.fault.Local
	var detail *etree.Element
	if v == exchange.SOAP12 {
		c := f.CreateElement(p + ":Code")
		c.CreateElement(p + ":Value").SetText(p + ":Receiver")
		c.CreateElement(p + ":Subcode").CreateElement(p + ":Value").SetText(code)
		t := f.CreateElement(p + ":Reason").CreateElement(p + ":Text")
		t.CreateAttr("xml:lang", "en")
		t.SetText(a.fault.Local)
		detail = f.CreateElement(p + ":Detail")
	} else {
		f.CreateElement("faultcode").SetText(code)
		f.CreateElement("faultstring").SetText(a.fault.Local)
		detail = f.CreateElement("detail")
	}
	for _, el := range partElements(a) {
		detail.AddChild(el)
	}
	_, err := env.WriteTo(b)
	return err
}

// Servers are the two partners on their own loopback listeners.
type Servers struct {
	// ProbeURL and FaultURL are where the partners answer.
	ProbeURL, FaultURL string
	srvs               []*http.Server
	done               chan error
}

// Start serves both partners on 127.0.0.1 ports chosen by the system,
// until Close or ctx ends.
func Start(ctx context.Context, log *slog.Logger) (*Servers, error) {
	s := &Servers{done: make(chan error, 2)}
	for _, h := range []struct {
		h   http.Handler
		url *string
	}{{Probe(log), &s.ProbeURL}, {Fault(log), &s.FaultURL}} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("odemock listen: %w", err)
		}
		srv := &http.Server{Handler: h.h, ReadHeaderTimeout: 10 * time.Second,
			BaseContext: func(net.Listener) context.Context { return ctx }}
		s.srvs = append(s.srvs, srv)
		*h.url = "http://" + ln.Addr().String() + "/"
		go func() { s.done <- srv.Serve(ln) }()
	}
	go func() {
		<-ctx.Done()
		_ = s.Close()
	}()
	return s, nil
}

// Close stops both servers.
func (s *Servers) Close() error {
	var errs []error
	for _, srv := range s.srvs {
		if err := srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
