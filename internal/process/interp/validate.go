package interp

import (
	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

func stepValidateAct(a *plan.ValidateAct, in *Instance, _ *frame) (plan.Activity, bool, error) {
	if err := in.validate(a.Checks, a.Pos); err != nil {
		return nil, false, err
	}
	return nil, true, nil
}

// validate checks the variables in order; the first violation raises
// bpel:invalidVariables naming the variable.
func (in *Instance) validate(checks []*plan.SchemaCheck, at xmldoc.Pos) error {
	for _, c := range checks {
		v := c.V
		s := in.Slot(v)
		switch {
		case c.Elem != nil:
			el := expr.FirstElement(s)
			if el == nil {
				return in.faultf(at, "uninitializedVariable", "variable %s was never assigned", v.Name)
			}
			if err := c.Set.Validate(c.Elem, el); err != nil {
				return in.faultf(at, "invalidVariables", "variable %s: %v", v.Name, err)
			}
		case c.Typ != nil:
			if err := c.Set.ValidateType(c.Typ, s); err != nil {
				return in.faultf(at, "invalidVariables", "variable %s: %v", v.Name, err)
			}
		default:
			for i, ps := range c.Parts {
				pd := v.Msg.Parts[i]
				w := s.Child[i].(*etree.Element)
				var err error
				if ps.Elem != nil {
					el := expr.FirstElement(w)
					if el == nil {
						return in.faultf(at, "uninitializedVariable", "part %s of variable %s was never assigned", pd.Name, v.Name)
					}
					err = c.Set.Validate(ps.Elem, el)
				} else {
					err = c.Set.ValidateType(ps.Typ, w)
				}
				if err != nil {
					return in.faultf(at, "invalidVariables", "variable %s, part %s: %v", v.Name, pd.Name, err)
				}
			}
		}
	}
	return nil
}
