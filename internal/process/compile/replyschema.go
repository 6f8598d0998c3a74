package compile

import (
	"errors"
	"fmt"
	"slices"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/check"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xsd"
)

// replySchema compiles the check of the answers of invoke e (partner link
// pl, operation op): by default for every answer whose parts the
// bundle's schemas declare (the parts they do not are taken as they
// come; a schema the validator cannot check leaves the answer
// unchecked), unless deploy.xml says no (orchd:validateReplies, per
// process or per partner link; compatibility mode ODE defaults to no).
// When deploy.xml insists (<orchd:validateReplies/> in the invoke), an
// output message with a part no schema declares refuses the bundle.
func (c *compiler) replySchema(e *ast.Element, pl *plan.PartnerLink, op *exchange.Operation) *plan.ReplySchema {
	if c.dp == nil || pl == nil || op.Output == nil || len(op.Output.Parts) == 0 {
		return nil
	}
	on, explicit := c.dp.ValidatesReplies(pl.Name, c.compat == check.ODE)
	if !on {
		return nil
	}
	set := c.w.Schemas()
	parts, err := messageSchemas(set, op.Output)
	if !explicit {
		if errors.Is(err, xsd.ErrUnsupported) || !slices.ContainsFunc(parts, func(ps plan.PartSchema) bool { return ps.Elem != nil || ps.Typ != nil }) {
			return nil
		}
		return &plan.ReplySchema{Set: set, Parts: parts}
	}
	switch {
	case errors.Is(err, xsd.ErrUnsupported):
		c.errs.List = append(c.errs.List, &xmldoc.CompileError{Pos: c.pos(e), Element: e.Tag,
			Err: fmt.Errorf("%w: validating the replies of %s.%s: %w", xmldoc.ErrNotSupported, pl.Name, op.Name, err)})
		return nil
	case err != nil:
		c.errorf(e, "orchd:validateReplies: the output message of %s.%s has no schema to validate against: %v", pl.Name, op.Name, err)
		return nil
	}
	return &plan.ReplySchema{Set: set, Parts: parts, Explicit: true}
}

// messageSchemas resolves the schema of each part of md, in order: its
// element declaration or its type. err names the first part that has
// none.
func messageSchemas(set *xsd.Set, md *exchange.MessageDesc) (parts []plan.PartSchema, err error) {
	for _, pd := range md.Parts {
		var ps plan.PartSchema
		var perr error
		if !pd.Element.IsZero() {
			ps.Elem, perr = set.Element(xsd.QName(pd.Element))
		} else {
			ps.Typ, perr = set.Type(xsd.QName(pd.Type))
		}
		if perr != nil && err == nil {
			err = fmt.Errorf("part %s: %w", pd.Name, perr)
		}
		parts = append(parts, ps)
	}
	return parts, err
}
