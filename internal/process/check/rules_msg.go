package check

import (
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/ast"
)

func checkPortTypeAttr(p *pass) {
	p.each(func(e *ast.Element) {
		q, ok := qattr(e, "portType")
		if !ok {
			return
		}
		if pt := p.rolePortType(e); pt != nil && pt.Name != q {
			got, want := compared(q, pt.Name)
			p.report(e, "portType %s is not %s, the portType of partnerLink %q's role; fix or remove the portType attribute", got, want, attr(e, "partnerLink"))
		}
	}, messaging...)
}

// messages are the messages e receives (in) and sends (out) of its
// operation, from the process's side; nil when not known.
func (p *pass) messages(e *ast.Element) (op *exchange.Operation, in, out *exchange.MessageDesc) {
	op, _ = p.operation(e)
	if op == nil {
		return nil, nil, nil
	}
	switch e.Tag {
	case "invoke":
		return op, op.Output, op.Input
	case "reply":
		if q, ok := qattr(e, "faultName"); ok {
			return op, nil, op.Faults[q.Local] // nil when undeclared: the compiler reports it
		}
		return op, nil, op.Output
	}
	return op, op.Input, nil
}

func hasPart(m *exchange.MessageDesc, name string) bool {
	for _, pd := range m.Parts {
		if pd.Name == name {
			return true
		}
	}
	return false
}

// fits reports whether variable v can hold message m: v is of m's
// message type, or m has one element part and v is of that element.
func fits(v *variable, m *exchange.MessageDesc) bool {
	if !v.msg.IsZero() {
		return v.msg == m.Name
	}
	return len(m.Parts) == 1 && !v.element.IsZero() && m.Parts[0].Element == v.element
}

// checkVariableFits reports the variable named by attribute a of e when
// it cannot hold message m.
func (p *pass) checkVariableFits(e *ast.Element, a string, m *exchange.MessageDesc) {
	name := attr(e, a)
	if name == "" || m == nil {
		return
	}
	v := lookupVar(e, name)
	if v == nil || (v.msg.IsZero() && v.element.IsZero() && v.xsType.IsZero()) {
		return // undeclared (the compiler reports it) or untyped implicit
	}
	if !fits(v, m) {
		p.report(e, "%s %q does not fit message %s of operation %q; declare it with messageType=%q (or the element of the message's single part)", a, name, m.Name.Local, attr(e, "operation"), m.Name.Local)
	}
}

func checkInvokeVariableTypes(p *pass) {
	p.each(func(e *ast.Element) {
		_, in, out := p.messages(e)
		p.checkVariableFits(e, "inputVariable", out)
		p.checkVariableFits(e, "outputVariable", in)
	}, "invoke")
}

func checkReceiveReplyVariableTypes(p *pass) {
	p.each(func(e *ast.Element) {
		_, in, out := p.messages(e)
		if _, reply := e.Node().(*ast.Reply); reply {
			in = out
		}
		if m := in; m != nil && m.Name.IsZero() {
			return
		}
		p.checkVariableFits(e, "variable", in)
	}, "receive", "reply", "onMessage")
}

func checkOnEventType(p *pass) {
	p.each(func(e *ast.Element) {
		_, in, _ := p.messages(e)
		if in == nil {
			return
		}
		if q, ok := qattr(e, "messageType"); ok && q != in.Name {
			got, want := compared(q, in.Name)
			p.report(e, "messageType %s is not %s, the input message of operation %q; use that message type", got, want, attr(e, "operation"))
		}
		if q, ok := qattr(e, "element"); ok && !(len(in.Parts) == 1 && in.Parts[0].Element == q) {
			p.report(e, "element %s is not the element of the single part of %s, the input message of operation %q; use messageType instead", q.Local, in.Name.Local, attr(e, "operation"))
		}
	}, "onEvent")
}

func fromParts(e *ast.Element) []*ast.Element { return grandchildren(e, "fromParts", "fromPart") }
func toParts(e *ast.Element) []*ast.Element   { return grandchildren(e, "toParts", "toPart") }

