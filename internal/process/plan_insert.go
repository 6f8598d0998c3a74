package process

// insertPath is the compiled <to> path of a copy with insertMissingToData.
type insertPath struct {
	steps []insertStep
}

// insertStep is one step of an insertPath.
type insertStep struct {
	pathStep
	prefix string // as written in the BPEL document, preferred for a created name
}

// describe renders the step for a fault reason.
func (st *insertStep) describe() string {
	name := st.local
	switch {
	case st.text:
		return "text()"
	case st.prefix != "":
		name = st.prefix + ":" + name
	}
	if st.attr {
		name = "@" + name
	}
	if st.indexVar != nil {
		name += "[$" + st.indexVar.name + "]"
	}
	return name
}
