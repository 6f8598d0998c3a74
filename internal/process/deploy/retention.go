package deploy

import (
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

// Retention is orchd:retention: how long an ended instance of the
// process is kept (persistent: in the store) after it ended, by end
// state, before the engine's retention sweep deletes it:
//
//	<orchd:retention completed="P7D" faulted="P30D" terminated="P1D"/>
//
// Each attribute is a positive xsd:duration; one left out (zero here)
// keeps the engine's default (orchd serve --retention), and with no
// default the instance is kept until an operator deletes it. ODE's
// <cleanup> still applies at the end of a run: an instance it deletes
// is not kept at all.
type Retention struct {
	Completed, Faulted, Terminated time.Duration
}

// retentionAttrs are orchd:retention's attributes (validate.go).
var retentionAttrs = []string{"completed", "faulted", "terminated"}

// parseRetention reads orchd:retention.
func parseRetention(doc *xmldoc.Document, x *etree.Element, errs *xmldoc.Errors) Retention {
	var r Retention
	for _, a := range []struct {
		name string
		to   *time.Duration
	}{{"completed", &r.Completed}, {"faulted", &r.Faulted}, {"terminated", &r.Terminated}} {
		if v := x.SelectAttr(a.name); v != nil {
			if d, ok := durationAt(doc.Pos(x), v.Value, "orchd:retention "+a.name, errs); ok {
				*a.to = d
			}
		}
	}
	return r
}
