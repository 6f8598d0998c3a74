package process

import (
	"github.com/beevik/etree"
	"github.com/orchd/orchd/internal/process/plan"
)

// insertMissing compiles the insertMissingToData path of the to-spec t
// compiled from te, or reports at te (or its <query>) why it cannot.
func (c *compiler) insertMissing(te *etree.Element, t *plan.ToSpec) {
	if te.SelectAttr("property") != nil {
		c.errorf(te, "insertMissingToData cannot create the path of a variable property (the propertyAlias query): copy to the variable with a query instead")
		return
	}
	if t.Query == nil {
		return // the whole variable or part: a copy creates it anyway
	}
	at := te
	if q := bpelChild(te, "query"); q != nil {
		at = q
	}
	p, err := compileInsertPath(t.Query.Src, c, t.Query.Ns)
	if err != nil {
		c.errorf(at, "insertMissingToData cannot create %q: %w", t.Query.Src, err)
		return
	}
	t.Insert = p
}
