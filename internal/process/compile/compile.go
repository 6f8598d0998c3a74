package compile

import (
	"fmt"
	"strings"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/check"
	"github.com/orchd/orchd/internal/process/deploy"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/wsdl"
	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xpath2"
	"github.com/orchd/orchd/internal/xslt"
)

// compiler turns one BPEL document into a Process.
type compiler struct {
	doc  *xmldoc.Document
	root *ast.Element // the tree's root, the <process>
	dp   *deploy.Process
	w    *wsdl.Set
	errs *xmldoc.Errors
	p    *plan.Plan
	// scopes of variable declarations, innermost last.
	scopes []map[string]*expr.Var
	// receives counts receive activities seen, to reject what needs
	// correlation.
	receives int
	// links are the links declared by the enclosing flows, innermost
	// last; collect gathers link sources for dead-path elimination.
	links   []map[string]*plan.Link
	collect [][]*plan.Link
	// compat is the process's compatibility mode (check.ODE: run what
	// Apache ODE ran, compat.go).
	compat check.Compat
	// exts are the process's <extensions>: namespace -> mustUnderstand.
	exts map[string]bool
	// ext are the registered extension implementations (extension.go).
	ext Extensions
	// extResolved are the variables the extension being compiled
	// resolved (the ones an assign operation may write).
	extResolved []*expr.Var
	// events are the onEvents enclosing what is being compiled.
	events []*plan.OnEvent
	// xp2lib is the XPath 2.0 function library (xpath2_ode.go).
	xp2lib *xpath2.FunctionLibrary
	// xsl are the stylesheets doXslTransform calls name (xslt.go).
	xsl map[string]*xslt.Stylesheet
	// encl are the scopes whose bodies enclose what is being compiled
	// (nil: a handler); hctx the scopes whose fault, compensation or
	// termination handler encloses it (nil: a body). See compensate.go.
	encl, hctx []*plan.Scope
}

func (c *compiler) pos(e *ast.Element) xmldoc.Pos { return e.Pos }

// srcPos is the position of an element of the document the tree does not
// hold as a node of its own (one inside an extension element).
func (c *compiler) srcPos(e *etree.Element) xmldoc.Pos { return c.doc.Pos(e) }

// errorfSrc is errorf at an element inside an extension element.
func (c *compiler) errorfSrc(e *etree.Element, format string, args ...any) {
	c.errs.Add(c.srcPos(e), e.Tag, format, args...)
}

func (c *compiler) errorf(e *ast.Element, format string, args ...any) {
	c.errs.Add(c.pos(e), e.Tag, format, args...)
}

// warnf notes a problem that does not refuse the process.
func (c *compiler) warnf(e *ast.Element, format string, args ...any) {
	c.p.Warnings = append(c.p.Warnings, fmt.Sprintf("%s: <%s>: %s", c.pos(e), e.Tag, fmt.Sprintf(format, args...)))
}

func (c *compiler) unsupported(e *ast.Element, what string) {
	c.errs.Unsupported(c.pos(e), e.Tag, what)
}

func isBPEL(e *ast.Element) bool { return e.IsBPEL() }

