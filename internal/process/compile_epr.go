package process

import (
	"github.com/beevik/etree"
)

// fromPartnerLink compiles <from partnerLink="pl" endpointReference="...">.
func (c *compiler) fromPartnerLink(e *etree.Element) *eprSpec {
	pl := c.namedPartnerLink(e)
	if pl == nil {
		return nil
	}
	name := pl.name
	switch role := e.SelectAttrValue("endpointReference", ""); role {
	case "myRole":
		if pl.provided == nil {
			c.errorf(e, "partnerLink %q has no myRole to take an endpoint reference from", name)
			return nil
		}
		return &eprSpec{pl: pl, myRole: true}
	case "partnerRole":
		if pl.partnerPT == nil {
			c.errorf(e, "partnerLink %q has no partnerRole to take an endpoint reference from", name)
			return nil
		}
		return &eprSpec{pl: pl}
	default:
		c.errorf(e, "<from partnerLink=%q> needs endpointReference=\"myRole\" or \"partnerRole\", not %q", name, role)
		return nil
	}
}

// toPartnerLink compiles <to partnerLink="pl">.
func (c *compiler) toPartnerLink(e *etree.Element) *eprSpec {
	pl := c.namedPartnerLink(e)
	if pl == nil {
		return nil
	}
	if pl.partnerPT == nil {
		c.errorf(e, "partnerLink %q has no partnerRole to assign an endpoint reference to", pl.name)
		return nil
	}
	return &eprSpec{pl: pl}
}

// namedPartnerLink is the partner link e's partnerLink attribute names.
func (c *compiler) namedPartnerLink(e *etree.Element) *partnerLink {
	name := e.SelectAttrValue("partnerLink", "")
	pl, ok := c.p.plinks[name]
	if !ok {
		c.errorf(e, "unknown partnerLink %q", name)
		return nil
	}
	return pl
}
