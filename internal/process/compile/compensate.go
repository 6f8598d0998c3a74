package compile

import (
	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/plan"
)

// enterBody compiles what follows as the body (or event handlers) of s;
// enterHandler as one of its fault, compensation or termination handlers;
// leave ends either.
func (c *compiler) enterBody(s *plan.Scope) {
	c.encl, c.hctx = append(c.encl, s), append(c.hctx, nil)
}

func (c *compiler) enterHandler(s *plan.Scope) {
	c.encl, c.hctx = append(c.encl, nil), append(c.hctx, s)
}

func (c *compiler) leave() {
	c.encl, c.hctx = c.encl[:len(c.encl)-1], c.hctx[:len(c.hctx)-1]
}

// enclosing is the scope whose body is being compiled, or nil inside a
// handler.
func (c *compiler) enclosing() *plan.Scope {
	if n := len(c.encl); n > 0 {
		return c.encl[n-1]
	}
	return nil
}

// finishScope decides, once s and its handlers are compiled, what its
// completion records and what its fault and termination run, and tells
// its enclosing scope (parent; nil inside a handler).
func (c *compiler) finishScope(s, parent *plan.Scope) {
	if s.SnapVars == nil {
		s.SnapVars = s.Vars
	}
	if !s.IsProcess {
		s.Compensable = s.Comp != nil || s.HasCompKids
		s.TermNeeded = s.Term != nil || s.HasCompKids
	}
	s.DefaultFH = s.HasCompKids || s.SubTerm
	if s.Compensable || s.TermNeeded || s.DefaultFH {
		c.compSupport()
	}
	if s.Compensable {
		s.CompAct = &plan.HandlerRun{Base: s.Base, Sc: s}
		c.register(s.CompAct)
	}
	if s.TermNeeded {
		s.TermAct = &plan.HandlerRun{Base: s.Base, Sc: s, Term: true}
		c.register(s.TermAct)
	}
	if parent == nil {
		return
	}
	parent.Children = append(parent.Children, s)
	parent.HasCompKids = parent.HasCompKids || s.Compensable
	parent.SubTerm = parent.SubTerm || s.TermNeeded || s.SubTerm
}

// compSupport registers, once, the activities a process with
// compensation runs (only then: other processes keep their activity
// numbers).
func (c *compiler) compSupport() *plan.CompSupport {
	if c.p.Comp != nil {
		return c.p.Comp
	}
	b := plan.Base{Pos: c.root.Pos}
	cs := &plan.CompSupport{}
	cs.CompAll = c.register(&plan.Compensate{Base: b})
	rt := c.register(&plan.Rethrow{Base: b})
	cs.DefaultFH = c.register(&plan.Sequence{Base: b, Children: []plan.Activity{cs.CompAll, rt}})
	cs.Terminator = c.register(&plan.Terminator{Base: b})
	c.p.Comp = cs
	return cs
}

// compensateActivity compiles <compensate/> and <compensateScope>: only
// inside a fault, compensation or termination handler, and a target must
// name a scope (or an invoke with handlers) directly enclosed by the
// handler's scope.
func (c *compiler) compensateActivity(e *ast.Element, b plan.Base) plan.Activity {
	var owner *plan.Scope
	if n := len(c.hctx); n > 0 {
		owner = c.hctx[n-1]
	}
	if owner == nil {
		c.errorf(e, "<%s> may only be used in a faultHandler, compensationHandler or terminationHandler", e.Tag)
		return &plan.Empty{Base: b}
	}
	a := &plan.Compensate{Base: b}
	if _, ok := e.Node().(*ast.CompensateScope); ok {
		name := e.AttrOr("target", "")
		for _, s := range owner.Children {
			if name != "" && s.Name == name {
				a.Target = s
			}
		}
		if a.Target == nil {
			c.errorf(e, "target %q is not a scope directly enclosed by the scope this handler belongs to", name)
		}
	}
	return a
}
