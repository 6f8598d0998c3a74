package ast

// Inspect walks the tree under n in document order (n first, then each
// child's subtree), calling f for every node, typed or not; when f returns
// false, n's children are skipped. It is the one walk of the tree: check's
// rules and compile's lowering are visitors over it or over the typed
// fields.
func Inspect(n Node, f func(Node) bool) {
	e := n.Elem()
	if !f(e.Node()) {
		return
	}
	for _, c := range e.kids {
		Inspect(c, f)
	}
}

// IsActivity reports whether n is one of WS-BPEL's activities.
func IsActivity(n Node) bool {
	_, ok := n.Elem().Node().(Activity)
	return ok
}
