package process

import (
	"fmt"
	"strings"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/bpel"
	"github.com/orchd/orchd/internal/process/deploy"
	"github.com/orchd/orchd/internal/process/wsdl"
	"github.com/orchd/orchd/internal/xpath2"
	"github.com/orchd/orchd/internal/xslt"
)

// compiler turns one BPEL document into a Process.
type compiler struct {
	doc  *bpel.Document
	dp   *deploy.Process
	w    *wsdl.Set
	errs *bpel.Errors
	p    *Plan
	// scopes of variable declarations, innermost last.
	scopes []map[string]*variable
	// receives counts receive activities seen, to reject what needs
	// correlation.
	receives int
	// links are the links declared by the enclosing flows, innermost
	// last; collect gathers link sources for dead-path elimination.
	links   []map[string]*link
	collect [][]*link
	// exts are the process's <extensions>: namespace -> mustUnderstand.
	exts map[string]bool
	// ext are the registered extension implementations (extension.go).
	ext Extensions
	// extResolved are the variables the extension being compiled
	// resolved (the ones an assign operation may write).
	extResolved []*variable
	// events are the onEvents enclosing what is being compiled.
	events []*onEvent
	// xp2lib is the XPath 2.0 function library (xpath2_ode.go).
	xp2lib *xpath2.FunctionLibrary
	// xsl are the stylesheets doXslTransform calls name (xslt.go).
	xsl map[string]*xslt.Stylesheet
	// encl are the scopes whose bodies enclose what is being compiled
	// (nil: a handler); hctx the scopes whose fault, compensation or
	// termination handler encloses it (nil: a body). See compensate.go.
	encl, hctx []*scope
}

func (c *compiler) pos(e *etree.Element) bpel.Pos { return c.doc.Pos(e) }

func (c *compiler) errorf(e *etree.Element, format string, args ...any) {
	c.errs.Add(c.pos(e), e.Tag, format, args...)
}

// warnf notes a problem that does not refuse the process.
func (c *compiler) warnf(e *etree.Element, format string, args ...any) {
	c.p.Warnings = append(c.p.Warnings, fmt.Sprintf("%s: <%s>: %s", c.pos(e), e.Tag, fmt.Sprintf(format, args...)))
}

func (c *compiler) unsupported(e *etree.Element, what string) {
	c.errs.Unsupported(c.pos(e), e.Tag, what)
}

func isBPEL(e *etree.Element) bool {
	ns := e.NamespaceURI()
	return ns == bpel.NSBPEL || ns == bpel.NSBPEL2004
}

// compileProcess compiles the <process> document. dp binds its partner
// links; endpoints are built from the bundle's WSDL set.
func compileProcess(doc *bpel.Document, w *wsdl.Set, dp *deploy.Process, errs *bpel.Errors, opts LoadOptions) *Plan {
	root := doc.Root
	c := &compiler{doc: doc, w: w, errs: errs, dp: dp, ext: opts.Extensions}
	p := &Plan{Name: dp.Name, File: doc.File, InMemory: dp.InMemory, plinks: map[string]*partnerLink{},
		starts: map[string]activity{}, routes: map[string][]*routeShape{}, cleanup: dp.Cleanup, idempotent: dp.Idempotent, events: dp.Events, maxSteps: dp.MaxSteps}
	c.p = p
	c.scopes = []map[string]*variable{{}}
	for _, a := range root.Attr {
		switch {
		case a.Space == "" && (a.Key == "queryLanguage" || a.Key == "expressionLanguage"):
			c.checkProcessLanguage(root, a.Key, a.Value)
		}
	}
	var act *etree.Element
	for _, e := range root.ChildElements() {
		if !isBPEL(e) {
			continue // extension elements in other namespaces are ignored
		}
		switch e.Tag {
		case "import", "documentation":
		case "partnerLinks":
			for _, pl := range e.SelectElements("partnerLink") {
				c.partnerLink(pl, dp)
			}
		case "variables":
			for _, ve := range e.SelectElements("variable") {
				c.declare(ve)
			}
		case "faultHandlers":
			// compiled after the main activity, below
		case "correlationSets":
			c.correlationSets(e)
		case "messageExchanges":
		case "extensions":
			c.extensions(e)
		case "eventHandlers":
			// compiled after the main activity, below
		default:
			if act != nil {
				c.errorf(e, "a process has exactly one activity; found a second one")
				continue
			}
			act = e
		}
	}
	if act == nil {
		c.errorf(root, "process has no activity")
		return p
	}
	ps := &scope{base: base{pos: c.pos(root)}, isProcess: true}
	c.enterBody(ps)
	body := c.activity(act)
	c.leave()
	if fh := bpelChild(root, "faultHandlers"); fh != nil {
		c.enterHandler(ps)
		p.handlers = c.faultHandlers(fh)
		c.leave()
	}
	ps.body, ps.handlers = body, p.handlers
	if eh := bpelChild(root, "eventHandlers"); eh != nil {
		c.enterBody(ps)
		ps.events = c.eventHandlers(eh)
		c.leave()
	}
	c.finishScope(ps, nil)
	p.root = c.register(ps)
	c.adopt(0, p.root)
	if len(p.starts) == 0 {
		c.errorf(act, "process has no start activity (a receive or pick with createInstance=\"yes\")")
	}
	for _, pl := range p.plinks {
		if pl.provided != nil {
			p.Endpoints = appendUnique(p.Endpoints, pl.provided)
		}
	}
	p.slots = newSlots(p.vars)
	return p
}

