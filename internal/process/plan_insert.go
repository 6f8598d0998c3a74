package process

import (
	"github.com/orchd/orchd/internal/process/expr"
)

// insertPath is the compiled <to> path of a copy with insertMissingToData.
type insertPath struct {
	steps []insertStep
}

// insertStep is one step of an insertPath.
type insertStep struct {
	expr.PathStep
	prefix string // as written in the BPEL document, preferred for a created name
}

// describe renders the step for a fault reason.
func (st *insertStep) describe() string {
	name := st.Local
	switch {
	case st.Text:
		return "text()"
	case st.prefix != "":
		name = st.prefix + ":" + name
	}
	if st.Attr {
		name = "@" + name
	}
	if st.IndexVar != nil {
		name += "[$" + st.IndexVar.Name + "]"
	}
	return name
}
