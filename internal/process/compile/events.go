package compile

import (
	"strconv"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
)

// eventHandlers compiles <eventHandlers> e, in the lexical scope of the
// scope it belongs to.
func (c *compiler) eventHandlers(e *ast.Element) *plan.EventHandlers {
	h := &plan.EventHandlers{}
	for _, ce := range e.Children() {
		if !isBPEL(ce) {
			continue
		}
		switch x := ce.Node().(type) {
		case *ast.Documentation:
		case *ast.OnEvent:
			if ev := c.onEvent(x); ev != nil {
				h.Events = append(h.Events, ev)
			}
		case *ast.OnAlarm:
			h.Alarms = append(h.Alarms, c.evAlarm(x))
		default:
			c.errorf(ce, "unexpected element in <eventHandlers>")
		}
	}
	if len(h.Events) == 0 && len(h.Alarms) == 0 {
		c.errorf(e, "<eventHandlers> needs at least one <onEvent> or <onAlarm>")
		return nil
	}
	if len(h.Events) > 0 {
		h.Listen = &plan.EventListener{Base: plan.Base{Pos: c.pos(e)}, H: h}
		c.register(h.Listen)
	}
	for _, al := range h.Alarms {
		al.Listen = &plan.AlarmListener{Base: plan.Base{Pos: al.Pos}, Al: al}
		c.register(al.Listen)
	}
	return h
}

// onEvent compiles an <onEvent>. Its variable and the variables its
// fromParts name are declared in the handler's own scope (12.7.1).
func (c *compiler) onEvent(n *ast.OnEvent) *plan.OnEvent {
	e := &n.Element
	ev := &plan.OnEvent{Pos: c.pos(e)}
	ev.Pl, ev.Op = c.partnerOp(e, true)
	if ev.Op == nil {
		return nil
	}
	first := len(c.p.Vars)
	local := map[string]*expr.Var{}
	c.scopes = append(c.scopes, local)
	defer func() { c.scopes = c.scopes[:len(c.scopes)-1] }()
	if vn := e.AttrOr("variable", ""); vn != "" {
		v := &expr.Var{Name: vn, Pos: ev.Pos}
		if mt, ok := c.qnameAttr(e, "messageType"); ok {
			if ev.Op.Input == nil || mt != ev.Op.Input.Name {
				c.errorf(e, "messageType %s is not the input message of operation %s", mt, ev.Op.Name)
			}
			v.Msg = ev.Op.Input
		} else if el, ok := c.qnameAttr(e, "element"); ok {
			if in := ev.Op.Input; in == nil || len(in.Parts) != 1 || in.Parts[0].Element != el {
				c.errorf(e, "element %s is not the single element part of operation %s's input message", el, ev.Op.Name)
			}
			v.Elem, ev.ElemVar = el, true
		} else {
			c.errorf(e, "<onEvent> variable %q needs messageType or element", vn)
		}
		c.p.Vars = append(c.p.Vars, v)
		v.Slot = len(c.p.Vars)
		local[vn] = v
		ev.V = v
	}
	if fp := n.FromParts; fp != nil {
		if ev.V != nil {
			c.errorf(&fp.Element, "<onEvent> has both a variable and <fromParts>")
		}
		for _, x := range fp.FromParts {
			c.implicitPartVar(x, ev.Op.Input, local)
		}
		ev.FromParts = c.compileParts(e, "fromParts", ev.Op.Input)
	}
	ev.Corrs = c.correlations(e, ev.Op.Input, nil)
	ev.Mex = e.AttrOr("messageExchange", "")
	c.registerInbound(&ev.Inbound, false)
	if !ev.Op.OneWay() {
		ev.Tag = &expr.Var{Name: "onEvent:" + strconv.Itoa(ev.Pos.Line), Simple: "string"}
		c.p.Vars = append(c.p.Vars, ev.Tag)
		ev.Tag.Slot = len(c.p.Vars)
	}
	c.events = append(c.events, ev)
	ev.Body = c.handlerScope(e, "correlations", "fromParts")
	c.events = c.events[:len(c.events)-1]
	ev.Priv = append(ev.Priv, c.p.Vars[first:]...)
	return ev
}

// implicitPartVar declares the variable a <fromPart> of an onEvent names,
// typed as the part, unless the handler already declared it.
func (c *compiler) implicitPartVar(n *ast.FromPart, md *exchange.MessageDesc, local map[string]*expr.Var) {
	x := &n.Element
	name, part := x.AttrOr("toVariable", ""), x.AttrOr("part", "")
	if name == "" || local[name] != nil || md == nil {
		return
	}
	for _, p := range md.Parts {
		if p.Name != part {
			continue
		}
		v := &expr.Var{Name: name, Pos: c.pos(x), Elem: p.Element, Typ: p.Type}
		c.p.Vars = append(c.p.Vars, v)
		v.Slot = len(c.p.Vars)
		local[name] = v
	}
}

// handlerScope compiles the <scope> an onEvent or onAlarm runs.
func (c *compiler) handlerScope(e *ast.Element, skip ...string) plan.Activity {
	var found *ast.Element
	for _, ce := range e.Children() {
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
		return c.register(&plan.Empty{Base: plan.Base{Pos: c.pos(e)}})
	}
	return c.activity(found)
}

// evAlarm compiles an <onAlarm> of <eventHandlers>: for or until, and/or
// repeatEvery.
func (c *compiler) evAlarm(n *ast.OnAlarm) *plan.EvAlarm {
	e := &n.Element
	al := &plan.EvAlarm{Pos: c.pos(e)}
	if n.For != nil || n.Until != nil {
		al.Deadline = c.deadline(e, n.For, n.Until)
	}
	if n.RepeatEvery != nil {
		al.Repeat = c.exprOf(n.RepeatEvery)
	}
	if al.Deadline == nil && n.RepeatEvery == nil {
		c.errorf(e, "<onAlarm> needs <for>, <until> or <repeatEvery>")
	}
	first := len(c.p.Vars)
	al.Body = c.handlerScope(e, "for", "until", "repeatEvery")
	al.Priv = append(al.Priv, c.p.Vars[first:]...)
	return al
}

// replyEvent is the onEvent, enclosing a reply being compiled, whose
// request that reply answers (same partner link, operation and message
// exchange), or nil.
func (c *compiler) replyEvent(pl *plan.PartnerLink, op *exchange.Operation, mex string) *plan.OnEvent {
	for i := len(c.events) - 1; i >= 0; i-- {
		ev := c.events[i]
		if ev.Pl == pl && ev.Op == op && ev.Mex == mex && ev.Tag != nil {
			return ev
		}
	}
	return nil
}