func appendUnique(list []*exchange.Endpoint, ep *exchange.Endpoint) []*exchange.Endpoint {
	for _, e := range list {
		if e == ep {
			return list
		}
	}
	return append(list, ep)
}

func (c *compiler) qnameAttr(e *etree.Element, attr string) (qname, bool) {
	v := e.SelectAttrValue(attr, "")
	if v == "" {
		return qname{}, false
	}
	sp, local, err := bpel.ResolveQName(e, v, true)
	if err != nil {
		c.errorf(e, "attribute %s: %v", attr, err)
		return qname{}, false
	}
	return qname{Space: sp, Local: local}, true
}

func (c *compiler) partnerLink(e *etree.Element, dp *deploy.Process) *partnerLink {
	name := e.SelectAttrValue("name", "")
	pl := &partnerLink{name: name, pos: c.pos(e)}
	plt, ok := c.qnameAttr(e, "partnerLinkType")
	if !ok {
		c.errorf(e, "partnerLink %q has no partnerLinkType", name)
		return nil
	}
	roles, ok := c.w.Plinks[plt]
	if !ok {
		c.errorf(e, "partnerLinkType %s is not defined in any imported WSDL", plt)
		return nil
	}
	role := func(attr string) *wsdl.PortType {
		r := e.SelectAttrValue(attr, "")
		if r == "" {
			return nil
		}
		ptq, ok := roles[r]
		if !ok {
			c.errorf(e, "partnerLinkType %s has no role %q", plt, r)
			return nil
		}
		pt, ok := c.w.PortTypes[ptq]
		if !ok {
			c.errorf(e, "role %q refers to unknown portType %s", r, ptq)
			return nil
		}
		return pt
	}
	pl.myRole = role("myRole")
	pl.partnerPT = role("partnerRole")
	if pl.myRole != nil {
		ref, ok := dp.Provides[name]
		if !ok {
			c.errorf(e, "partnerLink %q has myRole but deploy.xml has no <provide partnerLink=%q>", name, name)
		} else if ep, err := c.w.PartnerEndpoint(ref, pl.myRole); err != nil {
			c.errs.AddErr(err)
		} else {
			ep.Process = dp.Name
			pl.provided = ep
			c.replyTimeouts(e, pl, dp)
		}
	}
	if pl.partnerPT != nil {
		ref, ok := dp.Invokes[name]
		switch {
		case !ok && e.SelectAttrValue("initializePartnerRole", "no") == "yes":
			c.errorf(e, "partnerLink %q has initializePartnerRole=\"yes\" but deploy.xml has no <invoke partnerLink=%q>", name, name)
		case !ok:
			// As in ODE: uninitialized until an endpoint reference is
			// assigned; invoking it before faults uninitializedPartnerRole.
			pl.partnerDesc = wsdl.DefaultEndpoint(pl.partnerPT.Name, name, pl.partnerPT)
		default:
			if ep, err := c.w.PartnerEndpoint(ref, pl.partnerPT); err != nil {
				c.errs.AddErr(err)
			} else {
				if r := dp.BasicAuth[name]; r != nil {
					ep.BasicAuth = r.Auth
				}
				pl.partnerEP, pl.partnerDesc = ep, ep
			}
			c.callTimeouts(pl, dp)
		}
	}
	pl.idx = len(c.p.plist)
	c.p.plist = append(c.p.plist, pl)
	c.p.plinks[name] = pl
	return pl
}

