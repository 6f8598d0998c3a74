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
