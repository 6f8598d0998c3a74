package check

import "github.com/orchd/orchd/internal/process/ast"

// linkEnd is one <source> or <target> and the link it resolves to.
type linkEnd struct {
	el       *ast.Element // the <source> or <target>
	activity *ast.Element // the activity that holds it
	decl     *ast.Element // the <link> it names, nil when undeclared
	flow     *ast.Element // the <flow> that declares it
}

// links resolves every <source> (in <sources>) and <target> (in
// <targets>) of the process to the <link> it names: the nearest
// enclosing flow above the activity that declares the name.
func (p *pass) links() (sources, targets []linkEnd) {
	if p.linked {
		return p.sources, p.targets
	}
	p.linked = true
	defer func() { p.sources, p.targets = sources, targets }()
	p.each(func(e *ast.Element) {
		act := e.Parent().Parent()
		if act == nil || !isLinkEnd(e) {
			return // a <source> elsewhere is not a link end (the compiler reports it)
		}
		end := linkEnd{el: e, activity: act}
		name := attr(e, "linkName")
		for a := act.Parent(); a != nil && end.decl == nil; a = a.Parent() {
			if _, flow := a.Node().(*ast.Flow); !flow {
				continue
			}
			for _, l := range grandchildren(a, "links", "link") {
				if attr(l, "name") == name {
					end.decl, end.flow = l, a
					break
				}
			}
		}
		if _, src := e.Node().(*ast.Source); src {
			sources = append(sources, end)
		} else {
			targets = append(targets, end)
		}
	}, "source", "target")
	return sources, targets
}

// isLinkEnd reports a <source> under <sources> or a <target> under
// <targets>.
func isLinkEnd(e *ast.Element) bool {
	switch e.Node().(type) {
	case *ast.Source:
		_, ok := e.Parent().Node().(*ast.Sources)
		return ok
	case *ast.Target:
		_, ok := e.Parent().Node().(*ast.Targets)
		return ok
	}
	return false
}

func checkLinkNames(p *pass) {
	p.each(func(f *ast.Element) {
		seen := map[string]bool{}
		for _, l := range grandchildren(f, "links", "link") {
			n := attr(l, "name")
			if seen[n] {
				p.report(l, "this <flow> already declares a link named %q; rename one", n)
			}
			seen[n] = true
		}
	}, "flow")
}

func checkLinkDeclared(p *pass) {
	s, t := p.links()
	for _, end := range append(s, t...) {
		if end.decl == nil {
			p.report(end.el, "no enclosing <flow> declares link %q; declare it in a <links> of a flow around both ends", attr(end.el, "linkName"))
		}
	}
}

func checkLinkEnds(p *pass) {
	s, t := p.links()
	count := func(ends []linkEnd) map[*ast.Element]int {
		m := map[*ast.Element]int{}
		for _, e := range ends {
			if e.decl != nil {
				m[e.decl]++
			}
		}
		return m
	}
	ns, nt := count(s), count(t)
	p.each(func(l *ast.Element) {
		if l.Parent() == nil || l.Parent().Tag != "links" {
			return
		}
		if ns[l] != 1 || nt[l] != 1 {
			p.report(l, "link %q has %d sources and %d targets; it needs exactly one of each inside its flow", attr(l, "name"), ns[l], nt[l])
		}
	}, "link")
}

func checkLinkPairs(p *pass) {
	s, t := p.links()
	target := map[*ast.Element]*ast.Element{} // link -> target activity
	for _, e := range t {
		if e.decl != nil {
			target[e.decl] = e.activity
		}
	}
	type pair struct{ from, to *ast.Element }
	seen := map[pair]string{}
	for _, e := range s {
		to := target[e.decl]
		if e.decl == nil || to == nil {
			continue
		}
		k := pair{e.activity, to}
		if prev, ok := seen[k]; ok {
			p.report(e.el, "link %q joins the same two activities as link %q; keep one", attr(e.el, "linkName"), prev)
			continue
		}
		seen[k] = attr(e.el, "linkName")
	}
}

