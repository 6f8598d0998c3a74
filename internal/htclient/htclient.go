package htclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/humantask"
	"github.com/orchd/orchd/internal/publicurl"
	"github.com/orchd/orchd/internal/xmlparse"
)

// Namespaces: the WS-HT client API's elements, its types', SOAP 1.1's
// and 1.2's envelopes, and WS-Security's.
const (
	API    = "http://docs.oasis-open.org/ns/bpel4people/ws-humantask/api/200803"
	Types  = "http://docs.oasis-open.org/ns/bpel4people/ws-humantask/types/200803"
	soap11 = "http://schemas.xmlsoap.org/soap/envelope/"
	soap12 = "http://www.w3.org/2003/05/soap-envelope"
	wsse   = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
)

// Path is where WSO2 BPS serves the API.
const Path = "/services/HumanTaskClientAPIAdmin"

// maxBody bounds a request.
const maxBody = 1 << 20

// Handler serves the API over one task engine: POST a SOAP envelope, or
// GET ?wsdl for its description.
type Handler struct {
	Tasks  *humantask.Engine
	Logger *slog.Logger
	// Public computes the base URL the WSDL's soap:address names (the
	// request's own when nil), as for the processes' ?wsdl.
	Public *publicurl.Resolver

	opsOnce sync.Once
	ops     map[string]opFunc // operations(), built once
}

// request is a decoded call: the envelope's namespace, the operation
// element and the credentials it carries.
type request struct {
	env      string
	op       *etree.Element
	user, pw string
	hasToken bool
}

// decode reads a SOAP 1.1 or 1.2 envelope: its body's first element and
// the UsernameToken of its wsse:Security header, if any.
func decode(b []byte) (*request, error) {
	doc := xmlparse.NewDocument()
	if err := doc.ReadFromBytes(b); err != nil {
		return nil, fmt.Errorf("not XML: %w", err)
	}
	root := doc.Root()
	if root == nil || root.Tag != "Envelope" || (root.NamespaceURI() != soap11 && root.NamespaceURI() != soap12) {
		return nil, errors.New("not a SOAP envelope")
	}
	r := &request{env: root.NamespaceURI()}
	for _, c := range root.ChildElements() {
		switch {
		case c.Tag == "Header" && c.NamespaceURI() == r.env:
			for _, h := range c.ChildElements() {
				if h.Tag != "Security" || h.NamespaceURI() != wsse {
					continue
				}
				for _, t := range h.ChildElements() {
					if t.Tag == "UsernameToken" && t.NamespaceURI() == wsse {
						r.hasToken = true
						for _, x := range t.ChildElements() {
							switch x.Tag {
							case "Username":
								r.user = strings.TrimSpace(x.Text())
							case "Password":
								if typ := x.SelectAttrValue("Type", ""); typ != "" && !strings.HasSuffix(typ, "#PasswordText") {
									return nil, errors.New("only plain-text UsernameToken passwords are taken (over TLS)")
								}
								r.pw = x.Text()
							}
						}
					}
				}
			}
		case c.Tag == "Body" && c.NamespaceURI() == r.env:
			if els := c.ChildElements(); len(els) > 0 {
				r.op = els[0]
			}
		}
	}
	if r.op == nil {
		return nil, errors.New("the body is empty")
	}
	return r, nil
}

func (h *Handler) log() *slog.Logger {
	if h.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Logger
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodGet, http.MethodHead:
		h.serveWSDL(w, r)
		return
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "POST a SOAP envelope, or GET "+Path+"?wsdl", http.StatusMethodNotAllowed)
		return
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	env := soap11
	if err != nil {
		writeFault(w, env, "Client", "request too large or unreadable", nil, http.StatusRequestEntityTooLarge)
		return
	}
	req, err := decode(b)
	if err != nil {
		writeFault(w, env, "Client", err.Error(), nil, http.StatusBadRequest)
		return
	}
	env = req.env
	user, pw, basic := r.BasicAuth()
	if !basic {
		user, pw = req.user, req.pw
	}
	if !basic && !req.hasToken {
		w.Header().Set("WWW-Authenticate", `Basic realm="orchd tasks"`)
		writeFault(w, env, "Client", "authentication required: HTTP Basic or a WS-Security UsernameToken of the people directory", nil, http.StatusUnauthorized)
		return
	}
	who, err := h.Tasks.Authenticate(user, pw)
	if errors.Is(err, humantask.ErrAuthBusy) {
		writeFault(w, env, "Server", err.Error(), nil, http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		h.log().Info("task client refused", slog.String("user", user), slog.String("remote", r.RemoteAddr))
		writeFault(w, env, "Client", "authentication failed", nil, http.StatusUnauthorized)
		return
	}
	resp, err := h.call(r.Context(), who, req.op)
	if err != nil {
		detail, code := h.faultDetail(r.Context(), who, req.op, err)
		if detail == nil { // none of the WSDL's faults: orchd's own failure
			h.log().Error("task client operation failed", slog.String("operation", req.op.Tag), slog.String("user", user), slog.Any("err", err))
			writeFault(w, env, "Server", err.Error(), nil, code)
			return
		}
		writeFault(w, env, "Client", err.Error(), detail, code)
		return
	}
	writeEnvelope(w, env, resp, http.StatusOK)
}

