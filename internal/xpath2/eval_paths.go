package xpath2

import (
	"math/big"

	"github.com/beevik/etree"
)

// eval of "/" is the root of the context node, which must be a document.
func (rootExpr) eval(c *evalCtx) (Sequence, error) {
	if c.item == nil {
		return nil, errf("XPDY0002", "no context item for /")
	}
	n, ok := c.item.(Node)
	if !ok {
		return nil, errf("XPTY0020", "the context item is not a node")
	}
	r := nodeRoot(n)
	if r.Kind() != DocumentNode {
		return nil, errf("XPDY0050", "the root of the context node is not a document node")
	}
	return Sequence{r}, nil
}

func (e *pathExpr) eval(c *evalCtx) (Sequence, error) {
	left, err := e.a.eval(c)
	if err != nil {
		return nil, err
	}
	// fast path: a step over a single node
	var out Sequence
	allNodes, anyAtomic := true, false
	sub := *c
	sub.size = len(left)
	for i, it := range left {
		if _, ok := it.(Node); !ok {
			return nil, errf("XPTY0019", "a path step applied to an atomic value")
		}
		sub.item, sub.pos = it, i+1
		r, err := e.b.eval(&sub)
		if err != nil {
			return nil, err
		}
		for _, x := range r {
			if _, ok := x.(Node); ok {
				allNodes = false || allNodes
			} else {
				anyAtomic = true
			}
		}
		if err := c.items(len(out) + len(r)); err != nil {
			return nil, err
		}
		out = append(out, r...)
	}
	if anyAtomic {
		for _, x := range out {
			if _, ok := x.(Node); ok {
				return nil, errf("XPTY0018", "a path's last step returned both nodes and atomic values")
			}
		}
		return out, nil
	}
	if len(left) <= 1 {
		if st, ok := e.b.(*stepExpr); ok && !st.axis.reverse() && st.axis != axisFollowing {
			return out, nil
		}
	}
	ns := make([]Node, len(out))
	for i, x := range out {
		ns[i] = x.(Node)
	}
	return docOrder(ns), nil
}

func (e *stepExpr) eval(c *evalCtx) (Sequence, error) {
	if c.item == nil {
		return nil, errf("XPDY0002", "no context item for an axis step")
	}
	n, ok := c.item.(Node)
	if !ok {
		return nil, errf("XPTY0020", "the context item of an axis step is not a node")
	}
	principal := ElementNode
	if e.axis == axisAttribute {
		principal = AttributeNode
	}
	var cands []Node
	add := func(m Node) {
		if matchNode(m, &e.test, principal) {
			cands = append(cands, m)
		}
	}
	var desc func(m Node)
	desc = func(m Node) {
		if en, ok := m.(etreeNode); ok {
			if el, ok := en.tok.(*etree.Element); ok && en.attr < 0 {
				etreeDescendants(el, &e.test, add)
				return
			}
		}
		for _, ch := range m.Children() {
			add(ch)
			desc(ch)
		}
	}
	switch e.axis {
	case axisChild:
		for _, ch := range n.Children() {
			add(ch)
		}
	case axisAttribute:
		for _, a := range n.Attributes() {
			add(a)
		}
	case axisSelf:
		add(n)
	case axisDescendant:
		desc(n)
	case axisDescendantOrSelf:
		add(n)
		desc(n)
	case axisParent:
		if p := n.Parent(); p != nil {
			add(p)
		}
	case axisAncestor, axisAncestorOrSelf:
		if e.axis == axisAncestorOrSelf {
			add(n)
		}
		for p := n.Parent(); p != nil; p = p.Parent() {
			add(p)
		}
	case axisFollowingSibling, axisPrecedingSibling:
		if n.Kind() == AttributeNode {
			break
		}
		p := n.Parent()
		if p == nil {
			break
		}
		sibs := p.Children()
		idx := -1
		for i, s := range sibs {
			if s.Same(n) {
				idx = i
			}
		}
		if e.axis == axisFollowingSibling {
			for _, s := range sibs[idx+1:] {
				add(s)
			}
		} else {
			for i := idx - 1; i >= 0; i-- {
				add(sibs[i])
			}
		}
	case axisFollowing, axisPreceding:
		// walk the whole tree in document order
		root := nodeRoot(n)
		var all []Node
		var walk func(m Node)
		walk = func(m Node) {
			all = append(all, m)
			for _, ch := range m.Children() {
				walk(ch)
			}
		}
		walk(root)
		anc := map[int]bool{}
		self := -1
		base := n
		if n.Kind() == AttributeNode {
			base = n.Parent()
		}
		for i, m := range all {
			if m.Same(base) {
				self = i
			}
		}
		for p := base.Parent(); p != nil; p = p.Parent() {
			for i, m := range all {
				if m.Same(p) {
					anc[i] = true
				}
			}
		}
		if e.axis == axisFollowing {
			// skip descendants of base
			end := self + 1
			for end < len(all) && isAncestor(base, all[end]) {
				end++
			}
			if n.Kind() == AttributeNode {
				end = self + 1
			}
			for _, m := range all[end:] {
				add(m)
			}
		} else {
			for i := self - 1; i >= 0; i-- {
				if !anc[i] {
					add(all[i])
				}
			}
		}
	}
	if len(e.preds) == 0 {
		if e.axis.reverse() && len(cands) > 1 {
			return docOrder(cands), nil
		}
		out := make(Sequence, len(cands))
		for i, m := range cands {
			out[i] = m
		}
		return out, nil
	}
	seq := make(Sequence, len(cands))
	for i, m := range cands {
		seq[i] = m
	}
	seq, err := applyPreds(c, seq, e.preds)
	if err != nil {
		return nil, err
	}
	if e.axis.reverse() && len(seq) > 1 {
		ns := make([]Node, len(seq))
		for i, x := range seq {
			ns[i] = x.(Node)
		}
		return docOrder(ns), nil
	}
	return seq, nil
}