func checkMessageVariablesPresent(p *pass) {
	p.each(func(e *ast.Element) {
		op, in, out := p.messages(e)
		if op == nil {
			return
		}
		recv, send := "variable", "variable"
		_, invoke := e.Node().(*ast.Invoke)
		_, reply := e.Node().(*ast.Reply)
		if invoke {
			recv, send = "outputVariable", "inputVariable"
		}
		if !reply {
			if in == nil && invoke && (hasAttr(e, "outputVariable") || len(fromParts(e)) > 0) {
				p.report(e, "operation %q is one-way: an invoke of it receives nothing; remove outputVariable and <fromParts>", op.Name)
			}
			if in != nil && len(in.Parts) > 0 && attr(e, recv) == "" && len(fromParts(e)) == 0 {
				p.report(e, "message %s of operation %q has parts, so this <%s> needs %s or <fromParts>; add one", in.Name.Local, op.Name, e.Tag, recv)
			}
			if in != nil && len(in.Parts) == 0 && child(e, "fromParts") != nil {
				p.report(child(e, "fromParts"), "message %s has no parts, so <fromParts> must be omitted; remove it", in.Name.Local)
			}
		}
		if invoke || reply {
			if out != nil && len(out.Parts) > 0 && attr(e, send) == "" && len(toParts(e)) == 0 {
				p.report(e, "message %s of operation %q has parts, so this <%s> needs %s or <toParts>; add one", out.Name.Local, op.Name, e.Tag, send)
			}
			if out != nil && len(out.Parts) == 0 && child(e, "toParts") != nil {
				p.report(child(e, "toParts"), "message %s has no parts, so <toParts> must be omitted; remove it", out.Name.Local)
			}
		}
	}, messaging...)
}

func checkToPartsComplete(p *pass) {
	p.each(func(e *ast.Element) {
		_, _, out := p.messages(e)
		tp := toParts(e)
		if out == nil || len(tp) == 0 {
			return
		}
		named := map[string]bool{}
		for _, t := range tp {
			named[attr(t, "part")] = true
		}
		for _, pd := range out.Parts {
			if !named[pd.Name] {
				p.report(child(e, "toParts"), "<toParts> has no <toPart> for part %q of message %s; add one for every part", pd.Name, out.Name.Local)
			}
		}
	}, "invoke", "reply")
}

// checkBoth reports e when it has attribute a and a wrapper element.
func checkBoth(p *pass, a, wrapper string, tags ...string) {
	p.each(func(e *ast.Element) {
		if hasAttr(e, a) && child(e, wrapper) != nil {
			p.report(e, "<%s> has both %s and <%s>; use one of them", e.Tag, a, wrapper)
		}
	}, tags...)
}

func checkInputVariableToParts(p *pass)    { checkBoth(p, "inputVariable", "toParts", "invoke") }
func checkOutputVariableFromParts(p *pass) { checkBoth(p, "outputVariable", "fromParts", "invoke") }
func checkReceiveFromParts(p *pass)        { checkBoth(p, "variable", "fromParts", "receive") }
func checkReplyToParts(p *pass)            { checkBoth(p, "variable", "toParts", "reply") }
func checkOnMessageFromParts(p *pass)      { checkBoth(p, "variable", "fromParts", "onMessage") }

func checkOnEventFromParts(p *pass) {
	p.each(func(e *ast.Element) {
		if child(e, "fromParts") == nil {
			return
		}
		for _, a := range []string{"variable", "messageType", "element"} {
			if hasAttr(e, a) {
				p.report(e, "<onEvent> has <fromParts> and %s; with fromParts, remove variable, messageType and element", a)
				return
			}
		}
	}, "onEvent")
}

// checkPartNames reports parts named by the part elements of e that its
// message m lacks.
func (p *pass) checkPartNames(parts []*ast.Element, m *exchange.MessageDesc) {
	if m == nil {
		return
	}
	for _, x := range parts {
		if n := attr(x, "part"); !hasPart(m, n) {
			p.report(x, "message %s has no part %q; name one of its parts", m.Name.Local, n)
		}
	}
}

func checkFromPartNames(p *pass) {
	p.each(func(e *ast.Element) {
		_, in, _ := p.messages(e)
		p.checkPartNames(fromParts(e), in)
	}, "receive", "invoke", "onMessage", "onEvent")
}

func checkToPartNames(p *pass) {
	p.each(func(e *ast.Element) {
		_, _, out := p.messages(e)
		p.checkPartNames(toParts(e), out)
	}, "invoke", "reply")
}

