package replycheck

import (
	"errors"
	"fmt"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/xsd"
)

// Check returns nil when m, a partner's answer to an operation whose
// output message is md, is valid against rs, else an error naming the
// part, the path of the element or attribute that broke it and why (the
// value and the type it is not of, the element missing or not allowed
// here): "part payload: /crm:resp/crm:lineCount: '3.5' is not a valid
// value of type {http://www.w3.org/2001/XMLSchema}int". A part rs has no
// schema for is taken as it is; so is one whose check needs a schema
// construct the validator does not support (an xsi:type or wildcard
// match it cannot check), unless deploy.xml insisted on the check
// (rs.Explicit).
func Check(rs *plan.ReplySchema, md *exchange.MessageDesc, m *exchange.Message) error {
	for i, pd := range md.Parts {
		if i >= len(rs.Parts) {
			break
		}
		ps := rs.Parts[i]
		el := m.Parts[pd.Name]
		var err error
		switch {
		case ps.Elem == nil && ps.Typ == nil:
			continue
		case el == nil:
			err = errors.New("missing")
		case ps.Elem != nil:
			err = rs.Set.Validate(ps.Elem, el)
		default:
			err = rs.Set.ValidateType(ps.Typ, el)
		}
		if err == nil {
			continue
		}
		var xe *xsd.Error
		if !rs.Explicit && errors.As(err, &xe) && xe.Unchecked {
			continue
		}
		return fmt.Errorf("part %s: %w", pd.Name, err)
	}
	return nil
}
