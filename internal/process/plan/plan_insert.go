package plan

import (
	"github.com/orchd/orchd/internal/process/expr"
)

// InsertPath is the compiled <to> path of a copy with insertMissingToData.
type InsertPath struct {
	Steps []InsertStep
}

// InsertStep is one step of an insertPath.
type InsertStep struct {
	expr.PathStep
	Prefix string // as written in the BPEL document, preferred for a created name
}

// Describe renders the step for a fault reason.
func (st *InsertStep) Describe() string {
	name := st.Local
	switch {
	case st.Text:
		return "text()"
	case st.Prefix != "":
		name = st.Prefix + ":" + name
	}
	if st.Attr {
		name = "@" + name
	}
	if st.IndexVar != nil {
		name += "[$" + st.IndexVar.Name + "]"
	}
	return name
}
