package compile

import (
	"strings"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
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
func (c *compiler) withLinks(e *ast.Element, a plan.Activity, dead []*plan.Link) plan.Activity {
	te, se := e.Child("targets"), e.Child("sources")
	if te == nil && se == nil {
		return a
	}
	l := &plan.Linked{Base: plan.Base{Pos: c.pos(e), Name: e.AttrOr("name", "")}, Act: a, Suppress: c.suppressJoinFailure(e)}
	if te != nil {
		tn := te.Node().(*ast.Targets)
		vars := map[string]*expr.Var{}
		for _, t := range tn.Targets {
			if lk := c.linkRef(&t.Element); lk != nil {
				l.Targets = append(l.Targets, lk)
				vars[lk.Name] = lk.V
			}
		}
		if jc := tn.JoinCondition; jc != nil {
			c.scopes = append(c.scopes, vars)
			l.Join = c.condOf(jc)
			c.scopes = c.scopes[:len(c.scopes)-1]
		}
	}
	if se != nil {
		// every link named first, then the conditions, in that order
		var srcs []*ast.Source
		var links []*plan.Link
		for _, s := range se.Node().(*ast.Sources).Sources {
			if lk := c.linkRef(&s.Element); lk != nil {
				srcs, links = append(srcs, s), append(links, lk)
			}
		}
		for i, s := range srcs {
			src := plan.LinkSource{L: links[i]}
			if tc := s.TransitionCondition; tc != nil {
				src.Cond = c.condOf(tc)
			}
			l.Sources = append(l.Sources, src)
			c.addSource(links[i])
			dead = append(dead, links[i])
		}
	}
	l.Dead = dead
	return c.register(l)
}

// linkRef resolves a <target> or <source> to the link of the enclosing
// flows it names; nil, reported, when none declares it.
func (c *compiler) linkRef(x *ast.Element) *plan.Link {
	name := x.AttrOr("linkName", "")
	l := c.findLink(name)
	if l == nil {
		c.errorf(x, "link %q is not declared by an enclosing flow", name)
	}
	return l
}

// suppressJoinFailure is the attribute on e or the nearest ancestor that
// has it (the process default is "no").
func (c *compiler) suppressJoinFailure(e *ast.Element) bool {
	for x := e; x != nil; x = x.Parent() {
		if v := x.AttrOr("suppressJoinFailure", ""); v != "" && isBPEL(x) {
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

func (c *compiler) flow(n *ast.Flow, b plan.Base) plan.Activity {
	e := &n.Element
	a := &plan.Flow{Base: b}
	decl := map[string]*plan.Link{}
	if ls := n.Links; ls != nil {
		for _, link := range ls.Links {
			le := &link.Element
			name := le.AttrOr("name", "")
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
	for _, ce := range e.Children() {
		if !isBPEL(ce) {
			continue
		}
		switch ce.Node().(type) {
		case *ast.Documentation, *ast.Links, *ast.Targets, *ast.Sources:
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
func (c *compiler) scope(n *ast.Scope, b plan.Base) plan.Activity {
	e := &n.Element
	s := &plan.Scope{Base: b, Isolated: e.AttrOr("isolated", "no") == "yes"}
	c.scopes = append(c.scopes, map[string]*expr.Var{})
	defer func() { c.scopes = c.scopes[:len(c.scopes)-1] }()
	var body *ast.Element
	for _, ce := range e.Children() {
		if !isBPEL(ce) {
			continue
		}
		switch x := ce.Node().(type) {
		case *ast.Documentation, *ast.Targets, *ast.Sources, *ast.FaultHandlers, *ast.EventHandlers,
			*ast.CompensationHandler, *ast.TerminationHandler, *ast.MessageExchanges:
		case *ast.Variables:
			inits := len(c.p.Inits)
			for _, ve := range ce.Select("variable") {
				if v := c.declare(ve); v != nil {
					s.Vars = append(s.Vars, v)
				}
			}
			// a scope initializes its own, when it starts
			s.Inits = append(s.Inits, c.p.Inits[inits:]...)
			c.p.Inits = c.p.Inits[:inits]
		case *ast.PartnerLinks:
			for _, pl := range ce.Select("partnerLink") {
				if local := c.partnerLink(pl, c.dp); local != nil {
					s.Plinks = append(s.Plinks, local)
				}
			}
		case *ast.CorrelationSets:
			c.correlationSets(x)
			for _, cs := range ce.Select("correlationSet") {
				s.CorrSets = append(s.CorrSets, cs.AttrOr("name", ""))
			}
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
	if fh := n.FaultHandlers; fh != nil {
		c.enterHandler(s)
		s.Handlers = c.faultHandlers(&fh.Element)
		c.leave()
	}
	if eh := n.EventHandlers; eh != nil {
		c.enterBody(s)
		s.Events = c.eventHandlers(&eh.Element)
		c.leave()
	}
	c.enterHandler(s)
	if ch := n.CompensationHandler; ch != nil {
		s.Comp = c.onlyActivity(&ch.Element)
	}
	if th := n.TerminationHandler; th != nil {
		s.Term = c.onlyActivity(&th.Element)
	}
	c.leave()
	c.finishScope(s, parent)
	return s
}

func (c *compiler) forEach(n *ast.ForEach, b plan.Base) plan.Activity {
	e := &n.Element
	a := &plan.ForEach{Base: b, Parallel: e.AttrOr("parallel", "no") == "yes"}
	if n.StartCounterValue == nil || n.FinalCounterValue == nil {
		c.errorf(e, "<forEach> needs startCounterValue and finalCounterValue")
		return a
	}
	a.Start = c.exprOf(n.StartCounterValue)
	a.Final = c.exprOf(n.FinalCounterValue)
	if cc := n.CompletionCondition; cc != nil {
		if br := cc.Branches; br != nil {
			a.Branches = c.exprOf(br)
			a.SuccessfulOnly = br.AttrOr("successfulBranchesOnly", "no") == "yes"
		}
	}
	name := e.AttrOr("counterName", "")
	if name == "" || strings.Contains(name, ".") {
		c.errorf(e, "<forEach> needs a counterName")
	}
	a.Counter = &expr.Var{Name: name, Simple: "number", Typ: exchange.QName{Space: xmldoc.NSXSD, Local: "unsignedInt"}, Pos: c.pos(e)}
	c.p.Vars = append(c.p.Vars, a.Counter)
	a.Counter.Slot = len(c.p.Vars)
	c.scopes = append(c.scopes, map[string]*expr.Var{name: a.Counter})
	first := len(c.p.Vars)
	if n.Scope == nil {
		c.errorf(e, "the activity of a <forEach> must be a <scope>")
	} else {
		act := c.activity(&n.Scope.Element)
		if sc, ok := act.(*plan.Scope); ok {
			a.Body = sc
		} else {
			c.errorf(&n.Scope.Element, "the scope of a <forEach> cannot be the source or target of a link")
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

func (c *compiler) repeatUntil(n *ast.RepeatUntil, b plan.Base) plan.Activity {
	a := &plan.RepeatUntil{Base: b}
	if n.Condition == nil {
		c.errorf(&n.Element, "<repeatUntil> has no <condition>")
		return a
	}
	a.Cond = c.condOf(n.Condition)
	a.Body = c.activityAfter(&n.Element, &n.Condition.Element)
	return a
}

// inlineHandlers wraps an invoke that has its own catch, catchAll or
// compensationHandler in the implicit scope the spec gives it.
func (c *compiler) inlineHandlers(n *ast.Invoke, inv plan.Activity) plan.Activity {
	e := &n.Element
	var hs []*ast.Element
	for _, ce := range e.Children() {
		switch ce.Node().(type) {
		case *ast.Catch, *ast.CatchAll:
			hs = append(hs, ce)
		}
	}
	ch := n.CompensationHandler
	if len(hs) == 0 && ch == nil {
		return inv
	}
	c.register(inv)
	s := &plan.Scope{Base: plan.Base{Pos: c.pos(e), Name: e.AttrOr("name", "")}, Body: inv}
	parent := c.enclosing()
	c.enterHandler(s)
	if len(hs) > 0 {
		s.Handlers = c.faultHandlerList(hs)
	}
	if ch != nil {
		s.Comp = c.onlyActivity(&ch.Element)
	}
	c.leave()
	c.finishScope(s, parent)
	return s
}

// propertyExpr compiles <from|to variable="v" property="p">: the
// property's location in v through its propertyAlias. For <to> the path
// is relative to the variable's slot.
func (c *compiler) propertyExpr(e *ast.Element) *expr.Expr {
	vn, prop := e.AttrOr("variable", ""), e.AttrOr("property", "")
	v := c.LookupVar(vn)
	if v == nil {
		c.errorf(e, "undeclared variable %q", vn)
		return nil
	}
	ns := expr.XpathNS(e.Namespaces())
	path, err := c.PropertyPath(vn, prop, e.Src, ns)
	if err != nil {
		c.errorf(e, "property %s of variable %s: %v", prop, vn, err)
		return nil
	}
	_, to := e.Node().(*ast.To)
	if to {
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
	if to {
		x.Fast = expr.CompileSimplePath(path, c, ns, true)
	}
	return x
}

// ifActivity lowers an <if>: its condition and branch, each <elseif>'s,
// and the <else>, each with the links leaving it (dead-path elimination).
func (c *compiler) ifActivity(n *ast.If, b plan.Base) plan.Activity {
	e := &n.Element
	a := &plan.IfAct{Base: b}
	if n.Condition == nil {
		c.errorf(e, "<if> has no <condition>")
		return a
	}
	a.Conds = append(a.Conds, c.condOf(n.Condition))
	mark := c.beginSources()
	a.Branches = append(a.Branches, c.activityAfter(e, &n.Condition.Element))
	a.Dead.Add(c.endSources(mark))
	// else-ifs and else in document order, as written
	for _, ce := range e.Children() {
		switch x := ce.Node().(type) {
		case *ast.ElseIf:
			if x.Condition == nil {
				c.errorf(ce, "<elseif> has no <condition>")
				continue
			}
			a.Conds = append(a.Conds, c.condOf(x.Condition))
			mark := c.beginSources()
			a.Branches = append(a.Branches, c.activityAfter(ce, &x.Condition.Element))
			a.Dead.Add(c.endSources(mark))
		case *ast.Else:
			mark := c.beginSources()
			a.Els = c.onlyActivity(ce)
			a.ElseDead = c.endSources(mark)
		}
	}
	a.Dead.Add(a.ElseDead)
	return a
}
