package compile

import (
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/bpel"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
)

// register numbers an activity built by the compiler rather than read
// from an element (a checkpoint names frames by number).
func (c *compiler) register(a plan.Activity) plan.Activity {
	c.p.Acts = append(c.p.Acts, a)
	c.p.ActParent = append(c.p.ActParent, -1)
	a.SetID(len(c.p.Acts) - 1)
	return a
}

// adopt makes a the parent, in the process outline, of the activities
// registered since first that have none yet: activities are registered
// after their children, so those are its direct children (the nested
// ones were adopted by their own parents).
func (c *compiler) adopt(first int, a plan.Activity) {
	for i := first; i < a.ID(); i++ {
		if c.p.ActParent[i] < 0 {
			c.p.ActParent[i] = int32(a.ID())
		}
	}
}

// beginSources starts collecting the links whose source is compiled from
// now on; endSources returns them. addSource adds a link to every open
// collection, so enclosing constructs see the links of nested ones.
func (c *compiler) beginSources() int {
	c.collect = append(c.collect, nil)
	return len(c.collect) - 1
}

func (c *compiler) endSources(mark int) []*plan.Link {
	got := c.collect[mark]
	c.collect = c.collect[:mark]
	return got
}

func (c *compiler) addSource(l *plan.Link) {
	for i := range c.collect {
		c.collect[i] = append(c.collect[i], l)
	}
}

func (c *compiler) findLink(name string) *plan.Link {
	for i := len(c.links) - 1; i >= 0; i-- {
		if l, ok := c.links[i][name]; ok {
			return l
		}
	}
	return nil
}

// withLinks wraps a, compiled from e, when e is the target or source of
// links.
func (c *compiler) withLinks(e *etree.Element, a plan.Activity, dead []*plan.Link) plan.Activity {
	te, se := bpelChild(e, "targets"), bpelChild(e, "sources")
	if te == nil && se == nil {
		return a
	}
	l := &plan.Linked{Base: plan.Base{Pos: c.pos(e), Name: e.SelectAttrValue("name", "")}, Act: a, Suppress: c.suppressJoinFailure(e)}
	if te != nil {
		vars := map[string]*expr.Var{}
		for _, t := range c.linkRefs(te, "target") {
			l.Targets = append(l.Targets, t.l)
			vars[t.l.Name] = t.l.V
		}
		if jc := bpelChild(te, "joinCondition"); jc != nil {
			c.scopes = append(c.scopes, vars)
			l.Join = c.expression(jc, jc.Text(), true)
			c.scopes = c.scopes[:len(c.scopes)-1]
		}
	}
	if se != nil {
		for _, s := range c.linkRefs(se, "source") {
			src := plan.LinkSource{L: s.l}
			if tc := bpelChild(s.e, "transitionCondition"); tc != nil {
				src.Cond = c.expression(tc, tc.Text(), true)
			}
			l.Sources = append(l.Sources, src)
			c.addSource(s.l)
			dead = append(dead, s.l)
		}
	}
	l.Dead = dead
	return c.register(l)
}

// linkRef is a <target> or <source> and the link it names.
type linkRef struct {
	e *etree.Element
	l *plan.Link
}

// linkRefs resolves the tag children (target or source) of e to the links
// of the enclosing flows they name.
func (c *compiler) linkRefs(e *etree.Element, tag string) []linkRef {
	var out []linkRef
	for _, x := range e.ChildElements() {
		if !isBPEL(x) || x.Tag != tag {
			continue
		}
		name := x.SelectAttrValue("linkName", "")
		if l := c.findLink(name); l != nil {
			out = append(out, linkRef{e: x, l: l})
		} else {
			c.errorf(x, "link %q is not declared by an enclosing flow", name)
		}
	}
	return out
}

// suppressJoinFailure is the attribute on e or the nearest ancestor that
// has it (the process default is "no").
func (c *compiler) suppressJoinFailure(e *etree.Element) bool {
	for x := e; x != nil; x = x.Parent() {
		if v := x.SelectAttrValue("suppressJoinFailure", ""); v != "" && isBPEL(x) {
			return v == "yes"
		}
	}
	return false
}

// linkVar declares the hidden variable holding a link's status.
func (c *compiler) linkVar(name string) *expr.Var {
	v := &expr.Var{Name: "link:" + name, Simple: "number"}
	c.p.Vars = append(c.p.Vars, v)
	v.Slot = len(c.p.Vars)
	return v
}

