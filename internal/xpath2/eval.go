package xpath2

import (
	"math"

	"math/big"
	"sort"
)

func (e *literalExpr) eval(*evalCtx) (Sequence, error) { return e.v, nil }

func (e *seqExpr) eval(c *evalCtx) (Sequence, error) {
	var out Sequence
	for _, it := range e.items {
		s, err := it.eval(c)
		if err != nil {
			return nil, err
		}
		if err := c.items(len(out) + len(s)); err != nil {
			return nil, err
		}
		out = append(out, s...)
	}
	return out, nil
}

func (e *rangeExpr) eval(c *evalCtx) (Sequence, error) {
	lo, err := oneInteger(c, e.lo)
	if err != nil || lo == nil {
		return nil, err
	}
	hi, err := oneInteger(c, e.hi)
	if err != nil || hi == nil {
		return nil, err
	}
	if lo.Cmp(hi) > 0 {
		return nil, nil
	}
	n := new(big.Int).Sub(hi, lo)
	if !n.IsInt64() || n.Int64() >= int64(c.dyn.maxItems) {
		return nil, errf("XPDY0130", "the range %s to %s builds a sequence of more than %d items, over the bound (--max-items sets it)", lo, hi, c.dyn.maxItems)
	}
	out := make(Sequence, 0, n.Int64()+1)
	if lo.IsInt64() && hi.IsInt64() {
		for i := lo.Int64(); ; i++ {
			out = append(out, Integer{big.NewInt(i), TInteger})
			if i == hi.Int64() {
				break
			}
		}
		return out, nil
	}
	for i := new(big.Int).Set(lo); i.Cmp(hi) <= 0; i = new(big.Int).Add(i, big.NewInt(1)) {
		out = append(out, Integer{i, TInteger})
	}
	return out, nil
}

// oneInteger evaluates an operand of "to": empty or one integer.
func oneInteger(c *evalCtx, x expr) (*big.Int, error) {
	a, err := evalAtomOpt(c, x)
	if err != nil || a == nil {
		return nil, err
	}
	if a.Type() == TUntypedAtomic {
		v, err := castAtomic(a, TInteger, nil)
		if err != nil {
			return nil, err
		}
		a = v
	}
	i, ok := a.(Integer)
	if !ok {
		return nil, errf("XPTY0004", "range operand must be xs:integer, not %s", a.Type())
	}
	return i.V, nil
}

func (e *forExpr) eval(c *evalCtx) (Sequence, error) {
	in, err := e.in.eval(c)
	if err != nil {
		return nil, err
	}
	var out Sequence
	for _, it := range in {
		c.locals[e.slot] = Sequence{it}
		r, err := e.ret.eval(c)
		if err != nil {
			return nil, err
		}
		if err := c.items(len(out) + len(r)); err != nil {
			return nil, err
		}
		out = append(out, r...)
	}
	return out, nil
}

func (e *quantExpr) eval(c *evalCtx) (Sequence, error) {
	in, err := e.in.eval(c)
	if err != nil {
		return nil, err
	}
	for _, it := range in {
		c.locals[e.slot] = Sequence{it}
		r, err := e.sat.eval(c)
		if err != nil {
			return nil, err
		}
		b, err := ebv(r)
		if err != nil {
			return nil, err
		}
		if b != e.every {
			return Sequence{Boolean(b)}, nil
		}
	}
	return Sequence{Boolean(e.every)}, nil
}

func (e *ifExpr) eval(c *evalCtx) (Sequence, error) {
	s, err := e.cond.eval(c)
	if err != nil {
		return nil, err
	}
	b, err := ebv(s)
	if err != nil {
		return nil, err
	}
	if b {
		return e.then.eval(c)
	}
	return e.els.eval(c)
}