func checkDistinct(p *pass, wrapper, tag, what string) {
	p.each(func(w *ast.Element) {
		seen := map[string]bool{}
		for _, e := range children(w, tag) {
			n := attr(e, "linkName")
			if seen[n] {
				p.report(e, "this activity already has a %s for link %q; remove one", what, n)
			}
			seen[n] = true
		}
	}, wrapper)
}

func checkSourceNames(p *pass) { checkDistinct(p, "sources", "source", "<source>") }
func checkTargetNames(p *pass) { checkDistinct(p, "targets", "target", "<target>") }

// crossed is the first element with one of tags between act (included)
// and flow (excluded).
func crossed(act, flow *ast.Element, tags ...string) *ast.Element {
	for a := act.Parent(); a != nil && a != flow; a = a.Parent() {
		if isBPEL(a) && in(a.Tag, tags...) {
			return a
		}
	}
	return nil
}

func checkLinkRepeatable(p *pass) {
	s, t := p.links()
	for _, e := range append(s, t...) {
		if e.decl == nil {
			continue
		}
		if b := crossed(e.activity, e.flow, "while", "repeatUntil", "forEach", "eventHandlers", "compensationHandler"); b != nil {
			p.report(e.el, "link %q crosses the boundary of <%s>; declare it in a flow inside the <%s>", attr(e.el, "linkName"), b.Tag, b.Tag)
		}
	}
}

func checkLinkHandlers(p *pass) {
	s, t := p.links()
	target := map[*ast.Element]*ast.Element{}
	for _, e := range t {
		if e.decl == nil {
			continue
		}
		target[e.decl] = e.activity
		if h := crossed(e.activity, e.flow, "catch", "catchAll", "terminationHandler"); h != nil {
			p.report(e.el, "link %q enters a <%s>; a link may only leave a fault or termination handler", attr(e.el, "linkName"), h.Tag)
		}
	}
	for _, e := range s {
		to := target[e.decl]
		if e.decl == nil || to == nil {
			continue
		}
		if h := crossed(e.activity, e.flow, "catch", "catchAll", "terminationHandler"); h != nil && within(to, handlerScope(h)) {
			p.report(e.el, "link %q leaves a <%s> for an activity of the scope the handler belongs to; its target must be outside that scope", attr(e.el, "linkName"), h.Tag)
		}
	}
}

// checkLinkCycles builds the control graph of the process (each element
// starts before its children and ends after them; a sequence's children
// run in order; a link's target starts after its source ends) and reports
// each link on a cycle.
func checkLinkCycles(p *pass) {
	s, t := p.links()
	if len(s) == 0 {
		return
	}
	id := make(map[*ast.Element]int, len(p.all))
	for i, e := range p.all {
		id[e] = i
	}
	n := 2 * len(p.all) // start(e) = 2i, end(e) = 2i+1
	adj := make([][]int, n)
	for i, e := range p.all {
		adj[2*i] = append(adj[2*i], 2*i+1)
		var prev *ast.Element
		for _, c := range e.Children() {
			j := id[c]
			adj[2*i] = append(adj[2*i], 2*j)
			adj[2*j+1] = append(adj[2*j+1], 2*i+1)
			if e.Tag == "sequence" && isBPEL(e) && isActivity(c) {
				if prev != nil {
					adj[2*id[prev]+1] = append(adj[2*id[prev]+1], 2*j)
				}
				prev = c
			}
		}
	}
	target := map[*ast.Element]*ast.Element{}
	for _, e := range t {
		if e.decl != nil {
			target[e.decl] = e.activity
		}
	}
	var linkEdges []linkEnd
	for _, e := range s {
		if to := target[e.decl]; e.decl != nil && to != nil {
			adj[2*id[e.activity]+1] = append(adj[2*id[e.activity]+1], 2*id[to])
			linkEdges = append(linkEdges, e)
		}
	}
	comp := scc(adj)
	for _, e := range linkEdges {
		if comp[2*id[e.activity]+1] == comp[2*id[target[e.decl]]] {
			p.report(e.el, "link %q closes a control cycle: its target already precedes its source; remove the link or reorder the activities", attr(e.el, "linkName"))
		}
	}
}