// declare compiles a <variable> into a new slot of the current scope.
func (c *compiler) declare(e *etree.Element) *variable {
	v := &variable{name: e.SelectAttrValue("name", ""), pos: c.pos(e)}
	if strings.Contains(v.name, ".") || v.name == "" {
		c.errorf(e, "invalid variable name %q", v.name)
	}
	if attr, ok := externalVariable(e); ok {
		c.unsupported(e, fmt.Sprintf("external variables (%s on variable %s)", attr, v.name))
	}
	if mt, ok := c.qnameAttr(e, "messageType"); ok {
		m, ok := c.w.Messages[mt]
		if !ok {
			c.errorf(e, "variable %s: unknown messageType %s", v.name, mt)
		}
		v.msg = m
		if m == nil {
			v.msg = &exchange.MessageDesc{Name: mt}
		}
	} else if el, ok := c.qnameAttr(e, "element"); ok {
		v.elem = el
	} else if t, ok := c.qnameAttr(e, "type"); ok {
		v.typ = t
		if t.Space == bpel.NSXSD {
			switch t.Local {
			case "int", "integer", "long", "short", "byte", "double", "float", "decimal",
				"unsignedInt", "unsignedLong", "unsignedShort", "unsignedByte",
				"nonNegativeInteger", "positiveInteger", "negativeInteger", "nonPositiveInteger":
				v.simple = "number"
			case "string", "normalizedString", "token", "anyURI", "QName", "date", "dateTime", "time", "duration":
				v.simple = "string"
			case "boolean":
				v.simple = "boolean"
			}
		}
	} else {
		c.errorf(e, "variable %s needs messageType, element or type", v.name)
	}
	scope := c.scopes[len(c.scopes)-1]
	if _, dup := scope[v.name]; dup {
		c.errorf(e, "variable %s is declared twice in the same scope", v.name)
	}
	c.p.vars = append(c.p.vars, v)
	v.slot = len(c.p.vars)
	scope[v.name] = v
	if fe := bpelChild(e, "from"); fe != nil {
		v.init = &copyOp{pos: c.pos(fe), to: toSpec{v: v, part: -1}}
		c.from(fe, &v.init.from)
		c.p.inits = append(c.p.inits, v)
	}
	return v
}

func bpelChild(e *etree.Element, tag string) *etree.Element {
	for _, c := range e.ChildElements() {
		if c.Tag == tag && isBPEL(c) {
			return c
		}
	}
	return nil
}

// lookupVar implements resolver.
func (c *compiler) lookupVar(name string) *variable {
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if v, ok := c.scopes[i][name]; ok {
			return v
		}
	}
	return nil
}

// propertyPath implements resolver: it resolves a property of a variable
// through the propertyAlias for the variable's type.
func (c *compiler) propertyPath(varName, property string, scope *etree.Element, ns map[string]string) (string, error) {
	v := c.lookupVar(varName)
	if v == nil {
		return "", fmt.Errorf("getVariableProperty: undeclared variable %s", varName)
	}
	sp, local, err := bpel.ResolveQName(scope, property, true)
	if err != nil {
		return "", fmt.Errorf("getVariableProperty: %w", err)
	}
	prop := qname{Space: sp, Local: local}
	k := wsdl.AliasKey{Prop: prop}
	if v.msg != nil {
		k.MessageType = v.msg.Name
	} else {
		k.Element = v.elem
	}
	a, ok := c.w.Aliases[k]
	if !ok {
		return "", fmt.Errorf("getVariableProperty: no propertyAlias for property %s and variable %s", prop, varName)
	}
	path, err := v.path(a.Part)
	if err != nil {
		return "", fmt.Errorf("propertyAlias at %s: %w", a.Pos, err)
	}
	if a.Query == "" {
		return path, nil
	}
	q, err := renamePrefixes(strings.TrimPrefix(a.Query, "/"), a.Ns, ns)
	if err != nil {
		return "", fmt.Errorf("propertyAlias at %s: %w", a.Pos, err)
	}
	return path + "/" + q, nil
}

