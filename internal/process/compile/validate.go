package compile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xsd"
)

// schemaChecks compiles the checks of the variables named in e's attr
// (validate) or of vars (assign validate="yes"), refusing a variable
// whose declaration has no schema to check against.
func (c *compiler) schemaChecks(e *ast.Element, vars []*expr.Var) []*plan.SchemaCheck {
	set := c.w.Schemas()
	checks := make([]*plan.SchemaCheck, 0, len(vars))
	for _, v := range vars {
		sc := &plan.SchemaCheck{V: v, Set: set}
		var err error
		switch {
		case v.Msg != nil:
			sc.Parts, err = messageSchemas(set, v.Msg)
		case !v.Elem.IsZero():
			sc.Elem, err = set.Element(xsd.QName(v.Elem))
		default:
			sc.Typ, err = set.Type(xsd.QName(v.Typ))
		}
		switch {
		case errors.Is(err, xsd.ErrUnsupported):
			c.errs.List = append(c.errs.List, &xmldoc.CompileError{Pos: c.pos(e), Element: e.Tag,
				Err: fmt.Errorf("%w: validating variable %s: %w", xmldoc.ErrNotSupported, v.Name, err)})
		case err != nil:
			c.errorf(e, "variable %s has no schema to validate against: %v", v.Name, err)
		default:
			checks = append(checks, sc)
		}
	}
	return checks
}

// validateVars compiles <validate variables="a b">.
func (c *compiler) validateVars(e *ast.Element, b plan.Base) plan.Activity {
	var vars []*expr.Var
	for _, name := range strings.Fields(e.AttrOr("variables", "")) {
		v := c.LookupVar(name)
		if v == nil {
			c.errorf(e, "undeclared variable %s", name)
			continue
		}
		vars = append(vars, v)
	}
	if len(vars) == 0 && len(strings.Fields(e.AttrOr("variables", ""))) == 0 {
		c.errorf(e, "<validate> needs variables=\"...\"")
	}
	return &plan.ValidateAct{Base: b, Checks: c.schemaChecks(e, vars)}
}

// assignTargets is the distinct variables the copies of an assign write.
func assignTargets(copies []*plan.CopyOp) []*expr.Var {
	var out []*expr.Var
	for _, op := range copies {
		if op.To.V != nil {
			out = appendVarOnce(out, op.To.V)
		}
		for _, v := range op.ExtVars {
			out = appendVarOnce(out, v)
		}
	}
	return out
}