// etreeDescendants walks an etree subtree without boxing the nodes a
// name test rejects by their local name.
func etreeDescendants(el *etree.Element, test *nodeTest, add func(Node)) {
	for _, c := range el.Child {
		ch, isElem := c.(*etree.Element)
		if test.nameTest && test.local != "*" {
			if isElem && ch.Tag == test.local {
				add(etreeNode{c, -1})
			}
		} else {
			switch t := c.(type) {
			case *etree.Directive:
				continue
			case *etree.ProcInst:
				if t.Target == "xml" && isDoc(el) {
					continue
				}
			}
			add(etreeNode{c, -1})
		}
		if isElem {
			etreeDescendants(ch, test, add)
		}
	}
}

func isAncestor(a, d Node) bool {
	for p := d.Parent(); p != nil; p = p.Parent() {
		if p.Same(a) {
			return true
		}
	}
	return false
}

func applyPreds(c *evalCtx, seq Sequence, preds []expr) (Sequence, error) {
	for _, p := range preds {
		// a constant numeric predicate selects by position
		if lit, ok := p.(*literalExpr); ok && len(lit.v) == 1 {
			if i, ok := lit.v[0].(Integer); ok {
				if i.V.IsInt64() && i.V.Int64() >= 1 && i.V.Int64() <= int64(len(seq)) {
					seq = Sequence{seq[i.V.Int64()-1]}
				} else {
					seq = nil
				}
				continue
			}
		}
		sub := *c
		sub.size = len(seq)
		var out Sequence
		for i, it := range seq {
			sub.item, sub.pos = it, i+1
			r, err := p.eval(&sub)
			if err != nil {
				return nil, err
			}
			keep := false
			if len(r) == 1 {
				if a, ok := r[0].(Atomic); ok && isNumericType(a.Type()) {
					keep = numEqualsInt(a, i+1)
					if keep {
						out = append(out, it)
					}
					continue
				}
			}
			keep, err = ebv(r)
			if err != nil {
				return nil, err
			}
			if keep {
				out = append(out, it)
			}
		}
		seq = out
	}
	return seq, nil
}

func numEqualsInt(a Atomic, n int) bool {
	switch v := a.(type) {
	case Integer:
		return v.V.IsInt64() && v.V.Int64() == int64(n)
	case Decimal:
		return v.V.Cmp(new(big.Rat).SetInt64(int64(n))) == 0
	case Double:
		return v.V == float64(n)
	}
	return false
}

func (e *filterExpr) eval(c *evalCtx) (Sequence, error) {
	s, err := e.primary.eval(c)
	if err != nil {
		return nil, err
	}
	return applyPreds(c, s, e.preds)
}

func (e *localVarExpr) eval(c *evalCtx) (Sequence, error) { return c.locals[e.slot], nil }

func (e *extVarExpr) eval(c *evalCtx) (Sequence, error) {
	if e.index >= 0 && c.dyn.dc.VariableAt != nil {
		return c.dyn.dc.VariableAt(e.index)
	}
	if c.dyn.dc.Variables != nil {
		if v, ok := c.dyn.dc.Variables(e.ns, e.local); ok {
			return v, nil
		}
	}
	return nil, errf("XPST0008", "variable $%s has no value", e.local)
}

func (contextExpr) eval(c *evalCtx) (Sequence, error) {
	if c.item == nil {
		return nil, errf("XPDY0002", "no context item")
	}
	return Sequence{c.item}, nil
}

func (e *callExpr) eval(c *evalCtx) (Sequence, error) {
	args := make([]Sequence, len(e.args))
	for i, a := range e.args {
		s, err := a.eval(c)
		if err != nil {
			return nil, err
		}
		args[i] = s
	}
	return e.fn.Impl(Context{c}, args)
}
