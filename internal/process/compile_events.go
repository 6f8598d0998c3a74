package process

import (
	"strconv"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// eventHandlers compiles <eventHandlers> e, in the lexical scope of the
// scope it belongs to.
func (c *compiler) eventHandlers(e *etree.Element) *eventHandlers {
	h := &eventHandlers{}
	for _, ce := range e.ChildElements() {
		if !isBPEL(ce) {
			continue
		}
		switch ce.Tag {
		case "documentation":
		case "onEvent":
			if ev := c.onEvent(ce); ev != nil {
				h.events = append(h.events, ev)
			}
		case "onAlarm":
			h.alarms = append(h.alarms, c.evAlarm(ce))
		default:
			c.errorf(ce, "unexpected element in <eventHandlers>")
		}
	}
	if len(h.events) == 0 && len(h.alarms) == 0 {
		c.errorf(e, "<eventHandlers> needs at least one <onEvent> or <onAlarm>")
		return nil
	}
	if len(h.events) > 0 {
		h.listen = &eventListener{base: base{pos: c.pos(e)}, h: h}
		c.register(h.listen)
	}
	for _, al := range h.alarms {
		al.listen = &alarmListener{base: base{pos: al.pos}, al: al}
		c.register(al.listen)
	}
	return h
}

// onEvent compiles an <onEvent>. Its variable and the variables its
// fromParts name are declared in the handler's own scope (12.7.1).
func (c *compiler) onEvent(e *etree.Element) *onEvent {
	ev := &onEvent{pos: c.pos(e)}
	ev.pl, ev.op = c.partnerOp(e, true)
	if ev.op == nil {
		return nil
	}
	first := len(c.p.vars)
	local := map[string]*variable{}
	c.scopes = append(c.scopes, local)
	defer func() { c.scopes = c.scopes[:len(c.scopes)-1] }()
	if vn := e.SelectAttrValue("variable", ""); vn != "" {
		v := &variable{name: vn, pos: ev.pos}
		if mt, ok := c.qnameAttr(e, "messageType"); ok {
			if ev.op.Input == nil || mt != ev.op.Input.Name {
				c.errorf(e, "messageType %s is not the input message of operation %s", mt, ev.op.Name)
			}
			v.msg = ev.op.Input
		} else if el, ok := c.qnameAttr(e, "element"); ok {
			if in := ev.op.Input; in == nil || len(in.Parts) != 1 || in.Parts[0].Element != el {
				c.errorf(e, "element %s is not the single element part of operation %s's input message", el, ev.op.Name)
			}
			v.elem, ev.elemVar = el, true
		} else {
			c.errorf(e, "<onEvent> variable %q needs messageType or element", vn)
		}
		c.p.vars = append(c.p.vars, v)
		v.slot = len(c.p.vars)
		local[vn] = v
		ev.v = v
	}
	if fp := bpelChild(e, "fromParts"); fp != nil {
		if ev.v != nil {
			c.errorf(fp, "<onEvent> has both a variable and <fromParts>")
		}
		for _, x := range fp.ChildElements() {
			if !isBPEL(x) || x.Tag != "fromPart" {
				continue
			}
			c.implicitPartVar(x, ev.op.Input, local)
		}
		ev.fromParts = c.compileParts(e, "fromParts", ev.op.Input)
	}
	ev.corrs = c.correlations(e, ev.op.Input, nil)
	ev.mex = e.SelectAttrValue("messageExchange", "")
	c.registerInbound(&ev.inbound, false)
	if !ev.op.OneWay() {
		ev.tag = &variable{name: "onEvent:" + strconv.Itoa(ev.pos.Line), simple: "string"}
		c.p.vars = append(c.p.vars, ev.tag)
		ev.tag.slot = len(c.p.vars)
	}
	c.events = append(c.events, ev)
	ev.body = c.handlerScope(e, "correlations", "fromParts")
	c.events = c.events[:len(c.events)-1]
	ev.priv = append(ev.priv, c.p.vars[first:]...)
	return ev
}

// implicitPartVar declares the variable a <fromPart> of an onEvent names,
// typed as the part, unless the handler already declared it.
func (c *compiler) implicitPartVar(x *etree.Element, md *exchange.MessageDesc, local map[string]*variable) {
	name, part := x.SelectAttrValue("toVariable", ""), x.SelectAttrValue("part", "")
	if name == "" || local[name] != nil || md == nil {
		return
	}
	for _, p := range md.Parts {
		if p.Name != part {
			continue
		}
		v := &variable{name: name, pos: c.pos(x), elem: p.Element, typ: p.Type}
		c.p.vars = append(c.p.vars, v)
		v.slot = len(c.p.vars)
		local[name] = v
	}
}

// handlerScope compiles the <scope> an onEvent or onAlarm runs.
func (c *compiler) handlerScope(e *etree.Element, skip ...string) activity {
	var found *etree.Element
	for _, ce := range e.ChildElements() {
		if !isBPEL(ce) || ce.Tag == "documentation" {
			continue
		}
		skipped := false
		for _, s := range skip {
			skipped = skipped || ce.Tag == s
		}
		if skipped {
			continue
		}
		if ce.Tag != "scope" || found != nil {
			c.errorf(ce, "<%s> holds exactly one <scope>", e.Tag)
			continue
		}
		found = ce
	}
	if found == nil {
		c.errorf(e, "<%s> holds no <scope>", e.Tag)
		return c.register(&empty{base: base{pos: c.pos(e)}})
	}
	return c.activity(found)
}

// evAlarm compiles an <onAlarm> of <eventHandlers>: for or until, and/or
// repeatEvery.
func (c *compiler) evAlarm(e *etree.Element) *evAlarm {
	al := &evAlarm{pos: c.pos(e)}
	if bpelChild(e, "for") != nil || bpelChild(e, "until") != nil {
		al.deadline = c.deadline(e)
	}
	if r := bpelChild(e, "repeatEvery"); r != nil {
		al.repeat = c.expression(r, r.Text(), true)
	}
	if al.deadline == nil && bpelChild(e, "repeatEvery") == nil {
		c.errorf(e, "<onAlarm> needs <for>, <until> or <repeatEvery>")
	}
	first := len(c.p.vars)
	al.body = c.handlerScope(e, "for", "until", "repeatEvery")
	al.priv = append(al.priv, c.p.vars[first:]...)
	return al
}

// replyEvent is the onEvent, enclosing a reply being compiled, whose
// request that reply answers (same partner link, operation and message
// exchange), or nil.
func (c *compiler) replyEvent(pl *partnerLink, op *exchange.Operation, mex string) *onEvent {
	for i := len(c.events) - 1; i >= 0; i-- {
		ev := c.events[i]
		if ev.pl == pl && ev.op == op && ev.mex == mex && ev.tag != nil {
			return ev
		}
	}
	return nil
}
