package humantask

import (
	"context"
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/xmlparse"
)

// A process creates a task WSO2 BPS's way: it invokes the service
// htconfig.xml publishes the task at (hic:publish), one-way, on a
// partner link that has a myRole too; the invoke carries where the
// outcome goes (a wsa:ReplyTo, or ODE's odesession:callback header with
// the instance's session), and the process waits at a receive of the
// task's responseOperation on that myRole. When the task completes, the
// engine sends the output there as that operation's message, with the
// session header that routes it to the waiting instance (callback.go).

// nsODESession is Apache ODE's session namespace (the header blocks of
// its implicit correlation, which orchd's processes speak).
const nsODESession = "http://www.apache.org/ode/type/session"

// Partners wraps fallback, the binding of partner endpoints that no
// process provides, so that a call to a service a deployed task
// publishes (htconfig.xml) creates that task; other calls go to
// fallback. The task is looked up at each call, so a bundle deployed
// after the calling process still serves it.
func (e *Engine) Partners(fallback func(ep *exchange.Endpoint) exchange.Partner) func(ep *exchange.Endpoint) exchange.Partner {
	return func(ep *exchange.Endpoint) exchange.Partner {
		var fb exchange.Partner
		if fallback != nil {
			fb = fallback(ep)
		}
		return &taskPartner{e: e, ep: ep, fallback: fb}
	}
}

// taskPartner is a partner endpoint that may be a task's service.
type taskPartner struct {
	e        *Engine
	ep       *exchange.Endpoint
	fallback exchange.Partner
}

// Address implements exchange.Addressed when the fallback does.
func (p *taskPartner) Address() string {
	if a, ok := p.fallback.(exchange.Addressed); ok {
		return a.Address()
	}
	return p.ep.Address
}

// InProcess implements exchange.InProcess: true while a deployed task
// publishes the endpoint, or an undeployed one did (the call, retried
// from a persistent instance's outbox, creates the task once its package
// is deployed again), or the fallback is in process. A call to a
// task's service stays in this server, so it carries the calling
// instance's callback address and session as a call to a process of the
// engine does: Apache ODE's implicit correlation, which WSO2 BPS's
// bundles rely on (their deploy.xml says nothing of WS-Addressing).
func (p *taskPartner) InProcess() bool {
	svc := xml.Name{Space: p.ep.Service.Space, Local: p.ep.Service.Local}
	if def, _ := p.e.published(svc, p.ep.Port); def != nil || p.e.unpublished(svc) != "" {
		return true
	}
	ip, ok := p.fallback.(exchange.InProcess)
	return ok && ip.InProcess()
}

// Invoke creates the task the endpoint publishes, or calls the fallback.
func (p *taskPartner) Invoke(ctx context.Context, c *exchange.Call) (*exchange.Message, error) {
	def, defs := p.e.published(xml.Name{Space: p.ep.Service.Space, Local: p.ep.Service.Local}, p.ep.Port)
	if def == nil {
		if b := p.e.unpublished(xml.Name{Space: p.ep.Service.Space, Local: p.ep.Service.Local}); b != "" {
			return nil, fmt.Errorf("partner %s port %s: %w: %s, which published it, is undeployed (deploy it again)", p.ep.Service, p.ep.Port, ErrNoDefinition, b)
		}
		if p.fallback == nil {
			return nil, fmt.Errorf("partner %s port %s: %w and no binding", p.ep.Service, p.ep.Port, ErrNoDefinition)
		}
		return p.fallback.Invoke(ctx, c)
	}
	if c.Operation.Name != def.Interface.Operation {
		return nil, fmt.Errorf("%s %s is created by operation %s, not %s", kindName(def.Notification), def.Name.Local, def.Interface.Operation, c.Operation.Name)
	}
	if !c.Operation.OneWay() {
		return nil, fmt.Errorf("%s %s: operation %s is request-response: orchd's tasks answer through a callback (give the task's htd:interface a responsePortType and responseOperation, and the operation no output)",
			kindName(def.Notification), def.Name.Local, c.Operation.Name)
	}
	input, err := payload(c.Input)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", kindName(def.Notification), def.Name.Local, err)
	}
	r := CreateRequest{Def: def, Bundle: defs.Bundle, Version: defs.Version, Input: input}
	if !def.Notification {
		cb, err := callbackOf(def, c)
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", def.Name.Local, err)
		}
		r.Callback = cb
	}
	if _, err := p.e.Create(ctx, r); err != nil {
		return nil, err
	}
	return nil, nil
}