// compileProcess lowers the syntax tree of a <process> to its plan. dp
// binds its partner links; endpoints are built from the bundle's WSDL
// set.
func compileProcess(proc *ast.Process, w *wsdl.Set, dp *deploy.Process, errs *xmldoc.Errors, opts LoadOptions, mode check.Compat) *plan.Plan {
	doc, root := proc.Doc, &proc.Element
	c := &compiler{doc: doc, root: root, w: w, errs: errs, dp: dp, ext: opts.Extensions, compat: mode}
	p := &plan.Plan{Name: dp.Name, File: doc.File, InMemory: dp.InMemory, Plinks: map[string]*plan.PartnerLink{},
		Starts: map[string]plan.Activity{}, Routes: map[string][]*plan.RouteShape{}, Cleanup: dp.Cleanup, Retention: dp.Retention, Idempotent: dp.Idempotent, Events: dp.Events, MaxSteps: dp.MaxSteps, MaxVariableBytes: dp.MaxVariableBytes, MaxRunBytes: dp.MaxRunBytes,
		FaultUncaught: dp.FaultUncaught, PartnerAllow: dp.PartnerAllow, UndeclaredFaultsFail: mode == check.ODE}
	c.p = p
	c.scopes = []map[string]*expr.Var{{}}
	for _, a := range root.Attrs {
		switch {
		case a.Space == "" && (a.Key == "queryLanguage" || a.Key == "expressionLanguage"):
			c.checkProcessLanguage(root, a.Key, a.Value)
		}
	}
	var act *ast.Element
	for _, e := range root.Children() {
		if !isBPEL(e) {
			continue // extension elements in other namespaces are ignored
		}
		switch n := e.Node().(type) {
		case *ast.Import, *ast.Documentation, *ast.MessageExchanges:
		case *ast.PartnerLinks:
			for _, pl := range e.Select("partnerLink") {
				c.partnerLink(pl, dp)
			}
		case *ast.Variables:
			for _, ve := range e.Select("variable") {
				c.declare(ve)
			}
		case *ast.FaultHandlers, *ast.EventHandlers:
			// compiled after the main activity, below
		case *ast.CorrelationSets:
			c.correlationSets(n)
		case *ast.Extensions:
			c.extensions(n)
		default:
			// an activity, or an element in its place that
			// compileActivity refuses
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
	ps := &plan.Scope{Base: plan.Base{Pos: c.pos(root)}, IsProcess: true}
	c.enterBody(ps)
	body := c.activity(act)
	c.leave()
	if fh := proc.FaultHandlers; fh != nil {
		c.enterHandler(ps)
		p.Handlers = c.faultHandlers(&fh.Element)
		c.leave()
	}
	ps.Body, ps.Handlers = body, p.Handlers
	if eh := proc.EventHandlers; eh != nil {
		c.enterBody(ps)
		ps.Events = c.eventHandlers(&eh.Element)
		c.leave()
	}
	c.finishScope(ps, nil)
	p.Root = c.register(ps)
	c.adopt(0, p.Root)
	if len(p.Starts) == 0 {
		c.errorf(act, "process has no start activity (a receive or pick with createInstance=\"yes\")")
	}
	for _, pl := range p.Plinks {
		if pl.Provided != nil {
			p.Endpoints = appendUnique(p.Endpoints, pl.Provided)
		}
	}
	p.Slots = expr.NewSlots(p.Vars)
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

func (c *compiler) qnameAttr(e *ast.Element, attr string) (exchange.QName, bool) {
	v := e.AttrOr(attr, "")
	if v == "" {
		return exchange.QName{}, false
	}
	sp, local, err := e.ResolveQName(v, true)
	if err != nil {
		c.errorf(e, "attribute %s: %v", attr, err)
		return exchange.QName{}, false
	}
	return exchange.QName{Space: sp, Local: local}, true
}

func (c *compiler) partnerLink(e *ast.Element, dp *deploy.Process) *plan.PartnerLink {
	name := e.AttrOr("name", "")
	pl := &plan.PartnerLink{Name: name, Pos: c.pos(e)}
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
		r := e.AttrOr(attr, "")
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
	pl.MyRole = role("myRole")
	pl.PartnerPT = role("partnerRole")
	if pl.MyRole != nil {
		ref, ok := dp.Provides[name]
		if !ok {
			c.errorf(e, "partnerLink %q has myRole but deploy.xml has no <provide partnerLink=%q>", name, name)
		} else if ep, err := c.w.PartnerEndpoint(ref, pl.MyRole); err != nil {
			c.errs.AddErr(err)
		} else {
			ep.Process = dp.Name
			if t := dp.ProvideTokens[name]; t != nil && t.Auth != nil {
				ep.Auth = t.Auth
			}
			pl.Provided = ep
			c.replyTimeouts(e, pl, dp)
		}
	}
	if pl.PartnerPT != nil {
		ref, ok := dp.Invokes[name]
		switch {
		case !ok && e.AttrOr("initializePartnerRole", "no") == "yes":
			c.errorf(e, "partnerLink %q has initializePartnerRole=\"yes\" but deploy.xml has no <invoke partnerLink=%q>", name, name)
		case !ok:
			// As in ODE: uninitialized until an endpoint reference is
			// assigned; invoking it before faults uninitializedPartnerRole.
			pl.PartnerDesc = wsdl.DefaultEndpoint(pl.PartnerPT.Name, name, pl.PartnerPT)
		default:
			if ep, err := c.w.PartnerEndpoint(ref, pl.PartnerPT); err != nil {
				c.errs.AddErr(err)
			} else {
				if r := dp.BasicAuth[name]; r != nil {
					ep.BasicAuth = r.Auth
				}
				if t := dp.InvokeTokens[name]; t != nil && t.Signer != nil {
					ep.Security = t.Signer
				}
				if dp.Addressing[name] {
					ep.Addressing = true
				}
				pl.PartnerEP, pl.PartnerDesc = ep, ep
			}
			c.callTimeouts(pl, dp)
		}
	}
	pl.Idx = len(c.p.Plist)
	c.p.Plist = append(c.p.Plist, pl)
	c.p.Plinks[name] = pl
	return pl
}

// declare compiles a <variable> into a new slot of the current scope.
func (c *compiler) declare(e *ast.Element) *expr.Var {
	v := &expr.Var{Name: e.AttrOr("name", ""), Pos: c.pos(e)}
	if strings.Contains(v.Name, ".") || v.Name == "" {
		c.errorf(e, "invalid variable name %q", v.Name)
	}
	if attr, ok := externalVariable(e); ok {
		c.unsupported(e, fmt.Sprintf("external variables (%s on variable %s)", attr, v.Name))
	}
	if mt, ok := c.qnameAttr(e, "messageType"); ok {
		m, ok := c.w.Messages[mt]
		if !ok {
			c.errorf(e, "variable %s: unknown messageType %s", v.Name, mt)
		}
		v.Msg = m
		if m == nil {
			v.Msg = &exchange.MessageDesc{Name: mt}
		}
	} else if el, ok := c.qnameAttr(e, "element"); ok {
		v.Elem = el
	} else if t, ok := c.qnameAttr(e, "type"); ok {
		v.Typ = t
		if t.Space == xmldoc.NSXSD {
			switch t.Local {
			case "int", "integer", "long", "short", "byte", "double", "float", "decimal",
				"unsignedInt", "unsignedLong", "unsignedShort", "unsignedByte",
				"nonNegativeInteger", "positiveInteger", "negativeInteger", "nonPositiveInteger":
				v.Simple = "number"
			case "string", "normalizedString", "token", "anyURI", "QName", "date", "dateTime", "time", "duration":
				v.Simple = "string"
			case "boolean":
				v.Simple = "boolean"
			}
		}
	} else {
		c.errorf(e, "variable %s needs messageType, element or type", v.Name)
	}
	scope := c.scopes[len(c.scopes)-1]
	if _, dup := scope[v.Name]; dup {
		c.errorf(e, "variable %s is declared twice in the same scope", v.Name)
	}
	c.p.Vars = append(c.p.Vars, v)
	v.Slot = len(c.p.Vars)
	scope[v.Name] = v
	if fe := e.Child("from"); fe != nil {
		op := &plan.CopyOp{Pos: c.pos(fe), To: plan.ToSpec{V: v, Part: -1}}
		c.from(fe.Node().(*ast.From), &op.From)
		c.p.Inits = append(c.p.Inits, op)
	}
	return v
}

// lookupVar implements resolver.
func (c *compiler) LookupVar(name string) *expr.Var {
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if v, ok := c.scopes[i][name]; ok {
			return v
		}
	}
	return nil
}

// PropertyPath implements expr.Resolver: it resolves a property of a variable
// through the propertyAlias for the variable's type.
func (c *compiler) PropertyPath(varName, property string, scope *etree.Element, ns map[string]string) (string, error) {
	v := c.LookupVar(varName)
	if v == nil {
		return "", fmt.Errorf("getVariableProperty: undeclared variable %s", varName)
	}
	sp, local, err := xmldoc.ResolveQName(scope, property, true)
	if err != nil {
		return "", fmt.Errorf("getVariableProperty: %w", err)
	}
	prop := exchange.QName{Space: sp, Local: local}
	k := wsdl.AliasKey{Prop: prop}
	if v.Msg != nil {
		k.MessageType = v.Msg.Name
	} else {
		k.Element = v.Elem
	}
	a, ok := c.w.Aliases[k]
	if !ok {
		return "", fmt.Errorf("getVariableProperty: no propertyAlias for property %s and variable %s", prop, varName)
	}
	path, err := v.Path(a.Part)
	if err != nil {
		return "", fmt.Errorf("propertyAlias at %s: %w", a.Pos, err)
	}
	if a.Query == "" {
		return path, nil
	}
	q, err := expr.RenamePrefixes(strings.TrimPrefix(a.Query, "/"), a.Ns, ns)
	if err != nil {
		return "", fmt.Errorf("propertyAlias at %s: %w", a.Pos, err)
	}
	return path + "/" + q, nil
}

// expression compiles the text of e as an absolute XPath expression.
func (c *compiler) expression(e *ast.Element, text string, asValue bool) *expr.Expr {
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
			x.Fast = expr.CompileSimplePath(text, c, x.Ns, false)
		}
		return x
	}
	ns := expr.XpathNS(e.Namespaces())
	if strings.Contains(text, "doXslTransform") {
		// compiled as XPath 2.0, where the function lives (xslt.go)
		return c.compileXPath2(e, text, false)
	}
	rw, err := expr.Rewrite(text, c, e.Src, ns, asValue)
	if err != nil {
		c.exprError(e, err)
		return nil
	}
	x, err := expr.NewExpr(text, rw, ns)
	if err != nil {
		c.errorf(e, "invalid XPath 1.0 expression %q: %v", text, err)
		return nil
	}
	x.Fast = expr.CompilePath(text, c, ns, false, true)
	if x.Fast == nil && asValue {
		x.FastX = expr.CompileFast(text, c, ns)
	}
	return x
}

