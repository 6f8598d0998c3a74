package deploy

import (
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

// parseValidateReplies reads an orchd:validateReplies: empty, yes or
// true check the answers (true); no or false do not. Anything else is
// reported naming the element and its line.
func parseValidateReplies(doc *xmldoc.Document, c *etree.Element, errs *xmldoc.Errors) bool {
	switch v := strings.TrimSpace(c.Text()); v {
	case "", "yes", "true":
		return true
	case "no", "false":
		return false
	default:
		errs.Add(doc.Pos(c), "orchd:validateReplies", "want yes or no (empty: yes), not %q", v)
		return true
	}
}

// ValidatesReplies reports whether the answers of partner link pl are
// checked against their schemas, and whether deploy.xml insists on it
// (explicit: a bundle whose schemas cannot check them is refused). By
// default they are, unless the process says no; odeCompat (compatibility
// mode ODE, which never checked) makes the default no.
func (p *Process) ValidatesReplies(pl string, odeCompat bool) (on, explicit bool) {
	if v, ok := p.ValidateReplies[pl]; ok {
		return v, v
	}
	return !p.NoValidateReplies && !odeCompat, false
}