// payload is the XML of a task message's one part.
func payload(m *exchange.Message) (string, error) {
	if m == nil || len(m.Parts) == 0 {
		return "", nil
	}
	if len(m.Parts) > 1 {
		return "", fmt.Errorf("a task's input message has one part, not %d", len(m.Parts))
	}
	for _, el := range m.Parts {
		return elementXML(el)
	}
	return "", nil
}

// elementXML serializes el (with the namespaces in scope it uses).
func elementXML(el *etree.Element) (string, error) {
	if el == nil {
		return "", nil
	}
	cp := el.Copy()
	for k, v := range namespacesInScope(el) {
		if cp.SelectAttr(nsAttr(k)) == nil {
			if k == "" {
				cp.CreateAttr("xmlns", v)
			} else {
				cp.CreateAttr("xmlns:"+k, v)
			}
		}
	}
	d := xmlparse.NewDocument()
	d.SetRoot(cp)
	return d.WriteToString()
}

func nsAttr(prefix string) string {
	if prefix == "" {
		return "xmlns"
	}
	return "xmlns:" + prefix
}

// namespacesInScope are the declarations on el's ancestors (el's own are
// copied with it).
func namespacesInScope(el *etree.Element) map[string]string {
	m := map[string]string{}
	for p := el.Parent(); p != nil; p = p.Parent() {
		for _, a := range p.Attr {
			switch {
			case a.Space == "xmlns":
				if _, ok := m[a.Key]; !ok {
					m[a.Key] = a.Value
				}
			case a.Space == "" && a.Key == "xmlns":
				if _, ok := m[""]; !ok {
					m[""] = a.Value
				}
			}
		}
	}
	return m
}

// callbackOf is where the outcome of a task created by call c goes: the
// call's wsa:ReplyTo (address and reference parameters), or the address
// and session of ODE's odesession:callback header.
func callbackOf(def *TaskDef, c *exchange.Call) (*Callback, error) {
	if def.Interface.ResponseOperation == "" {
		return nil, fmt.Errorf("htd:interface names no responseOperation: the outcome has nowhere to go")
	}
	cb := &Callback{PortType: def.Interface.ResponsePortType, Operation: def.Interface.ResponseOperation,
		Service: def.Callback.Service, Port: def.Callback.Port}
	var params []*etree.Element
	if c.ReplyTo != nil && c.ReplyTo.Address != "" {
		cb.Address, params = c.ReplyTo.Address, c.ReplyTo.ReferenceParams
	} else {
		for _, h := range c.Headers {
			if h.Tag != "callback" || h.NamespaceURI() != nsODESession {
				continue
			}
			for _, x := range h.ChildElements() {
				switch x.Tag {
				case "Address":
					cb.Address = strings.TrimSpace(x.Text())
				case "session":
					s := etree.NewElement("odesession:session")
					s.CreateAttr("xmlns:odesession", nsODESession)
					s.SetText(strings.TrimSpace(x.Text()))
					params = append(params, s)
				}
			}
			break
		}
	}
	if cb.Address == "" {
		return nil, fmt.Errorf("the call carries no callback address (a wsa:ReplyTo or ODE's session header): give the process's partner link of the task both roles")
	}
	for _, p := range params {
		s, err := elementXML(p)
		if err != nil {
			return nil, err
		}
		cb.Headers = append(cb.Headers, s)
	}
	return cb, nil
}

// sessionIn is the ODE session identifier among a callback's header
// blocks, "" when none.
func sessionIn(headers []string) string {
	for _, h := range headers {
		el, err := ParseXML(h)
		if err == nil && el != nil && el.Tag == "session" {
			return strings.TrimSpace(el.Text())
		}
	}
	return ""
}