func checkCorrelationPattern(p *pass) {
	p.each(func(e *ast.Element) {
		op, _ := p.operation(e)
		if op == nil {
			return
		}
		for _, x := range grandchildren(e, "correlations", "correlation") {
			switch {
			case op.Output == nil && hasAttr(x, "pattern"):
				p.report(x, "operation %q is one-way, so a correlation of its invoke has no pattern; remove pattern", op.Name)
			case op.Output != nil && !hasAttr(x, "pattern"):
				p.report(x, "operation %q is request-response, so a correlation of its invoke needs pattern (request, response or request-response); add it", op.Name)
			}
		}
	}, "invoke")
}

func checkMessageExchangeDeclared(p *pass) {
	p.each(func(e *ast.Element) {
		n := attr(e, "messageExchange")
		if n != "" && lookupDecl(e, "messageExchanges", "messageExchange", n) == nil {
			p.report(e, "messageExchange %q is not declared by an enclosing scope; declare it in <messageExchanges>", n)
			return
		}
		if e.Tag != "reply" {
			return
		}
		// The reply's message exchange must be its IMA's: some receive,
		// onMessage or onEvent of its partner link and operation uses the
		// same declaration (or the same default message exchange).
		mex := messageExchangeOf(e)
		imas, same := 0, false
		p.each(func(ima *ast.Element) {
			if attr(ima, "partnerLink") != attr(e, "partnerLink") || attr(ima, "operation") != attr(e, "operation") {
				return
			}
			imas++
			same = same || messageExchangeOf(ima) == mex
		}, "receive", "onMessage", "onEvent")
		if imas == 0 || same {
			return
		}
		if n == "" {
			p.report(e, "this reply has no messageExchange, but no receive, onMessage or onEvent of partnerLink %q and operation %q inside the same default message exchange (of the process, an onEvent or a parallel forEach) has none; name its IMA's messageExchange", attr(e, "partnerLink"), attr(e, "operation"))
			return
		}
		p.report(e, "no receive, onMessage or onEvent of partnerLink %q and operation %q uses the messageExchange %q this reply resolves to; give its IMA the same messageExchange, declared in a scope enclosing both", attr(e, "partnerLink"), attr(e, "operation"), n)
	}, "receive", "reply", "onMessage")
}

// messageExchangeOf is the declaration the messageExchange of IMA or
// reply e resolves to; for one without messageExchange, the element that
// implicitly declares its default message exchange: the process, the
// scope of an enclosing onEvent or of an enclosing parallel forEach
// (10.4.1). nil when a named one does not resolve.
func messageExchangeOf(e *ast.Element) *ast.Element {
	if n := attr(e, "messageExchange"); n != "" {
		return lookupDecl(e, "messageExchanges", "messageExchange", n)
	}
	if e.Tag == "onEvent" {
		if s := child(e, "scope"); s != nil {
			return s
		}
	}
	root := e
	for a := e.Parent(); a != nil; a = a.Parent() {
		root = a
		if a.Tag != "scope" || !isBPEL(a) || a.Parent() == nil {
			continue
		}
		if up := a.Parent(); up.Tag == "onEvent" || up.Tag == "forEach" && yes(up, "parallel") {
			return a
		}
	}
	return root // the process
}

func checkOnEventMessageExchange(p *pass) {
	p.each(func(e *ast.Element) {
		if n := attr(e, "messageExchange"); n != "" && lookupDecl(e, "messageExchanges", "messageExchange", n) == nil {
			p.report(e, "messageExchange %q is declared neither by the onEvent's scope nor by an enclosing one; declare it in <messageExchanges>", n)
		}
	}, "onEvent")
}

func checkPickCreateInstance(p *pass) {
	p.each(func(e *ast.Element) {
		if yes(e, "createInstance") {
			for _, a := range children(e, "onAlarm") {
				p.report(a, "a <pick> with createInstance=\"yes\" holds only <onMessage>; remove the onAlarm or the attribute")
			}
		}
	}, "pick")
}

func checkOnEventPartnerLink(p *pass) {
	p.each(func(e *ast.Element) {
		if n := attr(e, "partnerLink"); lookupDecl(e, "partnerLinks", "partnerLink", n) == nil {
			p.report(e, "partnerLink %q is declared neither by the onEvent's scope nor by an enclosing one; declare it", n)
		}
	}, "onEvent")
}