// expression compiles the text of e as an absolute XPath expression.
func (c *compiler) expression(e *etree.Element, text string, asValue bool) *expr {
	text = strings.TrimSpace(text)
	xpath2, ok := c.language(e, "expressionLanguage")
	if !ok {
		return nil
	}
	if !xpath2 {
		text, _ = trimUnterminatedLiteral(text)
	}
	if text == "" {
		c.errorf(e, "empty expression")
		return nil
	}
	if xpath2 {
		x := c.compileXPath2(e, text, false)
		if x != nil {
			x.fast = compileSimplePath(text, c, x.ns, false)
		}
		return x
	}
	ns := xpathNS(bpel.Namespaces(e))
	if strings.Contains(text, "doXslTransform") {
		// compiled as XPath 2.0, where the function lives (xslt.go)
		return c.compileXPath2(e, text, false)
	}
	rw, err := rewrite(text, c, e, ns, asValue)
	if err != nil {
		c.exprError(e, err)
		return nil
	}
	x, err := newExpr(text, rw, ns)
	if err != nil {
		c.errorf(e, "invalid XPath 1.0 expression %q: %v", text, err)
		return nil
	}
	x.fast = compilePath(text, c, ns, false, true)
	if x.fast == nil && asValue {
		x.fastX = compileFast(text, c, ns)
	}
	return x
}

// query compiles a <query> relative to a variable or part.
func (c *compiler) query(e *etree.Element) *expr {
	xpath2, ok := c.language(e, "queryLanguage")
	if !ok {
		return nil
	}
	text := strings.TrimSpace(e.Text())
	if !xpath2 {
		text, _ = trimUnterminatedLiteral(text)
	}
	if text == "" {
		c.errorf(e, "empty query")
		return nil
	}
	if xpath2 {
		x := c.compileXPath2(e, text, true)
		if x != nil {
			x.fast = compileSimplePath(text, c, x.ns, true)
		}
		return x
	}
	ns := xpathNS(bpel.Namespaces(e))
	rw, err := rewrite(text, c, e, ns, true)
	if err != nil {
		c.exprError(e, err)
		return nil
	}
	x, err := newExpr(text, rw, ns)
	if err != nil {
		c.errorf(e, "invalid XPath 1.0 query %q: %v", text, err)
		return nil
	}
	x.fast = compilePath(text, c, ns, true, true)
	return x
}

func (c *compiler) varPart(e *etree.Element) (*variable, int, bool) {
	name := e.SelectAttrValue("variable", "")
	v := c.lookupVar(name)
	if v == nil {
		c.errorf(e, "undeclared variable %q", name)
		return nil, -1, false
	}
	part := e.SelectAttrValue("part", "")
	if part == "" {
		return v, -1, true
	}
	i := v.partIndex(part)
	if i < 0 {
		c.errorf(e, "variable %s has no part %q", name, part)
		return nil, -1, false
	}
	return v, i, true
}

func (c *compiler) from(e *etree.Element, f *fromSpec) {
	f.part = -1
	switch {
	case e.SelectAttr("partnerLink") != nil:
		f.epr = c.fromPartnerLink(e)
	case e.SelectAttr("property") != nil:
		f.x = c.propertyExpr(e)
	case e.SelectAttr("variable") != nil:
		v, part, ok := c.varPart(e)
		if !ok {
			return
		}
		f.v, f.part = v, part
		if q := bpelChild(e, "query"); q != nil {
			f.query = c.query(q)
		}
	case bpelChild(e, "literal") != nil:
		f.literal = literalContent(bpelChild(e, "literal"))
		if els := f.literal.ChildElements(); len(els) == 1 {
			f.litElem = els[0]
		} else {
			f.litText = f.literal.Text()
		}
	default:
		f.x = c.expression(e, e.Text(), true)
	}
}