func (c *compiler) flow(e *etree.Element, b plan.Base) plan.Activity {
	a := &plan.Flow{Base: b}
	decl := map[string]*plan.Link{}
	if ls := bpelChild(e, "links"); ls != nil {
		for _, le := range ls.ChildElements() {
			if !isBPEL(le) || le.Tag != "link" {
				continue
			}
			name := le.SelectAttrValue("name", "")
			if _, dup := decl[name]; dup || name == "" {
				c.errorf(le, "link name %q is empty or declared twice", name)
				continue
			}
			l := &plan.Link{Name: name, V: c.linkVar(name)}
			decl[name] = l
			a.Links = append(a.Links, l)
		}
	}
	c.links = append(c.links, decl)
	for _, ce := range e.ChildElements() {
		if !isBPEL(ce) {
			continue
		}
		switch ce.Tag {
		case "documentation", "links", "targets", "sources":
			continue
		}
		a.Children = append(a.Children, c.activity(ce))
	}
	c.links = c.links[:len(c.links)-1]
	if len(a.Children) == 0 {
		c.errorf(e, "<flow> holds no activity")
	}
	return a
}

// scope compiles a <scope>: its declarations live in a new lexical scope.
func (c *compiler) scope(e *etree.Element, b plan.Base) plan.Activity {
	s := &plan.Scope{Base: b, Isolated: e.SelectAttrValue("isolated", "no") == "yes"}
	c.scopes = append(c.scopes, map[string]*expr.Var{})
	defer func() { c.scopes = c.scopes[:len(c.scopes)-1] }()
	var body *etree.Element
	for _, ce := range e.ChildElements() {
		if !isBPEL(ce) {
			continue
		}
		switch ce.Tag {
		case "documentation", "targets", "sources", "faultHandlers", "eventHandlers", "compensationHandler", "terminationHandler":
		case "variables":
			inits := len(c.p.Inits)
			for _, ve := range ce.SelectElements("variable") {
				if v := c.declare(ve); v != nil {
					s.Vars = append(s.Vars, v)
				}
			}
			// a scope initializes its own, when it starts
			s.Inits = append(s.Inits, c.p.Inits[inits:]...)
			c.p.Inits = c.p.Inits[:inits]
		case "partnerLinks":
			for _, pl := range ce.SelectElements("partnerLink") {
				if local := c.partnerLink(pl, c.dp); local != nil {
					s.Plinks = append(s.Plinks, local)
				}
			}
		case "correlationSets":
			c.correlationSets(ce)
			for _, cs := range ce.SelectElements("correlationSet") {
				s.CorrSets = append(s.CorrSets, cs.SelectAttrValue("name", ""))
			}
		case "messageExchanges":
		default:
			if body != nil {
				c.errorf(ce, "a scope holds exactly one activity; found a second one")
				continue
			}
			body = ce
		}
	}
	if body == nil {
		c.errorf(e, "<scope> holds no activity")
		s.Body = c.register(&plan.Empty{Base: b})
		return s
	}
	parent := c.enclosing()
	mark := c.beginSources()
	c.enterBody(s)
	s.Body = c.activity(body)
	c.leave()
	s.Sources = c.endSources(mark)
	if fh := bpelChild(e, "faultHandlers"); fh != nil {
		c.enterHandler(s)
		s.Handlers = c.faultHandlers(fh)
		c.leave()
	}
	if eh := bpelChild(e, "eventHandlers"); eh != nil {
		c.enterBody(s)
		s.Events = c.eventHandlers(eh)
		c.leave()
	}
	c.enterHandler(s)
	if ch := bpelChild(e, "compensationHandler"); ch != nil {
		s.Comp = c.onlyActivity(ch)
	}
	if th := bpelChild(e, "terminationHandler"); th != nil {
		s.Term = c.onlyActivity(th)
	}
	c.leave()
	c.finishScope(s, parent)
	return s
}