// scc returns the strongly connected component of each node of the graph
// (Tarjan's algorithm, iterative so deep processes cannot overflow).
func scc(adj [][]int) []int {
	n := len(adj)
	index, low, comp := make([]int, n), make([]int, n), make([]int, n)
	for i := range index {
		index[i], comp[i] = -1, -1
	}
	onStack := make([]bool, n)
	var stack []int
	next, ncomp := 0, 0
	type frame struct{ v, edge int }
	for root := 0; root < n; root++ {
		if index[root] >= 0 {
			continue
		}
		work := []frame{{root, 0}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(work) > 0 {
			f := &work[len(work)-1]
			if f.edge < len(adj[f.v]) {
				w := adj[f.v][f.edge]
				f.edge++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					work = append(work, frame{w, 0})
				} else if onStack[w] && index[w] < low[f.v] {
					low[f.v] = index[w]
				}
				continue
			}
			v := f.v
			work = work[:len(work)-1]
			if len(work) > 0 && low[v] < low[work[len(work)-1].v] {
				low[work[len(work)-1].v] = low[v]
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = ncomp
					if w == v {
						break
					}
				}
				ncomp++
			}
		}
	}
	return comp
}

func checkJoinConditionLinks(p *pass) {
	p.each(func(jc *ast.Element) {
		ts := jc.Parent()
		if ts == nil || ts.Tag != "targets" {
			return
		}
		incoming := map[string]bool{}
		for _, t := range children(ts, "target") {
			incoming[attr(t, "linkName")] = true
		}
		for _, name := range refs(expression(jc)) {
			if !incoming[name] {
				p.report(jc, "the join condition refers to $%s, which is not an incoming link of this activity; use only the status of its <target> links", name)
			}
		}
	}, "joinCondition")
}

// checkPeerScopeCycles reports links that make peer scopes (scopes
// immediately enclosed by one scope) depend on each other both ways.
func checkPeerScopeCycles(p *pass) {
	s, t := p.links()
	target := map[*ast.Element]*ast.Element{}
	for _, e := range t {
		if e.decl != nil {
			target[e.decl] = e.activity
		}
	}
	p.each(func(parent *ast.Element) {
		peers := enclosedScopes(parent)
		peerOf := func(a *ast.Element) int {
			for i, s := range peers {
				if within(a, s) {
					return i
				}
			}
			return -1
		}
		type dep struct{ from, to int }
		deps := map[dep]linkEnd{}
		for _, e := range s {
			to := target[e.decl]
			if e.decl == nil || to == nil {
				continue
			}
			i, j := peerOf(e.activity), peerOf(to)
			if i >= 0 && j >= 0 && i != j {
				deps[dep{i, j}] = e
			}
		}
		if len(deps) < 2 {
			return
		}
		adj := make([][]int, len(peers))
		for d := range deps {
			adj[d.from] = append(adj[d.from], d.to)
		}
		comp := scc(adj)
		for _, e := range s {
			if e.decl == nil || target[e.decl] == nil {
				continue
			}
			i, j := peerOf(e.activity), peerOf(target[e.decl])
			if i >= 0 && j >= 0 && i != j && comp[i] == comp[j] && deps[dep{i, j}].el == e.el {
				p.report(e.el, "link %q makes %s and %s depend on each other (a peer-scope cycle); remove a link between them", attr(e.el, "linkName"), scopeLabel(peers[i]), scopeLabel(peers[j]))
			}
		}
	}, "process", "scope")
}
