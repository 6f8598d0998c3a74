package compile

import (
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/plan"
)

// compileParts reads <fromParts> or <toParts> of e; nil when absent.
func (c *compiler) compileParts(e *ast.Element, tag string, md *exchange.MessageDesc) []plan.PartMap {
	pe := e.Child(tag)
	if pe == nil {
		return nil
	}
	attr := "toVariable"
	if tag == "toParts" {
		attr = "fromVariable"
	}
	out := []plan.PartMap{}
	for _, x := range pe.Children() {
		if !isBPEL(x) {
			continue
		}
		pm := plan.PartMap{Part: x.AttrOr("part", "")}
		if md != nil && len(md.Parts) > 0 {
			found := false
			for _, p := range md.Parts {
				found = found || p.Name == pm.Part
			}
			if !found {
				c.errorf(x, "message %s has no part %q", md.Name, pm.Part)
			}
		}
		name := x.AttrOr(attr, "")
		if pm.V = c.LookupVar(name); pm.V == nil {
			c.errorf(x, "undeclared variable %q", name)
			continue
		}
		if pm.V.Msg != nil {
			c.errorf(x, "%s %q is a message variable: a part maps to an element or type variable", attr, name)
			continue
		}
		out = append(out, pm)
	}
	return out
}

// reply lowers a <reply>: the operation of its partner link's myRole, the
// fault or output message, its variable or toParts, its correlations.
func (c *compiler) reply(n *ast.Reply, b plan.Base) plan.Activity {
	e := &n.Element
	a := &plan.Reply{Base: b}
	a.Pl, a.Op = c.partnerOp(e, true)
	a.FaultName, _ = c.qnameAttr(e, "faultName")
	if a.Op != nil {
		if a.Op.OneWay() {
			c.errorf(e, "operation %s is one-way: nothing to reply", a.Op.Name)
		}
		want := a.Op.Output
		if !a.FaultName.IsZero() {
			want = nil
			if f, ok := a.Op.Faults[a.FaultName.Local]; ok {
				want = f
			} else {
				c.errorf(e, "operation %s declares no fault %s", a.Op.Name, a.FaultName.Local)
			}
		}
		a.V = c.optVar(e, "variable", want)
		elementVarParts(&a.V, want, &a.ToParts)
	}
	if a.Op != nil {
		md := a.Op.Output
		if !a.FaultName.IsZero() {
			md = a.Op.Faults[a.FaultName.Local]
		}
		if tp := c.compileParts(e, "toParts", md); tp != nil {
			a.ToParts = tp
		}
	}
	a.Mex = e.AttrOr("messageExchange", "")
	if a.Op != nil {
		a.Ev = c.replyEvent(a.Pl, a.Op, a.Mex)
	}
	if a.Op != nil && a.FaultName.IsZero() {
		a.Corrs = c.correlations(e, nil, a.Op.Output)
	}
	return a
}

// invoke lowers an <invoke>, wrapped in the implicit scope of its in-line
// handlers when it has any.
func (c *compiler) invoke(n *ast.Invoke, b plan.Base) plan.Activity {
	e := &n.Element
	a := &plan.Invoke{Base: b}
	a.Pl, a.Op = c.partnerOp(e, false)
	if a.Op != nil {
		a.In = c.optVar(e, "inputVariable", a.Op.Input)
		elementVarParts(&a.In, a.Op.Input, &a.ToParts)
		if a.Op.Output != nil {
			a.Out = c.optVar(e, "outputVariable", a.Op.Output)
			elementVarParts(&a.Out, a.Op.Output, &a.FromParts)
		}
		a.Partner = a.Pl.Name
		a.Corrs = c.correlations(e, a.Op.Output, a.Op.Input)
		a.Policy = c.failurePolicy(n)
		a.Timeout = c.p.CallTimeout(a.Pl.Name, a.Op.Name)
		if tp := c.compileParts(e, "toParts", a.Op.Input); tp != nil {
			a.ToParts = tp
		}
		if fp := c.compileParts(e, "fromParts", a.Op.Output); fp != nil {
			a.FromParts = fp
		}
		a.ReplySchema = c.replySchema(e, a.Pl, a.Op)
	}
	return c.inlineHandlers(n, a)
}
