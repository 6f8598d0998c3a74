package process

import (
	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// compileParts reads <fromParts> or <toParts> of e; nil when absent.
func (c *compiler) compileParts(e *etree.Element, tag string, md *exchange.MessageDesc) []partMap {
	pe := bpelChild(e, tag)
	if pe == nil {
		return nil
	}
	attr := "toVariable"
	if tag == "toParts" {
		attr = "fromVariable"
	}
	out := []partMap{}
	for _, x := range pe.ChildElements() {
		if !isBPEL(x) {
			continue
		}
		pm := partMap{part: x.SelectAttrValue("part", "")}
		if md != nil && len(md.Parts) > 0 {
			found := false
			for _, p := range md.Parts {
				found = found || p.Name == pm.part
			}
			if !found {
				c.errorf(x, "message %s has no part %q", md.Name, pm.part)
			}
		}
		name := x.SelectAttrValue(attr, "")
		if pm.v = c.lookupVar(name); pm.v == nil {
			c.errorf(x, "undeclared variable %q", name)
			continue
		}
		if pm.v.msg != nil {
			c.errorf(x, "%s %q is a message variable: a part maps to an element or type variable", attr, name)
			continue
		}
		out = append(out, pm)
	}
	return out
}
