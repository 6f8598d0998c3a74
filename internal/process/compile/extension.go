package compile

import (
	"errors"

	"github.com/beevik/etree"
	"github.com/orchd/orchd/internal/process/plan"
)

// compileExtension compiles el with the registered implementation of its
// namespace; kind is "activity" or "assign operation". ok is false, with
// the problem reported, when nothing runs it; a nil action with ok true
// means no implementation is registered, or it does not know el and the
// namespace is optional: el may be skipped.
func (c *compiler) compileExtension(el *etree.Element, kind string) (act plan.ExtensionAction, ok bool) {
	ns := el.NamespaceURI()
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
		c.errorf(el, "extension %s has no %ss", ns, kind)
		return nil, false
	}
	if err != nil {
		if declared, must := c.extensionKnown(ns); errors.Is(err, ErrUnknownExtensionElement) && declared && !must {
			return nil, true
		}
		c.errorf(el, "%w", err)
		return nil, false
	}
	if x.bad {
		return nil, false
	}
	if act == nil {
		c.errorf(el, "extension %s compiled %s <%s> to nothing", ns, kind, el.Tag)
		return nil, false
	}
	c.p.Extensions = appendOnce(c.p.Extensions, ns)
	return act, true
}