// literalContent copies a <literal>'s content into a detached container,
// declaring on each element the namespaces it uses from the BPEL document.
func literalContent(lit *etree.Element) *etree.Element {
	box := etree.NewElement("literal")
	copyChildren(box, lit, nil)
	return box
}

func (c *compiler) to(e *etree.Element, t *toSpec) bool {
	t.part = -1
	switch {
	case e.SelectAttr("partnerLink") != nil:
		t.epr = c.toPartnerLink(e)
		return t.epr != nil
	case e.SelectAttr("property") != nil:
		x := c.propertyExpr(e)
		if x == nil {
			return false
		}
		t.v = c.lookupVar(e.SelectAttrValue("variable", ""))
		t.query = x
		return true
	case e.SelectAttr("variable") != nil:
		v, part, ok := c.varPart(e)
		if !ok {
			return false
		}
		t.v, t.part = v, part
		if q := bpelChild(e, "query"); q != nil {
			t.query = c.query(q)
		}
		return true
	}
	// An expression lvalue: $var[.part][/relative-path].
	text := strings.TrimSpace(e.Text())
	if x2, ok := c.language(e, "expressionLanguage"); !ok {
		return false
	} else if x2 {
		return c.toXPath2(e, text, t)
	}
	if !strings.HasPrefix(text, "$") {
		c.errorf(e, "<to> expression %q must start with a variable reference ($name or $name.part)", text)
		return false
	}
	j := 1
	for j < len(text) && isNameChar(text[j]) && text[j] != '.' {
		j++
	}
	v := c.lookupVar(text[1:j])
	if v == nil {
		c.errorf(e, "undeclared variable $%s in %q", text[1:j], text)
		return false
	}
	t.v = v
	if j < len(text) && text[j] == '.' {
		k := j + 1
		for k < len(text) && isNameChar(text[k]) && text[k] != '.' {
			k++
		}
		t.part = v.partIndex(text[j+1 : k])
		if t.part < 0 {
			c.errorf(e, "variable %s has no part %q", v.name, text[j+1:k])
			return false
		}
		j = k
	}
	rest := strings.TrimSpace(text[j:])
	if rest == "" {
		return true
	}
	if !strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, "//") {
		c.errorf(e, "<to> expression %q: only $var[.part]/relative/path lvalues are supported", text)
		return false
	}
	ns := xpathNS(bpel.Namespaces(e))
	rw, err := rewrite(rest[1:], c, e, ns, true)
	if err != nil {
		c.errorf(e, "%v", err)
		return false
	}
	x, err := newExpr(rest[1:], rw, ns)
	if err != nil {
		c.errorf(e, "invalid XPath in <to> %q: %v", text, err)
		return false
	}
	x.fast = compilePath(rest[1:], c, ns, true, true)
	t.query = x
	return true
}

func (c *compiler) faultHandlers(e *etree.Element) *faultHandlers {
	return c.faultHandlerList(e.ChildElements())
}

// faultHandlerList compiles catch and catchAll elements.
func (c *compiler) faultHandlerList(list []*etree.Element) *faultHandlers {
	h := &faultHandlers{}
	for _, ce := range list {
		if !isBPEL(ce) {
			continue
		}
		switch ce.Tag {
		case "catch":
			ct := &catch{}
			ct.faultName, _ = c.qnameAttr(ce, "faultName")
			c.scopes = append(c.scopes, map[string]*variable{})
			if vn := ce.SelectAttrValue("faultVariable", ""); vn != "" {
				v := &variable{name: vn, pos: c.pos(ce)}
				if mt, ok := c.qnameAttr(ce, "faultMessageType"); ok {
					v.msg = c.w.Messages[mt]
					if v.msg == nil {
						c.errorf(ce, "unknown faultMessageType %s", mt)
						v.msg = &exchange.MessageDesc{Name: mt}
					}
				} else if el, ok := c.qnameAttr(ce, "faultElement"); ok {
					v.elem = el
				} else {
					c.errorf(ce, "catch with faultVariable needs faultMessageType or faultElement")
				}
				c.p.vars = append(c.p.vars, v)
				v.slot = len(c.p.vars)
				c.scopes[len(c.scopes)-1][vn] = v
				ct.v = v
			}
			ct.act = c.onlyActivity(ce)
			c.scopes = c.scopes[:len(c.scopes)-1]
			h.catches = append(h.catches, ct)
		case "catchAll":
			h.catchAll = c.onlyActivity(ce)
		default:
			c.errorf(ce, "unexpected element in faultHandlers")
		}
	}
	return h
}

