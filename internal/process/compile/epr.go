package compile

import (
	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/plan"
)

// fromPartnerLink compiles <from partnerLink="pl" endpointReference="...">.
func (c *compiler) fromPartnerLink(e *ast.Element) *plan.EprSpec {
	pl := c.namedPartnerLink(e)
	if pl == nil {
		return nil
	}
	name := pl.Name
	switch role := e.AttrOr("endpointReference", ""); role {
	case "myRole":
		if pl.Provided == nil {
			c.errorf(e, "partnerLink %q has no myRole to take an endpoint reference from", name)
			return nil
		}
		return &plan.EprSpec{Pl: pl, MyRole: true}
	case "partnerRole":
		if pl.PartnerPT == nil {
			c.errorf(e, "partnerLink %q has no partnerRole to take an endpoint reference from", name)
			return nil
		}
		return &plan.EprSpec{Pl: pl}
	default:
		c.errorf(e, "<from partnerLink=%q> needs endpointReference=\"myRole\" or \"partnerRole\", not %q", name, role)
		return nil
	}
}

// toPartnerLink compiles <to partnerLink="pl">.
func (c *compiler) toPartnerLink(e *ast.Element) *plan.EprSpec {
	pl := c.namedPartnerLink(e)
	if pl == nil {
		return nil
	}
	if pl.PartnerPT == nil {
		c.errorf(e, "partnerLink %q has no partnerRole to assign an endpoint reference to", pl.Name)
		return nil
	}
	return &plan.EprSpec{Pl: pl}
}

// namedPartnerLink is the partner link e's partnerLink attribute names.
func (c *compiler) namedPartnerLink(e *ast.Element) *plan.PartnerLink {
	name := e.AttrOr("partnerLink", "")
	pl, ok := c.p.Plinks[name]
	if !ok {
		c.errorf(e, "unknown partnerLink %q", name)
		return nil
	}
	return pl
}
