package interp

import (
	"errors"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/insertpath"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// insertMissing is the target of a copy at pos with insertMissingToData
// whose <to> selected nothing below base: the node insertpath creates,
// or a selectionFailure saying why it cannot.
func insertMissing(p *plan.InsertPath, in *Instance, base *etree.Element, at xmldoc.Pos) (target, error) {
	var touch func(*etree.Element)
	if in.undoing {
		touch = in.undo.Content
	}
	n, err := insertpath.Create(p, in.root, base, touch)
	if e := (*insertpath.Error)(nil); errors.As(err, &e) {
		return target{}, in.faultf(at, "selectionFailure", "insertMissingToData: %s", e.Reason)
	}
	return target{Node: n}, err
}
