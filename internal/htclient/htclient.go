package htclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/humantask"
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

// Handler serves the API over one task engine.
type Handler struct {
	Tasks  *humantask.Engine
	Logger *slog.Logger
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
	doc := etree.NewDocument()
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
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "POST a SOAP envelope", http.StatusMethodNotAllowed)
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
		detail, code := faultDetail(err)
		writeFault(w, env, "Client", err.Error(), detail, code)
		return
	}
	writeEnvelope(w, env, resp, http.StatusOK)
}

// faultDetail is the API fault element for a task engine error.
func faultDetail(err error) (*etree.Element, int) {
	name := "illegalArgumentFault"
	switch {
	case errors.Is(err, humantask.ErrForbidden), errors.Is(err, humantask.ErrNotFound):
		name = "illegalAccessFault"
	case errors.Is(err, humantask.ErrState):
		name = "illegalStateFault"
	case errors.Is(err, humantask.ErrOperation):
		name = "illegalOperationFault"
	case errors.Is(err, humantask.ErrArgument), errors.Is(err, errArgument):
	default:
		return nil, http.StatusInternalServerError
	}
	d := etree.NewElement("api:" + name)
	d.CreateAttr("xmlns:api", API)
	d.SetText(err.Error())
	return d, http.StatusInternalServerError
}

var errArgument = humantask.ErrArgument

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
	doc := etree.NewDocument()
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

// arg is the text of op's child named name (any namespace).
func arg(op *etree.Element, name string) string {
	for _, c := range op.ChildElements() {
		if c.Tag == name {
			return strings.TrimSpace(c.Text())
		}
	}
	return ""
}

func argEl(op *etree.Element, name string) *etree.Element {
	for _, c := range op.ChildElements() {
		if c.Tag == name {
			return c
		}
	}
	return nil
}

// call runs operation op as who and returns its response element.
func (h *Handler) call(ctx context.Context, who humantask.Identity, op *etree.Element) (*etree.Element, error) {
	t := h.Tasks
	id := arg(op, "identifier")
	resp := etree.NewElement("api:" + op.Tag + "Response")
	resp.CreateAttr("xmlns:api", API)
	resp.CreateAttr("xmlns:htt", Types)
	var err error
	switch op.Tag {
	case "getMyTaskAbstracts", "getMyTasks":
		f := humantask.Filter{Limit: 1000}
		for _, c := range op.ChildElements() {
			switch c.Tag {
			case "status":
				if st, ok := humantask.ParseState(strings.TrimSpace(c.Text())); ok {
					f.States = append(f.States, st)
				}
			case "maxTasks":
				if n, err := strconv.Atoi(strings.TrimSpace(c.Text())); err == nil && n > 0 {
					f.Limit = n
				}
			}
		}
		var ts []humantask.Task
		if ts, err = t.List(ctx, who, f); err == nil {
			for _, tk := range ts { // getMyTasks too: WSO2 answers both with abstracts
				resp.AddChild(abstract("api:taskAbstract", tk))
			}
		}
	case "getTaskInfo":
		var tk humantask.Task
		if tk, err = t.Get(ctx, who, id); err == nil {
			resp.AddChild(abstract("api:task", tk))
		}
	case "getInput", "getOutput":
		var tk humantask.Task
		if tk, err = t.Get(ctx, who, id); err == nil {
			data := resp.CreateElement("api:taskData")
			src := tk.Input
			if op.Tag == "getOutput" {
				src = tk.Output
			}
			if src != "" {
				d := etree.NewDocument()
				if d.ReadFromString(src) == nil && d.Root() != nil {
					data.AddChild(d.Root())
				}
			}
		}
	case humantask.OpClaim, humantask.OpStart, humantask.OpStop, humantask.OpRelease, humantask.OpSuspend, humantask.OpResume, humantask.OpSkip:
		_, err = t.Do(ctx, who, id, humantask.Action{Op: op.Tag})
	case humantask.OpComplete:
		out := ""
		if d := argEl(op, "taskData"); d != nil {
			if els := d.ChildElements(); len(els) > 0 {
				doc := etree.NewDocument()
				doc.SetRoot(els[0].Copy())
				out, _ = doc.WriteToString()
			}
		}
		_, err = t.Do(ctx, who, id, humantask.Action{Op: op.Tag, Output: out})
	case humantask.OpFail:
		name := arg(op, "faultName")
		if f := argEl(op, "fault"); f != nil && name == "" {
			name = arg(f, "faultName")
		}
		_, err = t.Do(ctx, who, id, humantask.Action{Op: op.Tag, Fault: humantask.Fault{Name: name}})
	case humantask.OpSetPriority:
		var p int
		if p, err = strconv.Atoi(arg(op, "priority")); err != nil {
			return nil, fmt.Errorf("%w: priority %q is not an integer", errArgument, arg(op, "priority"))
		}
		_, err = t.Do(ctx, who, id, humantask.Action{Op: op.Tag, Priority: &p})
	case humantask.OpAddComment:
		_, err = t.Do(ctx, who, id, humantask.Action{Op: op.Tag, Comment: arg(op, "text")})
	case "getComments":
		var tk humantask.Task
		if tk, err = t.Get(ctx, who, id); err == nil {
			for _, c := range tk.Comments {
				ce := resp.CreateElement("api:comment")
				ce.CreateElement("htt:addedAt").SetText(c.At.UTC().Format(time.RFC3339))
				ce.CreateElement("htt:addedBy").SetText(c.By)
				ce.CreateElement("htt:text").SetText(c.Text)
			}
		}
	case humantask.OpDelegate, humantask.OpForward:
		a := humantask.Action{Op: op.Tag, To: entities(argEl(op, "organizationalEntity"))}
		if op.Tag == humantask.OpDelegate {
			if len(a.To.Users) != 1 {
				return nil, fmt.Errorf("%w: delegate names one user", errArgument)
			}
			a.User = a.To.Users[0]
		}
		_, err = t.Do(ctx, who, id, a)
	default:
		return nil, fmt.Errorf("%w: operation %s is not one of HumanTaskClientAPIAdmin's", errArgument, op.Tag)
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

func entities(e *etree.Element) humantask.Entities {
	var out humantask.Entities
	if e == nil {
		return out
	}
	for _, x := range e.FindElements(".//*") {
		switch x.Tag {
		case "user":
			out.Users = append(out.Users, strings.TrimSpace(x.Text()))
		case "group":
			out.Groups = append(out.Groups, strings.TrimSpace(x.Text()))
		}
	}
	return out
}

// abstract is a task as WS-HT's tTaskAbstract (htt elements).
func abstract(tag string, t humantask.Task) *etree.Element {
	e := etree.NewElement(tag)
	add := func(n, v string) {
		if v != "" {
			e.CreateElement("htt:" + n).SetText(v)
		}
	}
	add("id", t.ID)
	add("taskType", map[bool]string{true: "NOTIFICATION", false: "TASK"}[t.Notification])
	e.CreateElement("htt:name").SetText(t.Name.Local)
	add("status", string(t.State))
	add("priority", strconv.Itoa(t.Priority))
	add("createdOn", t.Created.UTC().Format(time.RFC3339))
	add("actualOwner", t.ActualOwner)
	add("presentationName", t.Name.Local)
	add("presentationSubject", t.Subject)
	add("isSkipable", strconv.FormatBool(t.Skipable))
	return e
}