// onlyActivity compiles the single activity child of e.
func (c *compiler) onlyActivity(e *etree.Element) activity { return c.onlyActivityExcept(e) }

func (c *compiler) partnerOp(e *etree.Element, mine bool) (*partnerLink, *exchange.Operation) {
	name := e.SelectAttrValue("partnerLink", "")
	pl, ok := c.p.plinks[name]
	if !ok {
		c.errorf(e, "unknown partnerLink %q", name)
		return nil, nil
	}
	opName := e.SelectAttrValue("operation", "")
	var ep *exchange.Endpoint
	if mine {
		ep = pl.provided
	} else {
		ep = pl.partnerDesc
	}
	if ep == nil {
		role := "partnerRole"
		if mine {
			role = "myRole"
		}
		c.errorf(e, "partnerLink %q has no %s bound", name, role)
		return nil, nil
	}
	for _, op := range ep.Operations {
		if op.Name == opName {
			return pl, op
		}
	}
	c.errorf(e, "operation %q is not in the binding of partnerLink %q", opName, name)
	return nil, nil
}

func (c *compiler) optVar(e *etree.Element, attr string, want *exchange.MessageDesc) *variable {
	name := e.SelectAttrValue(attr, "")
	if name == "" {
		return nil
	}
	v := c.lookupVar(name)
	if v == nil {
		c.errorf(e, "undeclared variable %q", name)
		return nil
	}
	if v.msg == nil {
		c.unsupported(e, fmt.Sprintf("%s %q: a non-message variable on a messaging activity", attr, name))
		return nil
	}
	if want != nil && v.msg.Name != want.Name {
		c.errorf(e, "%s %q has messageType %s, the operation needs %s", attr, name, v.msg.Name, want.Name)
	}
	return v
}

// activity compiles one activity element and numbers it: frames refer to
// activities by that number when an instance is checkpointed.
func (c *compiler) activity(e *etree.Element) activity {
	mark := c.beginSources()
	first := len(c.p.acts)
	a := c.register(c.compileActivity(e))
	c.adopt(first, a)
	w := c.withLinks(e, a, c.endSources(mark))
	if w != a {
		c.adopt(first, w)
	}
	return w
}

