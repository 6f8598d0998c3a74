package process

import (
	"errors"
	"fmt"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/bpel"
	"github.com/orchd/orchd/internal/xsd"
)

// schemaChecks compiles the checks of the variables named in e's attr
// (validate) or of vars (assign validate="yes"), refusing a variable
// whose declaration has no schema to check against.
func (c *compiler) schemaChecks(e *etree.Element, vars []*variable) []*schemaCheck {
	set := c.w.Schemas()
	checks := make([]*schemaCheck, 0, len(vars))
	for _, v := range vars {
		sc := &schemaCheck{v: v, set: set}
		var err error
		switch {
		case v.msg != nil:
			for _, pd := range v.msg.Parts {
				var ps partSchema
				var perr error
				if !pd.Element.IsZero() {
					ps.elem, perr = set.Element(xsd.QName(pd.Element))
				} else {
					ps.typ, perr = set.Type(xsd.QName(pd.Type))
				}
				if perr != nil && err == nil {
					err = fmt.Errorf("part %s: %w", pd.Name, perr)
				}
				sc.parts = append(sc.parts, ps)
			}
		case !v.elem.IsZero():
			sc.elem, err = set.Element(xsd.QName(v.elem))
		default:
			sc.typ, err = set.Type(xsd.QName(v.typ))
		}
		switch {
		case errors.Is(err, xsd.ErrUnsupported):
			c.errs.List = append(c.errs.List, &bpel.CompileError{Pos: c.pos(e), Element: e.Tag,
				Err: fmt.Errorf("%w: validating variable %s: %w", bpel.ErrNotSupported, v.name, err)})
		case err != nil:
			c.errorf(e, "variable %s has no schema to validate against: %v", v.name, err)
		default:
			checks = append(checks, sc)
		}
	}
	return checks
}

// validateVars compiles <validate variables="a b">.
func (c *compiler) validateVars(e *etree.Element, b base) activity {
	var vars []*variable
	for _, name := range strings.Fields(e.SelectAttrValue("variables", "")) {
		v := c.lookupVar(name)
		if v == nil {
			c.errorf(e, "undeclared variable %s", name)
			continue
		}
		vars = append(vars, v)
	}
	if len(vars) == 0 && len(strings.Fields(e.SelectAttrValue("variables", ""))) == 0 {
		c.errorf(e, "<validate> needs variables=\"...\"")
	}
	return &validateAct{base: b, checks: c.schemaChecks(e, vars)}
}