func (e *logicExpr) eval(c *evalCtx) (Sequence, error) {
	s, err := e.a.eval(c)
	var a bool
	if err == nil {
		a, err = ebv(s)
	}
	if err != nil {
		// the other operand may decide the result
		s2, err2 := e.b.eval(c)
		if err2 == nil {
			if b, err3 := ebv(s2); err3 == nil && b != e.and {
				return Sequence{Boolean(b)}, nil
			}
		}
		return nil, err
	}
	if e.and && !a {
		return Sequence{Boolean(false)}, nil
	}
	if !e.and && a {
		return Sequence{Boolean(true)}, nil
	}
	s, err = e.b.eval(c)
	if err != nil {
		return nil, err
	}
	b, err := ebv(s)
	if err != nil {
		return nil, err
	}
	return Sequence{Boolean(b)}, nil
}

// ebv is the effective boolean value.
func ebv(s Sequence) (bool, error) {
	if len(s) == 0 {
		return false, nil
	}
	if _, ok := s[0].(Node); ok {
		return true, nil
	}
	if len(s) > 1 {
		return false, errf("FORG0006", "effective boolean value of a sequence of %d atomic values", len(s))
	}
	switch v := s[0].(type) {
	case Boolean:
		return bool(v), nil
	case String:
		if v.T.DerivesFrom(TString) || v.T == TUntypedAtomic || v.T == TAnyURI {
			return v.V != "", nil
		}
	case Integer:
		return v.V.Sign() != 0, nil
	case Decimal:
		return v.V.Sign() != 0, nil
	case Double:
		return !(v.V == 0 || math.IsNaN(v.V)), nil
	}
	return false, errf("FORG0006", "no effective boolean value for %s", s[0].(Atomic).Type())
}

// atomize turns a sequence into atomic values.
func atomize(s Sequence) ([]Atomic, error) {
	out := make([]Atomic, 0, len(s))
	for _, it := range s {
		out = append(out, atomizeItem(it))
	}
	return out, nil
}

func atomizeItem(it Item) Atomic {
	switch v := it.(type) {
	case Atomic:
		return v
	case Node:
		switch v.Kind() {
		case CommentNode, PINode:
			return Str(v.StringValue())
		}
		return Untyped(v.StringValue())
	}
	return Str("")
}

// evalAtomOpt evaluates an operand that must be empty or one item and
// atomizes it.
func evalAtomOpt(c *evalCtx, x expr) (Atomic, error) {
	s, err := x.eval(c)
	if err != nil {
		return nil, err
	}
	return atomizeOpt(s)
}

// atomizeOpt atomizes a sequence that must hold at most one item.
func atomizeOpt(s Sequence) (Atomic, error) {
	if len(s) == 0 {
		return nil, nil
	}
	if len(s) > 1 {
		return nil, errf("XPTY0004", "a sequence of %d items where at most one is allowed", len(s))
	}
	return atomizeItem(s[0]), nil
}

func (e *negExpr) eval(c *evalCtx) (Sequence, error) {
	a, err := evalAtomOpt(c, e.a)
	if err != nil || a == nil {
		return nil, err
	}
	r, err := negate(a)
	if err != nil {
		return nil, err
	}
	return Sequence{r}, nil
}

func (e *plusExpr) eval(c *evalCtx) (Sequence, error) {
	a, err := evalAtomOpt(c, e.a)
	if err != nil || a == nil {
		return nil, err
	}
	if a.Type() == TUntypedAtomic {
		v, err := castAtomic(a, TDouble, nil)
		if err != nil {
			return nil, err
		}
		return Sequence{v}, nil
	}
	if !isNumericType(a.Type()) {
		return nil, errf("XPTY0004", "unary + of %s", a.Type())
	}
	return Sequence{a}, nil
}