func (c *compiler) compileActivity(e *etree.Element) activity {
	b := base{pos: c.pos(e), name: e.SelectAttrValue("name", ""), tag: e.Tag}
	if !isBPEL(e) {
		c.errorf(e, "{%s}%s is not a BPEL activity", e.NamespaceURI(), e.Tag)
		return &empty{base: b}
	}
	switch e.Tag {
	case "sequence":
		s := &sequence{base: b}
		for _, ce := range e.ChildElements() {
			if !isBPEL(ce) || ce.Tag == "documentation" || ce.Tag == "targets" || ce.Tag == "sources" {
				continue
			}
			s.children = append(s.children, c.activity(ce))
		}
		if len(s.children) == 0 {
			c.errorf(e, "empty sequence")
		}
		return s
	case "empty":
		return &empty{base: b}
	case "exit":
		return &exit{base: b}
	case "if":
		a := &ifAct{base: b}
		cond := bpelChild(e, "condition")
		if cond == nil {
			c.errorf(e, "<if> has no <condition>")
			return a
		}
		a.conds = append(a.conds, c.expression(cond, cond.Text(), true))
		mark := c.beginSources()
		a.branches = append(a.branches, c.activityAfter(e, cond))
		a.dead.add(c.endSources(mark))
		for _, ce := range e.ChildElements() {
			if !isBPEL(ce) {
				continue
			}
			switch ce.Tag {
			case "elseif":
				cd := bpelChild(ce, "condition")
				if cd == nil {
					c.errorf(ce, "<elseif> has no <condition>")
					continue
				}
				a.conds = append(a.conds, c.expression(cd, cd.Text(), true))
				mark := c.beginSources()
				a.branches = append(a.branches, c.activityAfter(ce, cd))
				a.dead.add(c.endSources(mark))
			case "else":
				mark := c.beginSources()
				a.els = c.onlyActivity(ce)
				a.elseDead = c.endSources(mark)
			}
		}
		a.dead.add(a.elseDead)
		return a
	case "while":
		a := &while{base: b}
		cond := bpelChild(e, "condition")
		if cond == nil {
			c.errorf(e, "<while> has no <condition>")
			return a
		}
		a.cond = c.expression(cond, cond.Text(), true)
		a.body = c.activityAfter(e, cond)
		return a
	case "throw":
		a := &throw{base: b}
		var ok bool
		if a.faultName, ok = c.qnameAttr(e, "faultName"); !ok {
			c.errorf(e, "<throw> has no faultName")
		}
		if vn := e.SelectAttrValue("faultVariable", ""); vn != "" {
			if a.v = c.lookupVar(vn); a.v == nil {
				c.errorf(e, "undeclared variable %q", vn)
			}
		}
		return a
	case "receive":
		c.receives++
		a := &receive{base: b, create: e.SelectAttrValue("createInstance", "no") == "yes"}
		a.inbound = c.inbound(e, "variable")
		c.registerInbound(&a.inbound, a.create)
		if a.create && a.op != nil {
			c.addStart(e, a.op.Name, a)
		}
		return a
	case "pick":
		return c.pick(e, b)
	case "wait":
		a := &wait{base: b}
		a.deadline = c.deadline(e)
		return a
	case "reply":
		a := &reply{base: b}
		a.pl, a.op = c.partnerOp(e, true)
		a.faultName, _ = c.qnameAttr(e, "faultName")
		if a.op != nil {
			if a.op.OneWay() {
				c.errorf(e, "operation %s is one-way: nothing to reply", a.op.Name)
			}
			want := a.op.Output
			if !a.faultName.IsZero() {
				want = nil
				if f, ok := a.op.Faults[a.faultName.Local]; ok {
					want = f
				} else {
					c.errorf(e, "operation %s declares no fault %s", a.op.Name, a.faultName.Local)
				}
			}
			a.v = c.optVar(e, "variable", want)
		}
		if a.op != nil {
			md := a.op.Output
			if !a.faultName.IsZero() {
				md = a.op.Faults[a.faultName.Local]
			}
			a.toParts = c.compileParts(e, "toParts", md)
		}
		a.mex = e.SelectAttrValue("messageExchange", "")
		if a.op != nil {
			a.ev = c.replyEvent(a.pl, a.op, a.mex)
		}
		if a.op != nil && a.faultName.IsZero() {
			a.corrs = c.correlations(e, nil, a.op.Output)
		}
		return a
	case "invoke":
		a := &invoke{base: b}
		a.pl, a.op = c.partnerOp(e, false)
		if a.op != nil {
			a.in = c.optVar(e, "inputVariable", a.op.Input)
			if a.op.Output != nil {
				a.out = c.optVar(e, "outputVariable", a.op.Output)
			}
			a.partner = a.pl.name
			a.corrs = c.correlations(e, a.op.Output, a.op.Input)
			a.policy = c.failurePolicy(e)
			a.timeout = c.p.callTimeout(a.pl.name, a.op.Name)
			a.toParts = c.compileParts(e, "toParts", a.op.Input)
			a.fromParts = c.compileParts(e, "fromParts", a.op.Output)
		}
		return c.inlineHandlers(e, a)
	case "assign":
		a := &assign{base: b}
		for _, ce := range e.ChildElements() {
			if !isBPEL(ce) || ce.Tag == "documentation" || ce.Tag == "targets" || ce.Tag == "sources" {
				continue
			}
			if ce.Tag == "extensionAssignOperation" {
				if op := c.extensionAssign(ce); op != nil {
					a.copies = append(a.copies, op)
				}
				continue
			}
			if ce.Tag != "copy" {
				c.unsupported(ce, "<"+ce.Tag+"> in <assign>")
				continue
			}
			op := &copyOp{pos: c.pos(ce),
				keepSrcElementName:    ce.SelectAttrValue("keepSrcElementName", "no") == "yes",
				ignoreMissingFromData: ce.SelectAttrValue("ignoreMissingFromData", "no") == "yes"}
			fe, te := bpelChild(ce, "from"), bpelChild(ce, "to")
			if fe == nil || te == nil {
				c.errorf(ce, "<copy> needs <from> and <to>")
				continue
			}
			c.from(fe, &op.from)
			insert, err := insertMissingAttr(ce)
			if err != nil {
				c.errorf(ce, "%w", err)
			}
			if c.to(te, &op.to) {
				if insert {
					c.insertMissing(te, &op.to)
				}
				a.copies = append(a.copies, op)
			}
		}
		if e.SelectAttrValue("validate", "no") == "yes" {
			a.validate = c.schemaChecks(e, assignTargets(a.copies))
		}
		return a
	case "flow":
		return c.flow(e, b)
	case "scope":
		return c.scope(e, b)
	case "forEach":
		return c.forEach(e, b)
	case "repeatUntil":
		return c.repeatUntil(e, b)
	case "rethrow":
		return &rethrow{base: b}
	case "extensionActivity":
		return c.extensionActivity(e, b)
	case "validate":
		return c.validateVars(e, b)
	case "compensate", "compensateScope":
		return c.compensateActivity(e, b)
	}
	c.errorf(e, "unknown activity <%s>", e.Tag)
	return &empty{base: b}
}

