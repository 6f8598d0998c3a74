package compile

import (
	"errors"

	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/plan"
)

// compileExtension compiles el with the registered implementation of its
// namespace; kind is "activity" or "assign operation". ok is false, with
// the problem reported, when nothing runs it; a nil action with ok true
// means no implementation is registered, or it does not know el and the
// namespace is optional: el may be skipped.
func (c *compiler) compileExtension(e *ast.Element, kind string) (act plan.ExtensionAction, ok bool) {
	ns, el := e.Space, e.Src
	impl, registered := c.ext[ns]
	if !registered {
		return nil, true
	}
	x := &extCompiler{c: c, el: el}
	c.extResolved = nil
	var err error
	switch {
	case kind == "activity" && impl.Activities != nil:
		act, err = impl.Activities.CompileActivity(el, x)
	case kind == "assign operation" && impl.AssignOperations != nil:
		act, err = impl.AssignOperations.CompileAssignOperation(el, x)
	default:
		c.errorf(e, "extension %s has no %ss", ns, kind)
		return nil, false
	}
	if err != nil {
		if declared, must := c.extensionKnown(ns); errors.Is(err, ErrUnknownExtensionElement) && declared && !must {
			return nil, true
		}
		c.errorf(e, "%w", err)
		return nil, false
	}
	if x.bad {
		return nil, false
	}
	if act == nil {
		c.errorf(e, "extension %s compiled %s <%s> to nothing", ns, kind, e.Tag)
		return nil, false
	}
	c.p.Extensions = appendOnce(c.p.Extensions, ns)
	return act, true
}