func (e *arithExpr) eval(c *evalCtx) (Sequence, error) {
	sa, err := e.a.eval(c)
	if err != nil {
		return nil, err
	}
	sb, err := e.b.eval(c)
	if err != nil {
		return nil, err
	}
	a, err := atomizeOpt(sa)
	if err != nil {
		return nil, err
	}
	b, err := atomizeOpt(sb)
	if err != nil {
		return nil, err
	}
	if a == nil || b == nil {
		return nil, nil
	}
	r, err := arith(e.op, a, b, c.dyn.dc.ImplicitTimezone)
	if err != nil {
		return nil, err
	}
	return Sequence{r}, nil
}

// rangeCompare decides "x op (lo to hi)" without building the range; ok
// is false when the shortcut does not apply.
func rangeCompare(c *evalCtx, op string, x expr, r *rangeExpr, rangeLeft bool) (Sequence, bool, error) {
	sx, err := x.eval(c)
	if err != nil || len(sx) != 1 {
		return nil, false, nil
	}
	a, isAtomic := sx[0].(Atomic)
	if !isAtomic {
		return nil, false, nil
	}
	if _, num := numRank(a); !num || isNaN(a) {
		return nil, false, nil
	}
	lo, err := oneInteger(c, r.lo)
	if err != nil || lo == nil {
		return nil, false, nil
	}
	hi, err := oneInteger(c, r.hi)
	if err != nil || hi == nil {
		return nil, false, nil
	}
	if lo.Cmp(hi) > 0 {
		return Sequence{Boolean(false)}, true, nil
	}
	if rangeLeft { // (lo to hi) op x  ==  x op' (lo to hi)
		op = map[string]string{"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}[op]
	}
	tz := c.dyn.dc.ImplicitTimezone
	loA, hiA := Integer{lo, TInteger}, Integer{hi, TInteger}
	var res bool
	switch op {
	case "eq":
		ge, _ := valueCompare("ge", a, loA, tz)
		le, _ := valueCompare("le", a, hiA, tz)
		res = ge && le
		if res {
			if d, ok := a.(Double); ok {
				res = d.V == math.Trunc(d.V)
			} else if dd, ok := a.(Decimal); ok {
				res = dd.V.IsInt()
			}
		}
	case "ne":
		if lo.Cmp(hi) != 0 {
			res = true
		} else {
			res, _ = valueCompare("ne", a, loA, tz)
		}
	case "lt", "le":
		res, _ = valueCompare(op, a, hiA, tz)
	default:
		res, _ = valueCompare(op, a, loA, tz)
	}
	return Sequence{Boolean(res)}, true, nil
}

func (e *compExpr) eval(c *evalCtx) (Sequence, error) {
	if e.kind == compGeneral {
		if r, ok := e.b.(*rangeExpr); ok {
			if res, ok, err := rangeCompare(c, e.op, e.a, r, false); ok || err != nil {
				return res, err
			}
		} else if r, ok := e.a.(*rangeExpr); ok {
			if res, ok, err := rangeCompare(c, e.op, e.b, r, true); ok || err != nil {
				return res, err
			}
		}
	}
	sa, err := e.a.eval(c)
	if err != nil {
		return nil, err
	}
	sb, err := e.b.eval(c)
	if err != nil {
		return nil, err
	}
	tz := c.dyn.dc.ImplicitTimezone
	if e.kind == compValue {
		a, err := atomizeOpt(sa)
		if err != nil {
			return nil, err
		}
		b, err := atomizeOpt(sb)
		if err != nil {
			return nil, err
		}
		if a == nil || b == nil {
			return nil, nil
		}
		if a.Type() == TUntypedAtomic {
			a = Str(a.String())
		}
		if b.Type() == TUntypedAtomic {
			b = Str(b.String())
		}
		r, err := valueCompare(e.op, a, b, tz)
		if err != nil {
			return nil, err
		}
		return Sequence{Boolean(r)}, nil
	}
	r, err := generalCompare(e.op, sa, sb, tz)
	if err != nil {
		return nil, err
	}
	return Sequence{Boolean(r)}, nil
}

func generalCompare(op string, sa, sb Sequence, tz int) (bool, error) {
	as, _ := atomize(sa)
	bs, _ := atomize(sb)
	for _, a := range as {
		for _, b := range bs {
			x, y := a, b
			var err error
			if x.Type() == TUntypedAtomic && y.Type() == TUntypedAtomic {
				x, y = Str(x.String()), Str(y.String())
			} else if x.Type() == TUntypedAtomic {
				x, err = untypedFor(x, y)
			} else if y.Type() == TUntypedAtomic {
				y, err = untypedFor(y, x)
			}
			if err != nil {
				return false, err
			}
			r, err := valueCompare(op, x, y, tz)
			if err != nil {
				return false, err
			}
			if r {
				return true, nil
			}
		}
	}
	return false, nil
}

// untypedFor casts an untypedAtomic operand of a general comparison to
// the type of the other operand.
func untypedFor(u, other Atomic) (Atomic, error) {
	t := other.Type()
	switch {
	case isNumericType(t):
		return castAtomic(u, TDouble, nil)
	case t.DerivesFrom(TString) || t == TAnyURI:
		return Str(u.String()), nil
	}
	return castAtomic(u, t.prim, nil)
}

func (e *nodeCompExpr) eval(c *evalCtx) (Sequence, error) {
	sa, err := e.a.eval(c)
	if err != nil {
		return nil, err
	}
	sb, err := e.b.eval(c)
	if err != nil {
		return nil, err
	}
	if len(sa) == 0 || len(sb) == 0 {
		return nil, nil
	}
	if len(sa) > 1 || len(sb) > 1 {
		return nil, errf("XPTY0004", "node comparison of a sequence of more than one item")
	}
	a, ok1 := sa[0].(Node)
	b, ok2 := sb[0].(Node)
	if !ok1 || !ok2 {
		return nil, errf("XPTY0004", "node comparison of an atomic value")
	}
	switch e.op {
	case "is":
		return Sequence{Boolean(a.Same(b))}, nil
	case "<<":
		return Sequence{Boolean(compareOrder(a, b) < 0)}, nil
	}
	return Sequence{Boolean(compareOrder(a, b) > 0)}, nil
}

func nodesOf(s Sequence, op string) ([]Node, error) {
	out := make([]Node, 0, len(s))
	for _, it := range s {
		n, ok := it.(Node)
		if !ok {
			return nil, errf("XPTY0004", "%s of a sequence holding an atomic value", op)
		}
		out = append(out, n)
	}
	return out, nil
}

// docOrder sorts nodes in document order and removes duplicates.
func docOrder(ns []Node) Sequence {
	if len(ns) > 1 {
		sort.SliceStable(ns, func(i, j int) bool { return compareOrder(ns[i], ns[j]) < 0 })
	}
	out := make(Sequence, 0, len(ns))
	for i, n := range ns {
		if i > 0 && n.Same(ns[i-1]) {
			continue
		}
		out = append(out, n)
	}
	return out
}

func (e *setOpExpr) eval(c *evalCtx) (Sequence, error) {
	sa, err := e.a.eval(c)
	if err != nil {
		return nil, err
	}
	sb, err := e.b.eval(c)
	if err != nil {
		return nil, err
	}
	a, err := nodesOf(sa, e.op)
	if err != nil {
		return nil, err
	}
	b, err := nodesOf(sb, e.op)
	if err != nil {
		return nil, err
	}
	in := func(n Node, set []Node) bool {
		for _, m := range set {
			if m.Same(n) {
				return true
			}
		}
		return false
	}
	var out []Node
	switch e.op {
	case "union":
		out = append(append(out, a...), b...)
	case "intersect":
		for _, n := range a {
			if in(n, b) {
				out = append(out, n)
			}
		}
	default:
		for _, n := range a {
			if !in(n, b) {
				out = append(out, n)
			}
		}
	}
	return docOrder(out), nil
}

func (e *instanceExpr) eval(c *evalCtx) (Sequence, error) {
	s, err := e.a.eval(c)
	if err != nil {
		return nil, err
	}
	return Sequence{Boolean(matchesSeqType(s, &e.st))}, nil
}

func (e *treatExpr) eval(c *evalCtx) (Sequence, error) {
	s, err := e.a.eval(c)
	if err != nil {
		return nil, err
	}
	if !matchesSeqType(s, &e.st) {
		return nil, errf("XPDY0050", "treat as: the value does not match the sequence type")
	}
	return s, nil
}

func matchesSeqType(s Sequence, st *seqType) bool {
	if st.empty {
		return len(s) == 0
	}
	switch st.occ {
	case 0:
		if len(s) != 1 {
			return false
		}
	case '?':
		if len(s) > 1 {
			return false
		}
	case '+':
		if len(s) == 0 {
			return false
		}
	}
	for _, it := range s {
		if !matchesItem(it, st) {
			return false
		}
	}
	return true
}

func matchesItem(it Item, st *seqType) bool {
	switch st.item {
	case itemAny:
		return true
	case itemAtomic:
		a, ok := it.(Atomic)
		return ok && a.Type().DerivesFrom(st.atomic)
	}
	n, ok := it.(Node)
	return ok && matchNode(n, &st.node, 0)
}

// matchNode applies a node test; principal is the axis's principal kind.
func matchNode(n Node, t *nodeTest, principal NodeKind) bool {
	if t.anyKind {
		return true
	}
	if t.nameTest {
		if n.Kind() != principal && !(principal == 0 && n.Kind() == ElementNode) {
			return false
		}
		if t.local != "*" && n.LocalName() != t.local {
			return false
		}
		if t.ns != "*" && n.NamespaceURI() != t.ns {
			return false
		}
		return true
	}
	if n.Kind() != t.kind {
		return false
	}
	switch t.kind {
	case PINode:
		return !t.hasName || n.LocalName() == t.local
	case ElementNode, AttributeNode:
		if t.hasName && (n.LocalName() != t.local || n.NamespaceURI() != t.ns) {
			return false
		}
		if t.typeName != nil {
			var actual *Type = TUntyped
			if t.kind == AttributeNode {
				actual = TUntypedAtomic
			}
			return actual.DerivesFrom(t.typeName)
		}
	case DocumentNode:
		if t.docElem != nil {
			var elems []Node
			for _, ch := range n.Children() {
				if ch.Kind() == ElementNode {
					elems = append(elems, ch)
				}
			}
			return len(elems) == 1 && matchNode(elems[0], t.docElem, ElementNode)
		}
	}
	return true
}

func (e *castExpr) eval(c *evalCtx) (Sequence, error) {
	s, err := e.a.eval(c)
	if err != nil {
		return nil, err
	}
	if len(s) > 1 {
		if e.castable {
			return Sequence{Boolean(false)}, nil
		}
		return nil, errf("XPTY0004", "cast of a sequence of %d items", len(s))
	}
	if len(s) == 0 {
		if e.castable {
			return Sequence{Boolean(e.optional)}, nil
		}
		if e.optional {
			return nil, nil
		}
		return nil, errf("XPTY0004", "cast of an empty sequence to %s", e.t)
	}
	a := atomizeItem(s[0])
	if e.t == TQName && !e.castable {
		if st, ok := a.(String); ok && st.T != TString {
			return nil, errf("XPTY0004", "cannot cast %s to xs:QName", st.T)
		}
	}
	v, err := castAtomic(a, e.t, e.ns)
	if e.castable {
		if e.t == TQName {
			if st, ok := a.(String); ok && st.T != TString {
				return Sequence{Boolean(false)}, nil
			}
		}
		return Sequence{Boolean(err == nil)}, nil
	}
	if err != nil {
		return nil, err
	}
	return Sequence{v}, nil
}