// query compiles a <query> relative to a variable or part.
func (c *compiler) query(e *ast.Element) *expr.Expr {
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
			x.Fast = expr.CompileSimplePath(text, c, x.Ns, true)
		}
		return x
	}
	ns := expr.XpathNS(e.Namespaces())
	rw, err := expr.Rewrite(text, c, e.Src, ns, true)
	if err != nil {
		c.exprError(e, err)
		return nil
	}
	x, err := expr.NewExpr(text, rw, ns)
	if err != nil {
		c.errorf(e, "invalid XPath 1.0 query %q: %v", text, err)
		return nil
	}
	x.Fast = expr.CompilePath(text, c, ns, true, true)
	return x
}

func (c *compiler) varPart(e *ast.Element) (*expr.Var, int, bool) {
	name := e.AttrOr("variable", "")
	v := c.LookupVar(name)
	if v == nil {
		c.errorf(e, "undeclared variable %q", name)
		return nil, -1, false
	}
	part := e.AttrOr("part", "")
	if part == "" {
		return v, -1, true
	}
	i := v.PartIndex(part)
	if i < 0 {
		c.errorf(e, "variable %s has no part %q", name, part)
		return nil, -1, false
	}
	return v, i, true
}

// onlyActivity compiles the single activity child of e.
func (c *compiler) onlyActivity(e *ast.Element) plan.Activity { return c.onlyActivityExcept(e) }