func (c *compiler) forEach(e *etree.Element, b plan.Base) plan.Activity {
	a := &plan.ForEach{Base: b, Parallel: e.SelectAttrValue("parallel", "no") == "yes"}
	se, fe := bpelChild(e, "startCounterValue"), bpelChild(e, "finalCounterValue")
	if se == nil || fe == nil {
		c.errorf(e, "<forEach> needs startCounterValue and finalCounterValue")
		return a
	}
	a.Start = c.expression(se, se.Text(), true)
	a.Final = c.expression(fe, fe.Text(), true)
	if cc := bpelChild(e, "completionCondition"); cc != nil {
		if br := bpelChild(cc, "branches"); br != nil {
			a.Branches = c.expression(br, br.Text(), true)
			a.SuccessfulOnly = br.SelectAttrValue("successfulBranchesOnly", "no") == "yes"
		}
	}
	name := e.SelectAttrValue("counterName", "")
	if name == "" || strings.Contains(name, ".") {
		c.errorf(e, "<forEach> needs a counterName")
	}
	a.Counter = &expr.Var{Name: name, Simple: "number", Typ: exchange.QName{Space: bpel.NSXSD, Local: "unsignedInt"}, Pos: c.pos(e)}
	c.p.Vars = append(c.p.Vars, a.Counter)
	a.Counter.Slot = len(c.p.Vars)
	c.scopes = append(c.scopes, map[string]*expr.Var{name: a.Counter})
	first := len(c.p.Vars)
	body := bpelChild(e, "scope")
	if body == nil {
		c.errorf(e, "the activity of a <forEach> must be a <scope>")
	} else {
		act := c.activity(body)
		if sc, ok := act.(*plan.Scope); ok {
			a.Body = sc
		} else {
			c.errorf(body, "the scope of a <forEach> cannot be the source or target of a link")
		}
	}
	c.scopes = c.scopes[:len(c.scopes)-1]
	a.PrivSlots = append(a.PrivSlots, c.p.Vars[first:]...)
	if a.Body != nil && a.Body.Compensable {
		// The counter is a variable of the scope (11.7): its record keeps it.
		a.Body.SnapVars = append([]*expr.Var{a.Counter}, a.Body.Vars...)
	}
	if a.Body == nil {
		a.Body = &plan.Scope{Base: b, Body: &plan.Empty{Base: b}}
	}
	return a
}

func (c *compiler) repeatUntil(e *etree.Element, b plan.Base) plan.Activity {
	a := &plan.RepeatUntil{Base: b}
	cond := bpelChild(e, "condition")
	if cond == nil {
		c.errorf(e, "<repeatUntil> has no <condition>")
		return a
	}
	a.Cond = c.expression(cond, cond.Text(), true)
	a.Body = c.activityAfter(e, cond)
	return a
}

// inlineHandlers wraps an invoke that has its own catch, catchAll or
// compensationHandler in the implicit scope the spec gives it.
func (c *compiler) inlineHandlers(e *etree.Element, inv plan.Activity) plan.Activity {
	var hs []*etree.Element
	for _, ce := range e.ChildElements() {
		if isBPEL(ce) && (ce.Tag == "catch" || ce.Tag == "catchAll") {
			hs = append(hs, ce)
		}
	}
	ch := bpelChild(e, "compensationHandler")
	if len(hs) == 0 && ch == nil {
		return inv
	}
	c.register(inv)
	s := &plan.Scope{Base: plan.Base{Pos: c.pos(e), Name: e.SelectAttrValue("name", "")}, Body: inv}
	parent := c.enclosing()
	c.enterHandler(s)
	if len(hs) > 0 {
		s.Handlers = c.faultHandlerList(hs)
	}
	if ch != nil {
		s.Comp = c.onlyActivity(ch)
	}
	c.leave()
	c.finishScope(s, parent)
	return s
}

// propertyExpr compiles <from|to variable="v" property="p">: the
// property's location in v through its propertyAlias. For <to> the path
// is relative to the variable's slot.
func (c *compiler) propertyExpr(e *etree.Element) *expr.Expr {
	vn, prop := e.SelectAttrValue("variable", ""), e.SelectAttrValue("property", "")
	v := c.LookupVar(vn)
	if v == nil {
		c.errorf(e, "undeclared variable %q", vn)
		return nil
	}
	ns := expr.XpathNS(bpel.Namespaces(e))
	path, err := c.PropertyPath(vn, prop, e, ns)
	if err != nil {
		c.errorf(e, "property %s of variable %s: %v", prop, vn, err)
		return nil
	}
	if e.Tag == "to" {
		// Relative to the node the runtime starts a <to> query from: a
		// message variable's slot, an element variable's element.
		base := "/" + v.SlotName()
		if v.Msg == nil && !v.Elem.IsZero() {
			base += "/*"
		}
		path = strings.TrimPrefix(strings.TrimPrefix(path, base), "/")
		if path == "" {
			path = "."
		}
	}
	x, err := expr.NewExpr(path, path, ns)
	if err != nil {
		c.errorf(e, "property %s of variable %s: %v", prop, vn, err)
		return nil
	}
	if e.Tag == "to" {
		x.Fast = expr.CompileSimplePath(path, c, ns, true)
	}
	return x
}
