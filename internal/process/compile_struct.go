package process

import (
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/bpel"
)

// register numbers an activity built by the compiler rather than read
// from an element (a checkpoint names frames by number).
func (c *compiler) register(a activity) activity {
	c.p.acts = append(c.p.acts, a)
	c.p.actParent = append(c.p.actParent, -1)
	a.setID(len(c.p.acts) - 1)
	return a
}

// adopt makes a the parent, in the process outline, of the activities
// registered since first that have none yet: activities are registered
// after their children, so those are its direct children (the nested
// ones were adopted by their own parents).
func (c *compiler) adopt(first int, a activity) {
	for i := first; i < a.id(); i++ {
		if c.p.actParent[i] < 0 {
			c.p.actParent[i] = int32(a.id())
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

func (c *compiler) endSources(mark int) []*link {
	got := c.collect[mark]
	c.collect = c.collect[:mark]
	return got
}

func (c *compiler) addSource(l *link) {
	for i := range c.collect {
		c.collect[i] = append(c.collect[i], l)
	}
}

func (c *compiler) findLink(name string) *link {
	for i := len(c.links) - 1; i >= 0; i-- {
		if l, ok := c.links[i][name]; ok {
			return l
		}
	}
	return nil
}

// withLinks wraps a, compiled from e, when e is the target or source of
// links.
func (c *compiler) withLinks(e *etree.Element, a activity, dead []*link) activity {
	te, se := bpelChild(e, "targets"), bpelChild(e, "sources")
	if te == nil && se == nil {
		return a
	}
	l := &linked{base: base{pos: c.pos(e), name: e.SelectAttrValue("name", "")}, act: a, suppress: c.suppressJoinFailure(e)}
	if te != nil {
		vars := map[string]*variable{}
		for _, t := range c.linkRefs(te, "target") {
			l.targets = append(l.targets, t.l)
			vars[t.l.name] = t.l.v
		}
		if jc := bpelChild(te, "joinCondition"); jc != nil {
			c.scopes = append(c.scopes, vars)
			l.join = c.expression(jc, jc.Text(), true)
			c.scopes = c.scopes[:len(c.scopes)-1]
		}
	}
	if se != nil {
		for _, s := range c.linkRefs(se, "source") {
			src := linkSource{l: s.l}
			if tc := bpelChild(s.e, "transitionCondition"); tc != nil {
				src.cond = c.expression(tc, tc.Text(), true)
			}
			l.sources = append(l.sources, src)
			c.addSource(s.l)
			dead = append(dead, s.l)
		}
	}
	l.dead = dead
	return c.register(l)
}

// linkRef is a <target> or <source> and the link it names.
type linkRef struct {
	e *etree.Element
	l *link
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
func (c *compiler) linkVar(name string) *variable {
	v := &variable{name: "link:" + name, simple: "number"}
	c.p.vars = append(c.p.vars, v)
	v.slot = len(c.p.vars)
	return v
}

func (c *compiler) flow(e *etree.Element, b base) activity {
	a := &flow{base: b}
	decl := map[string]*link{}
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
			l := &link{name: name, v: c.linkVar(name)}
			decl[name] = l
			a.links = append(a.links, l)
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
		a.children = append(a.children, c.activity(ce))
	}
	c.links = c.links[:len(c.links)-1]
	if len(a.children) == 0 {
		c.errorf(e, "<flow> holds no activity")
	}
	return a
}

// scope compiles a <scope>: its declarations live in a new lexical scope.
func (c *compiler) scope(e *etree.Element, b base) activity {
	s := &scope{base: b, isolated: e.SelectAttrValue("isolated", "no") == "yes"}
	c.scopes = append(c.scopes, map[string]*variable{})
	defer func() { c.scopes = c.scopes[:len(c.scopes)-1] }()
	var body *etree.Element
	for _, ce := range e.ChildElements() {
		if !isBPEL(ce) {
			continue
		}
		switch ce.Tag {
		case "documentation", "targets", "sources", "faultHandlers", "eventHandlers", "compensationHandler", "terminationHandler":
		case "variables":
			inits := len(c.p.inits)
			for _, ve := range ce.SelectElements("variable") {
				if v := c.declare(ve); v != nil {
					s.vars = append(s.vars, v)
				}
			}
			c.p.inits = c.p.inits[:inits] // a scope initializes its own, when it starts
		case "partnerLinks":
			for _, pl := range ce.SelectElements("partnerLink") {
				if local := c.partnerLink(pl, c.dp); local != nil {
					s.plinks = append(s.plinks, local)
				}
			}
		case "correlationSets":
			c.correlationSets(ce)
			for _, cs := range ce.SelectElements("correlationSet") {
				s.corrSets = append(s.corrSets, cs.SelectAttrValue("name", ""))
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
		s.body = c.register(&empty{base: b})
		return s
	}
	parent := c.enclosing()
	mark := c.beginSources()
	c.enterBody(s)
	s.body = c.activity(body)
	c.leave()
	s.sources = c.endSources(mark)
	if fh := bpelChild(e, "faultHandlers"); fh != nil {
		c.enterHandler(s)
		s.handlers = c.faultHandlers(fh)
		c.leave()
	}
	if eh := bpelChild(e, "eventHandlers"); eh != nil {
		c.enterBody(s)
		s.events = c.eventHandlers(eh)
		c.leave()
	}
	c.enterHandler(s)
	if ch := bpelChild(e, "compensationHandler"); ch != nil {
		s.comp = c.onlyActivity(ch)
	}
	if th := bpelChild(e, "terminationHandler"); th != nil {
		s.term = c.onlyActivity(th)
	}
	c.leave()
	c.finishScope(s, parent)
	return s
}

func (c *compiler) forEach(e *etree.Element, b base) activity {
	a := &forEach{base: b, parallel: e.SelectAttrValue("parallel", "no") == "yes"}
	se, fe := bpelChild(e, "startCounterValue"), bpelChild(e, "finalCounterValue")
	if se == nil || fe == nil {
		c.errorf(e, "<forEach> needs startCounterValue and finalCounterValue")
		return a
	}
	a.start = c.expression(se, se.Text(), true)
	a.final = c.expression(fe, fe.Text(), true)
	if cc := bpelChild(e, "completionCondition"); cc != nil {
		if br := bpelChild(cc, "branches"); br != nil {
			a.branches = c.expression(br, br.Text(), true)
			a.successfulOnly = br.SelectAttrValue("successfulBranchesOnly", "no") == "yes"
		}
	}
	name := e.SelectAttrValue("counterName", "")
	if name == "" || strings.Contains(name, ".") {
		c.errorf(e, "<forEach> needs a counterName")
	}
	a.counter = &variable{name: name, simple: "number", typ: qname{Space: bpel.NSXSD, Local: "unsignedInt"}, pos: c.pos(e)}
	c.p.vars = append(c.p.vars, a.counter)
	a.counter.slot = len(c.p.vars)
	c.scopes = append(c.scopes, map[string]*variable{name: a.counter})
	first := len(c.p.vars)
	body := bpelChild(e, "scope")
	if body == nil {
		c.errorf(e, "the activity of a <forEach> must be a <scope>")
	} else {
		act := c.activity(body)
		if sc, ok := act.(*scope); ok {
			a.body = sc
		} else {
			c.errorf(body, "the scope of a <forEach> cannot be the source or target of a link")
		}
	}
	c.scopes = c.scopes[:len(c.scopes)-1]
	a.privSlots = append(a.privSlots, c.p.vars[first:]...)
	if a.body != nil && a.body.compensable {
		// The counter is a variable of the scope (11.7): its record keeps it.
		a.body.snapVars = append([]*variable{a.counter}, a.body.vars...)
	}
	if a.body == nil {
		a.body = &scope{base: b, body: &empty{base: b}}
	}
	return a
}

func (c *compiler) repeatUntil(e *etree.Element, b base) activity {
	a := &repeatUntil{base: b}
	cond := bpelChild(e, "condition")
	if cond == nil {
		c.errorf(e, "<repeatUntil> has no <condition>")
		return a
	}
	a.cond = c.expression(cond, cond.Text(), true)
	a.body = c.activityAfter(e, cond)
	return a
}

// inlineHandlers wraps an invoke that has its own catch, catchAll or
// compensationHandler in the implicit scope the spec gives it.
func (c *compiler) inlineHandlers(e *etree.Element, inv activity) activity {
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
	s := &scope{base: base{pos: c.pos(e), name: e.SelectAttrValue("name", "")}, body: inv}
	parent := c.enclosing()
	c.enterHandler(s)
	if len(hs) > 0 {
		s.handlers = c.faultHandlerList(hs)
	}
	if ch != nil {
		s.comp = c.onlyActivity(ch)
	}
	c.leave()
	c.finishScope(s, parent)
	return s
}

// propertyExpr compiles <from|to variable="v" property="p">: the
// property's location in v through its propertyAlias. For <to> the path
// is relative to the variable's slot.
func (c *compiler) propertyExpr(e *etree.Element) *expr {
	vn, prop := e.SelectAttrValue("variable", ""), e.SelectAttrValue("property", "")
	v := c.lookupVar(vn)
	if v == nil {
		c.errorf(e, "undeclared variable %q", vn)
		return nil
	}
	ns := xpathNS(bpel.Namespaces(e))
	path, err := c.propertyPath(vn, prop, e, ns)
	if err != nil {
		c.errorf(e, "property %s of variable %s: %v", prop, vn, err)
		return nil
	}
	if e.Tag == "to" {
		path = strings.TrimPrefix(strings.TrimPrefix(path, "/"+v.slotName()), "/")
		if path == "" {
			path = "."
		}
	}
	x, err := newExpr(path, path, ns)
	if err != nil {
		c.errorf(e, "property %s of variable %s: %v", prop, vn, err)
		return nil
	}
	if e.Tag == "to" {
		x.fast = compileSimplePath(path, c, ns, true)
	}
	return x
}
