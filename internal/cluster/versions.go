package cluster

// ResponsibleFor is Responsible among the live members that serve
// process version v (Member.Serves): during a rolling upgrade, the timers
// of an instance go to a node that can run it. It is false when this
// node does not serve v.
func (n *Node) ResponsibleFor(id, v string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	var with []Member
	for _, m := range n.members {
		if m.Serves(v) {
			with = append(with, m)
		}
	}
	return rendezvous(with, id) == n.opts.ID
}

// SameVersions reports whether every live member serves the same
// process versions (as sets): no rolling upgrade is under way.
func (n *Node) SameVersions() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, m := range n.members[min(1, len(n.members)):] {
		if !sameSet(m.Versions, n.members[0].Versions) {
			return false
		}
	}
	return true
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	in := make(map[string]bool, len(a))
	for _, x := range a {
		in[x] = true
	}
	for _, x := range b {
		if !in[x] {
			return false
		}
	}
	return true
}