func checkCorrelationSetDeclared(p *pass) {
	p.each(func(e *ast.Element) {
		for _, x := range grandchildren(e, "correlations", "correlation") {
			if n := attr(x, "set"); lookupDecl(x, "correlationSets", "correlationSet", n) == nil {
				p.report(x, "correlation set %q is declared neither by the onEvent's scope nor by an enclosing one; declare it", n)
			}
		}
	}, "onEvent")
}

func checkOnEventVariableType(p *pass) {
	p.each(func(e *ast.Element) {
		if hasAttr(e, "variable") && !hasAttr(e, "messageType") && !hasAttr(e, "element") {
			p.report(e, "an <onEvent> with a variable needs messageType or element to declare it; add the input message's type")
		}
		if hasAttr(e, "variable") && hasAttr(e, "messageType") && hasAttr(e, "element") {
			p.report(e, "an <onEvent> variable is declared by either messageType or element, not both; keep one")
		}
	}, "onEvent")
}

// startActivities are the process's receives and picks with
// createInstance="yes".
func (p *pass) startActivities() []*ast.Element {
	var out []*ast.Element
	p.each(func(e *ast.Element) {
		if yes(e, "createInstance") {
			out = append(out, e)
		}
	}, "receive", "pick")
	return out
}

// startOnly reports whether e holds nothing but start activities, scopes,
// flows and sequences.
func startOnly(e *ast.Element) bool {
	if in(e.Tag, "receive", "pick") {
		return yes(e, "createInstance")
	}
	if !in(e.Tag, "scope", "flow", "sequence") {
		return false
	}
	for _, c := range activityChildren(e) {
		if !startOnly(c) {
			return false
		}
	}
	return true
}

func checkBeforeStart(p *pass) {
	for _, s := range p.startActivities() {
		for c, a := s, s.Parent(); a != nil && a != p.root; c, a = a, a.Parent() {
			if !isBPEL(a) || !in(a.Tag, "sequence", "flow", "scope") || (a.Tag == "scope" && !isActivity(c)) {
				p.report(s, "a start activity may only be inside <sequence>, <flow> and <scope>, not <%s>; move it to the start of the process", a.Tag)
				break
			}
			if a.Tag != "sequence" {
				continue
			}
			for _, prev := range activityChildren(a) {
				if prev == c {
					break
				}
				if !startOnly(prev) {
					p.report(s, "<%s> comes before this start activity; only start activities, scopes, flows and sequences may come first", prev.Tag)
					break
				}
			}
		}
	}
}

func checkStartCorrelations(p *pass) {
	starts := p.startActivities()
	if len(starts) < 2 {
		return
	}
	type use struct {
		el       *ast.Element
		initiate map[string]string
	}
	var uses []use
	var bare []*ast.Element // start activities without correlations
	for _, s := range starts {
		els := []*ast.Element{s}
		if s.Tag == "pick" {
			els = children(s, "onMessage")
		}
		for _, e := range els {
			u := use{el: e, initiate: map[string]string{}}
			for _, x := range grandchildren(e, "correlations", "correlation") {
				u.initiate[attr(x, "set")] = attr(x, "initiate")
			}
			if len(u.initiate) > 0 {
				uses = append(uses, u)
			} else {
				bare = append(bare, e)
			}
		}
	}
	if len(uses) > 0 {
		for _, e := range bare {
			p.report(e, "other start activities of this process have correlation sets and this one has none, so they share none; give it their common set with initiate=\"join\"")
		}
	}
	if len(uses) < 2 {
		return
	}
	common := map[string]bool{}
	for n := range uses[0].initiate {
		common[n] = true
	}
	for _, u := range uses[1:] {
		for n := range common {
			if _, ok := u.initiate[n]; !ok {
				delete(common, n)
			}
		}
	}
	if len(common) == 0 {
		p.report(uses[1].el, "the start activities of this process share no correlation set; give them a common one with initiate=\"join\"")
		return
	}
	for _, u := range uses {
		for n := range common {
			if u.initiate[n] != "join" {
				p.report(u.el, "correlation set %q is common to the process's start activities, so its initiate must be \"join\" here", n)
			}
		}
	}
}