// call runs operation op as who and returns its response element.
func (h *Handler) call(ctx context.Context, who humantask.Identity, op *etree.Element) (*etree.Element, error) {
	h.opsOnce.Do(func() { h.ops = operations() })
	f, ok := h.ops[op.Tag]
	if !ok {
		return nil, fmt.Errorf("%w: operation %s is not one of HumanTaskClientAPIAdmin's", humantask.ErrArgument, op.Tag)
	}
	resp := etree.NewElement("api:" + op.Tag + "Response")
	resp.CreateAttr("xmlns:api", API)
	resp.CreateAttr("xmlns:htt", Types)
	if err := f(ctx, h.Tasks, who, op, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// faultDetail is the WSDL's fault element for a task engine error
// (illegalState with the task's status, illegalAccess, illegalOperation,
// illegalArgument), nil for an error that is none of them.
func (h *Handler) faultDetail(ctx context.Context, who humantask.Identity, op *etree.Element, err error) (*etree.Element, int) {
	name := "illegalArgument"
	switch {
	case errors.Is(err, humantask.ErrForbidden), errors.Is(err, humantask.ErrNotFound):
		name = "illegalAccess"
	case errors.Is(err, humantask.ErrState):
		name = "illegalState"
	case errors.Is(err, humantask.ErrOperation):
		name = "illegalOperation"
	case errors.Is(err, humantask.ErrArgument):
	default:
		return nil, http.StatusInternalServerError
	}
	d := etree.NewElement("api:" + name)
	d.CreateAttr("xmlns:api", API)
	if name != "illegalState" {
		d.SetText(err.Error())
		return d, http.StatusInternalServerError
	}
	status := ""
	if t, gerr := h.Tasks.Get(ctx, who, arg(op, "identifier")); gerr == nil {
		status = string(t.State)
	}
	d.CreateElement("api:status").SetText(status)
	d.CreateElement("api:message").SetText(err.Error())
	return d, http.StatusInternalServerError
}

func writeFault(w http.ResponseWriter, env, code, reason string, detail *etree.Element, status int) {
	f := etree.NewElement("soapenv:Fault")
	if env == soap12 {
		c := f.CreateElement("soapenv:Code").CreateElement("soapenv:Value")
		c.SetText(map[string]string{"Client": "soapenv:Sender", "Server": "soapenv:Receiver"}[code])
		f.CreateElement("soapenv:Reason").CreateElement("soapenv:Text").SetText(reason)
		if detail != nil {
			f.CreateElement("soapenv:Detail").AddChild(detail)
		}
	} else {
		f.CreateElement("faultcode").SetText("soapenv:" + code)
		f.CreateElement("faultstring").SetText(reason)
		if detail != nil {
			f.CreateElement("detail").AddChild(detail)
		}
	}
	writeEnvelope(w, env, f, status)
}

func writeEnvelope(w http.ResponseWriter, env string, body *etree.Element, status int) {
	doc := xmlparse.NewDocument()
	e := doc.CreateElement("soapenv:Envelope")
	e.CreateAttr("xmlns:soapenv", env)
	e.CreateElement("soapenv:Body").AddChild(body)
	var buf bytes.Buffer
	_, _ = doc.WriteTo(&buf)
	ct := "text/xml; charset=utf-8"
	if env == soap12 {
		ct = "application/soap+xml; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
