package process

import (
	"github.com/beevik/etree"
)

// enterBody compiles what follows as the body (or event handlers) of s;
// enterHandler as one of its fault, compensation or termination handlers;
// leave ends either.
func (c *compiler) enterBody(s *scope) {
	c.encl, c.hctx = append(c.encl, s), append(c.hctx, nil)
}

func (c *compiler) enterHandler(s *scope) {
	c.encl, c.hctx = append(c.encl, nil), append(c.hctx, s)
}

func (c *compiler) leave() {
	c.encl, c.hctx = c.encl[:len(c.encl)-1], c.hctx[:len(c.hctx)-1]
}

// enclosing is the scope whose body is being compiled, or nil inside a
// handler.
func (c *compiler) enclosing() *scope {
	if n := len(c.encl); n > 0 {
		return c.encl[n-1]
	}
	return nil
}

// finishScope decides, once s and its handlers are compiled, what its
// completion records and what its fault and termination run, and tells
// its enclosing scope (parent; nil inside a handler).
func (c *compiler) finishScope(s, parent *scope) {
	if s.snapVars == nil {
		s.snapVars = s.vars
	}
	if !s.isProcess {
		s.compensable = s.comp != nil || s.hasCompKids
		s.termNeeded = s.term != nil || s.hasCompKids
	}
	s.defaultFH = s.hasCompKids || s.subTerm
	if s.compensable || s.termNeeded || s.defaultFH {
		c.compSupport()
	}
	if s.compensable {
		s.compAct = &handlerRun{base: s.base, sc: s}
		c.register(s.compAct)
	}
	if s.termNeeded {
		s.termAct = &handlerRun{base: s.base, sc: s, term: true}
		c.register(s.termAct)
	}
	if parent == nil {
		return
	}
	parent.children = append(parent.children, s)
	parent.hasCompKids = parent.hasCompKids || s.compensable
	parent.subTerm = parent.subTerm || s.termNeeded || s.subTerm
}

// compSupport registers, once, the activities a process with
// compensation runs (only then: other processes keep their activity
// numbers).
func (c *compiler) compSupport() *compSupport {
	if c.p.comp != nil {
		return c.p.comp
	}
	b := base{pos: c.pos(c.doc.Root)}
	cs := &compSupport{}
	cs.compAll = c.register(&compensate{base: b})
	rt := c.register(&rethrow{base: b})
	cs.defaultFH = c.register(&sequence{base: b, children: []activity{cs.compAll, rt}})
	cs.terminator = c.register(&terminator{base: b})
	c.p.comp = cs
	return cs
}

// compensateActivity compiles <compensate/> and <compensateScope>: only
// inside a fault, compensation or termination handler, and a target must
// name a scope (or an invoke with handlers) directly enclosed by the
// handler's scope.
func (c *compiler) compensateActivity(e *etree.Element, b base) activity {
	var owner *scope
	if n := len(c.hctx); n > 0 {
		owner = c.hctx[n-1]
	}
	if owner == nil {
		c.errorf(e, "<%s> may only be used in a faultHandler, compensationHandler or terminationHandler", e.Tag)
		return &empty{base: b}
	}
	a := &compensate{base: b}
	if e.Tag == "compensateScope" {
		name := e.SelectAttrValue("target", "")
		for _, s := range owner.children {
			if name != "" && s.name == name {
				a.target = s
			}
		}
		if a.target == nil {
			c.errorf(e, "target %q is not a scope directly enclosed by the scope this handler belongs to", name)
		}
	}
	return a
}