func (c *compiler) partnerOp(e *ast.Element, mine bool) (*plan.PartnerLink, *exchange.Operation) {
	name := e.AttrOr("partnerLink", "")
	pl, ok := c.p.Plinks[name]
	if !ok {
		c.errorf(e, "unknown partnerLink %q", name)
		return nil, nil
	}
	opName := e.AttrOr("operation", "")
	var ep *exchange.Endpoint
	if mine {
		ep = pl.Provided
	} else {
		ep = pl.PartnerDesc
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

func (c *compiler) optVar(e *ast.Element, attr string, want *exchange.MessageDesc) *expr.Var {
	name := e.AttrOr(attr, "")
	if name == "" {
		return nil
	}
	v := c.LookupVar(name)
	if v == nil {
		c.errorf(e, "undeclared variable %q", name)
		return nil
	}
	if v.Msg == nil {
		if want != nil && len(want.Parts) == 1 && !want.Parts[0].Element.IsZero() && !v.Elem.IsZero() {
			// SA00048/SA00058 (WS-BPEL 2.0 10.3, 10.4): a message of one
			// element part may be held in an element variable of that
			// element; the caller maps it as the part (elementVarParts).
			if v.Elem != want.Parts[0].Element {
				c.errorf(e, "%s %q is of element %s, the single part %s of message %s is of element %s", attr, name, v.Elem, want.Parts[0].Name, want.Name, want.Parts[0].Element)
			}
			return v
		}
		c.errorf(e, "%s %q is not a message variable: only a message of one element part may use an element variable of that element (SA00048, SA00058)", attr, name)
		return nil
	}
	if want != nil && v.Msg.Name != want.Name {
		c.errorf(e, "%s %q has messageType %s, the operation needs %s", attr, name, v.Msg.Name, want.Name)
	}
	return v
}

// elementVarParts turns an element variable v that optVar accepted for
// a message md of one element part into the equivalent part mapping (as
// <fromParts>/<toParts> with that one part): the runtime stores and
// builds the message through it. A message variable (or none) stays.
func elementVarParts(v **expr.Var, md *exchange.MessageDesc, parts *[]plan.PartMap) {
	if *v == nil || (*v).Msg != nil || md == nil || len(md.Parts) != 1 {
		return
	}
	*parts = []plan.PartMap{{Part: md.Parts[0].Name, V: *v}}
	*v = nil
}

// activity compiles one activity element and numbers it: frames refer to
// activities by that number when an instance is checkpointed.
func (c *compiler) activity(e *ast.Element) plan.Activity {
	mark := c.beginSources()
	first := len(c.p.Acts)
	a := c.register(c.compileActivity(e))
	c.adopt(first, a)
	w := c.withLinks(e, a, c.endSources(mark))
	if w != a {
		c.adopt(first, w)
	}
	return w
}

// compileActivity lowers one activity node to its plan node. An element
// in an activity's place that is no activity (another namespace's, an
// unknown tag) is reported.
func (c *compiler) compileActivity(e *ast.Element) plan.Activity {
	b := plan.Base{Pos: c.pos(e), Name: e.AttrOr("name", ""), Tag: e.Tag}
	if !isBPEL(e) {
		c.errorf(e, "{%s}%s is not a BPEL activity", e.Space, e.Tag)
		return &plan.Empty{Base: b}
	}
	switch n := e.Node().(type) {
	case *ast.Sequence:
		s := &plan.Sequence{Base: b}
		for _, ce := range e.Children() {
			if !isBPEL(ce) {
				continue
			}
			switch ce.Node().(type) {
			case *ast.Documentation, *ast.Targets, *ast.Sources:
				continue
			}
			s.Children = append(s.Children, c.activity(ce))
		}
		if len(s.Children) == 0 {
			c.errorf(e, "empty sequence")
		}
		return s
	case *ast.Empty:
		return &plan.Empty{Base: b}
	case *ast.Exit:
		return &plan.Exit{Base: b}
	case *ast.If:
		return c.ifActivity(n, b)
	case *ast.While:
		a := &plan.While{Base: b}
		if n.Condition == nil {
			c.errorf(e, "<while> has no <condition>")
			return a
		}
		a.Cond = c.condOf(n.Condition)
		a.Body = c.activityAfter(e, &n.Condition.Element)
		return a
	case *ast.Throw:
		a := &plan.Throw{Base: b}
		var ok bool
		if a.FaultName, ok = c.qnameAttr(e, "faultName"); !ok {
			c.errorf(e, "<throw> has no faultName")
		}
		if vn := e.AttrOr("faultVariable", ""); vn != "" {
			if a.V = c.LookupVar(vn); a.V == nil {
				c.errorf(e, "undeclared variable %q", vn)
			}
		}
		return a
	case *ast.Receive:
		c.receives++
		a := &plan.Receive{Base: b, Create: e.AttrOr("createInstance", "no") == "yes"}
		a.Inbound = c.inbound(e, "variable")
		c.registerInbound(&a.Inbound, a.Create)
		if a.Create && a.Op != nil {
			c.addStart(e, a.Op.Name, a)
		}
		return a
	case *ast.Pick:
		return c.pick(n, b)
	case *ast.Wait:
		a := &plan.Wait{Base: b}
		a.Deadline = c.deadline(e, n.For, n.Until)
		return a
	case *ast.Reply:
		return c.reply(n, b)
	case *ast.Invoke:
		return c.invoke(n, b)
	case *ast.Assign:
		return c.assign(n, b)
	case *ast.Flow:
		return c.flow(n, b)
	case *ast.Scope:
		return c.scope(n, b)
	case *ast.ForEach:
		return c.forEach(n, b)
	case *ast.RepeatUntil:
		return c.repeatUntil(n, b)
	case *ast.Rethrow:
		return &plan.Rethrow{Base: b}
	case *ast.ExtensionActivity:
		return c.extensionActivity(n, b)
	case *ast.Validate:
		return c.validateVars(e, b)
	case *ast.Compensate, *ast.CompensateScope:
		return c.compensateActivity(e, b)
	}
	c.errorf(e, "unknown activity <%s>", e.Tag)
	return &plan.Empty{Base: b}
}

// exprOf compiles an expression element (a condition, for, until,
// counter value, branches) as a value.
func (c *compiler) exprOf(x *ast.Expression) *expr.Expr {
	return c.expression(&x.Element, x.Text(), true)
}

// condOf compiles a condition (of an if, elseif, while, repeatUntil, a
// link's transition or join). An XPath 1.0 condition that reads the
// context node, which a BPEL condition does not have, raises
// bpel:subLanguageExecutionFault when evaluated (expr.NeedsContext);
// XPath 2.0 conditions are evaluated without a context item, and
// raise it the same way (XPDY0002).
func (c *compiler) condOf(x *ast.Expression) *expr.Expr {
	ex := c.exprOf(x)
	if ex != nil && ex.X2 == nil {
		ex.NoContext = expr.NeedsContext(ex.Src)
	}
	return ex
}

// activityAfter compiles the activity that follows the <condition> of an
// if, elseif or while.
func (c *compiler) activityAfter(e, cond *ast.Element) plan.Activity {
	for _, ce := range e.Children() {
		if ce == cond || !isBPEL(ce) {
			continue
		}
		switch x := ce.Node().(type) {
		case *ast.Documentation, *ast.ElseIf, *ast.Else, *ast.Targets, *ast.Sources:
			continue
		case *ast.Expression:
			if x.Tag == "condition" {
				continue
			}
		case *ast.Then:
			// The 2.0 drafts' <if><condition/><then>activity</then>,
			// which ODE also read.
			return c.onlyActivity(ce)
		}
		return c.activity(ce)
	}
	c.errorf(e, "<%s> has no activity", e.Tag)
	return &plan.Empty{Base: plan.Base{Pos: c.pos(e)}}
}

// failurePolicy is the invoke's ext:failureHandling: deploy.xml's for the
// partner link overrides the one written in the BPEL.
func (c *compiler) failurePolicy(n *ast.Invoke) *deploy.FailurePolicy {
	if fp := c.dp.Failure[n.AttrOr("partnerLink", "")]; fp != nil {
		return fp
	}
	if fh := n.FailureHandling; fh != nil {
		// deploy reads ODE's element, as it does in deploy.xml
		return deploy.ParseFailure(c.doc, fh.Src, c.errs)
	}
	return nil
}

// callTimeouts takes deploy.xml's orchd:timeout settings of pl, whose
// partnerRole portType must have the operation named.
func (c *compiler) callTimeouts(pl *plan.PartnerLink, dp *deploy.Process) {
	for k, t := range dp.CallTimeout {
		name, op, _ := strings.Cut(k, "/")
		if name != pl.Name {
			continue
		}
		if _, ok := pl.PartnerPT.Ops[op]; op != "" && !ok {
			c.errs.Add(t.Pos, "orchd:timeout", "partnerLink %q has no operation %q", name, op)
			continue
		}
		if c.p.CallTimeouts == nil {
			c.p.CallTimeouts = map[string]time.Duration{}
		}
		c.p.CallTimeouts[k] = t.D
	}
}

// replyTimeouts takes deploy.xml's orchd:replyTimeout settings of pl,
// whose myRole portType must have the operation.
func (c *compiler) replyTimeouts(e *ast.Element, pl *plan.PartnerLink, dp *deploy.Process) {
	for k, d := range dp.ReplyTimeout {
		name, op, _ := strings.Cut(k, "/")
		if name != pl.Name {
			continue
		}
		if o, ok := pl.MyRole.Ops[op]; !ok || o.OneWay() {
			c.errorf(e, "deploy.xml orchd:replyTimeout: partnerLink %q has no request-response operation %q", name, op)
			continue
		}
		if c.p.ReplyTimeouts == nil {
			c.p.ReplyTimeouts = map[plan.ReplyOp]time.Duration{}
		}
		c.p.ReplyTimeouts[plan.ReplyOp{Endpoint: pl.Provided, Op: op}] = d
	}
}
