package process

import (
	"github.com/beevik/etree"
)

// insertMissing compiles the insertMissingToData path of the to-spec t
// compiled from te, or reports at te (or its <query>) why it cannot.
func (c *compiler) insertMissing(te *etree.Element, t *toSpec) {
	if te.SelectAttr("property") != nil {
		c.errorf(te, "insertMissingToData cannot create the path of a variable property (the propertyAlias query): copy to the variable with a query instead")
		return
	}
	if t.query == nil {
		return // the whole variable or part: a copy creates it anyway
	}
	at := te
	if q := bpelChild(te, "query"); q != nil {
		at = q
	}
	p, err := compileInsertPath(t.query.src, c, t.query.ns)
	if err != nil {
		c.errorf(at, "insertMissingToData cannot create %q: %w", t.query.src, err)
		return
	}
	t.insert = p
}