// activityAfter compiles the activity that follows the <condition> of an
// if, elseif or while.
func (c *compiler) activityAfter(e, cond *etree.Element) activity {
	for _, ce := range e.ChildElements() {
		if ce == cond || !isBPEL(ce) {
			continue
		}
		switch ce.Tag {
		case "documentation", "elseif", "else", "targets", "sources", "condition":
			continue
		case "then":
			// The 2.0 drafts' <if><condition/><then>activity</then>,
			// which ODE also read.
			return c.onlyActivity(ce)
		}
		return c.activity(ce)
	}
	c.errorf(e, "<%s> has no activity", e.Tag)
	return &empty{base: base{pos: c.pos(e)}}
}

// failurePolicy is the invoke's ext:failureHandling: deploy.xml's for the
// partner link overrides the one written in the BPEL.
func (c *compiler) failurePolicy(e *etree.Element) *deploy.FailurePolicy {
	if fp := c.dp.Failure[e.SelectAttrValue("partnerLink", "")]; fp != nil {
		return fp
	}
	for _, x := range e.ChildElements() {
		if x.Tag == "failureHandling" && x.NamespaceURI() == deploy.NsActivityRecovery {
			return deploy.ParseFailure(c.doc, x, c.errs)
		}
	}
	return nil
}

// callTimeouts takes deploy.xml's orchd:timeout settings of pl, whose
// partnerRole portType must have the operation named.
func (c *compiler) callTimeouts(pl *partnerLink, dp *deploy.Process) {
	for k, t := range dp.CallTimeout {
		name, op, _ := strings.Cut(k, "/")
		if name != pl.name {
			continue
		}
		if _, ok := pl.partnerPT.Ops[op]; op != "" && !ok {
			c.errs.Add(t.Pos, "orchd:timeout", "partnerLink %q has no operation %q", name, op)
			continue
		}
		if c.p.callTimeouts == nil {
			c.p.callTimeouts = map[string]time.Duration{}
		}
		c.p.callTimeouts[k] = t.D
	}
}

// replyTimeouts takes deploy.xml's orchd:replyTimeout settings of pl,
// whose myRole portType must have the operation.
func (c *compiler) replyTimeouts(e *etree.Element, pl *partnerLink, dp *deploy.Process) {
	for k, d := range dp.ReplyTimeout {
		name, op, _ := strings.Cut(k, "/")
		if name != pl.name {
			continue
		}
		if o, ok := pl.myRole.Ops[op]; !ok || o.OneWay() {
			c.errorf(e, "deploy.xml orchd:replyTimeout: partnerLink %q has no request-response operation %q", name, op)
			continue
		}
		if c.p.replyTimeouts == nil {
			c.p.replyTimeouts = map[replyOp]time.Duration{}
		}
		c.p.replyTimeouts[replyOp{pl.provided, op}] = d
	}
}
