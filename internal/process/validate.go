package process

import (
	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/bpel"
)

func stepValidateAct(a *validateAct, in *instance, _ *frame) (activity, bool, error) {
	if err := in.validate(a.checks, a.pos); err != nil {
		return nil, false, err
	}
	return nil, true, nil
}

// validate checks the variables in order; the first violation raises
// bpel:invalidVariables naming the variable.
func (in *instance) validate(checks []*schemaCheck, at bpel.Pos) error {
	for _, c := range checks {
		v := c.v
		s := in.slot(v)
		switch {
		case c.elem != nil:
			el := firstElement(s)
			if el == nil {
				return in.faultf(at, "uninitializedVariable", "variable %s was never assigned", v.name)
			}
			if err := c.set.Validate(c.elem, el); err != nil {
				return in.faultf(at, "invalidVariables", "variable %s: %v", v.name, err)
			}
		case c.typ != nil:
			if err := c.set.ValidateType(c.typ, s); err != nil {
				return in.faultf(at, "invalidVariables", "variable %s: %v", v.name, err)
			}
		default:
			for i, ps := range c.parts {
				pd := v.msg.Parts[i]
				w := s.Child[i].(*etree.Element)
				var err error
				if ps.elem != nil {
					el := firstElement(w)
					if el == nil {
						return in.faultf(at, "uninitializedVariable", "part %s of variable %s was never assigned", pd.Name, v.name)
					}
					err = c.set.Validate(ps.elem, el)
				} else {
					err = c.set.ValidateType(ps.typ, w)
				}
				if err != nil {
					return in.faultf(at, "invalidVariables", "variable %s, part %s: %v", v.name, pd.Name, err)
				}
			}
		}
	}
	return nil
}

// assignTargets is the distinct variables the copies of an assign write.
func assignTargets(copies []*copyOp) []*variable {
	var out []*variable
	for _, op := range copies {
		if op.to.v != nil {
			out = appendVarOnce(out, op.to.v)
		}
		for _, v := range op.extVars {
			out = appendVarOnce(out, v)
		}
	}
	return out
}

// applyValidatedAssign runs the copies of an <assign validate="yes"> and then
// validates the variables they wrote. The assign is atomic: on a fault
// of a copy or of the validation, the variables are put back as they
// were before it.
func applyValidatedAssign(a *assign, in *instance) error {
	saved := make([]*etree.Element, len(a.validate))
	for i, c := range a.validate {
		saved[i] = in.slot(c.v).Copy()
	}
	err := func() error {
		for _, c := range a.copies {
			if err := applyCopyOp(c, in); err != nil {
				return err
			}
		}
		return in.validate(a.validate, a.pos)
	}()
	if err != nil {
		for i, c := range a.validate {
			in.root.RemoveChildAt(c.v.slot - 1)
			in.root.InsertChildAt(c.v.slot-1, saved[i])
		}
	}
	return err
}
