package xpath2

import (
	"math"
)

// ---- sequences

func registerSequences(fn func(string, int, int, FuncImpl)) {
	fn("empty", 1, 1, func(c Context, args []Sequence) (Sequence, error) { return boolSeq(len(args[0]) == 0) })
	fn("exists", 1, 1, func(c Context, args []Sequence) (Sequence, error) { return boolSeq(len(args[0]) > 0) })
	fn("count", 1, 1, func(c Context, args []Sequence) (Sequence, error) { return intSeq(int64(len(args[0]))) })
	fn("position", 0, 0, func(c Context, args []Sequence) (Sequence, error) {
		if c.c.item == nil {
			return nil, errf("XPDY0002", "no context item for position()")
		}
		return intSeq(int64(c.c.pos))
	})
	fn("last", 0, 0, func(c Context, args []Sequence) (Sequence, error) {
		if c.c.item == nil {
			return nil, errf("XPDY0002", "no context item for last()")
		}
		return intSeq(int64(c.c.size))
	})
	fn("reverse", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		out := make(Sequence, len(args[0]))
		for i, it := range args[0] {
			out[len(out)-1-i] = it
		}
		return out, nil
	})
	fn("unordered", 1, 1, func(c Context, args []Sequence) (Sequence, error) { return args[0], nil })
	fn("zero-or-one", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		if len(args[0]) > 1 {
			return nil, errf("FORG0003", "zero-or-one of %d items", len(args[0]))
		}
		return args[0], nil
	})
	fn("one-or-more", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		if len(args[0]) == 0 {
			return nil, errf("FORG0004", "one-or-more of an empty sequence")
		}
		return args[0], nil
	})
	fn("exactly-one", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		if len(args[0]) != 1 {
			return nil, errf("FORG0005", "exactly-one of %d items", len(args[0]))
		}
		return args[0], nil
	})
	fn("insert-before", 3, 3, func(c Context, args []Sequence) (Sequence, error) {
		pos, err := argInt(args[1])
		if err != nil {
			return nil, err
		}
		s := args[0]
		if pos < 1 {
			pos = 1
		}
		if pos > int64(len(s)) {
			pos = int64(len(s)) + 1
		}
		out := make(Sequence, 0, len(s)+len(args[2]))
		out = append(out, s[:pos-1]...)
		out = append(out, args[2]...)
		return append(out, s[pos-1:]...), nil
	})
	fn("remove", 2, 2, func(c Context, args []Sequence) (Sequence, error) {
		pos, err := argInt(args[1])
		if err != nil {
			return nil, err
		}
		s := args[0]
		if pos < 1 || pos > int64(len(s)) {
			return s, nil
		}
		out := make(Sequence, 0, len(s)-1)
		out = append(out, s[:pos-1]...)
		return append(out, s[pos:]...), nil
	})
	fn("subsequence", 2, 3, func(c Context, args []Sequence) (Sequence, error) {
		start, end, err := positionWindow("subsequence", args)
		if err != nil {
			return nil, err
		}
		var out Sequence
		for i, it := range args[0] {
			p := float64(i + 1)
			if p >= start && p < end {
				out = append(out, it)
			}
		}
		return out, nil
	})
	fn("index-of", 2, 3, func(c Context, args []Sequence) (Sequence, error) {
		if len(args) == 3 {
			if err := argCollation(c, args[2]); err != nil {
				return nil, err
			}
		}
		if len(args[1]) != 1 {
			return nil, errf("XPTY0004", "index-of search value must be one item")
		}
		key := atomizeItem(args[1][0])
		var out Sequence
		for i, it := range args[0] {
			if atomEqual(atomizeItem(it), key, c.c.dyn.dc.ImplicitTimezone, false) {
				out = append(out, Int(int64(i+1)))
			}
		}
		return out, nil
	})
	fn("distinct-values", 1, 2, func(c Context, args []Sequence) (Sequence, error) {
		if len(args) == 2 {
			if err := argCollation(c, args[1]); err != nil {
				return nil, err
			}
		}
		var out Sequence
		var seen []Atomic
	outer:
		for _, it := range args[0] {
			a := atomizeItem(it)
			if a.Type() == TUntypedAtomic {
				a = Str(a.String())
			}
			for _, s := range seen {
				if atomEqual(s, a, c.c.dyn.dc.ImplicitTimezone, true) {
					continue outer
				}
			}
			seen = append(seen, a)
			out = append(out, atomizeItem(it))
		}
		return out, nil
	})
	fn("deep-equal", 2, 3, func(c Context, args []Sequence) (Sequence, error) {
		if len(args) == 3 {
			if err := argCollation(c, args[2]); err != nil {
				return nil, err
			}
		}
		return boolSeq(deepEqual(args[0], args[1], c.c.dyn.dc.ImplicitTimezone))
	})
	fn("sum", 1, 2, fnSum)
	fn("avg", 1, 1, fnAvg)
	fn("max", 1, 2, func(c Context, args []Sequence) (Sequence, error) { return minMax(c, args, 1) })
	fn("min", 1, 2, func(c Context, args []Sequence) (Sequence, error) { return minMax(c, args, -1) })
	fn("doc", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		if len(args[0]) == 0 {
			return nil, nil
		}
		return nil, errf("FODC0002", "no document is available")
	})
	fn("doc-available", 1, 1, func(c Context, args []Sequence) (Sequence, error) { return boolSeq(false) })
	fn("collection", 0, 1, func(c Context, args []Sequence) (Sequence, error) {
		return nil, errf("FODC0002", "no collection is available")
	})
	fn("id", 1, 2, func(c Context, args []Sequence) (Sequence, error) { return nil, nil })
	fn("idref", 1, 2, func(c Context, args []Sequence) (Sequence, error) { return nil, nil })
}

// atomEqual is eq for distinct-values and index-of: incomparable values
// are unequal; NaN equals NaN when nanEq.
func atomEqual(a, b Atomic, tz int, nanEq bool) bool {
	if a.Type() == TUntypedAtomic {
		a = Str(a.String())
	}
	if b.Type() == TUntypedAtomic {
		b = Str(b.String())
	}
	c, ok, err := compareAtomic(a, b, tz, true)
	if err != nil {
		return false
	}
	if !ok {
		return nanEq && isNaN(a) && isNaN(b)
	}
	return c == 0
}

func isNaN(a Atomic) bool {
	d, ok := a.(Double)
	return ok && math.IsNaN(d.V)
}

func deepEqual(a, b Sequence, tz int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		na, aNode := a[i].(Node)
		nb, bNode := b[i].(Node)
		if aNode != bNode {
			return false
		}
		if aNode {
			if !deepEqualNode(na, nb) {
				return false
			}
			continue
		}
		if !atomEqual(a[i].(Atomic), b[i].(Atomic), tz, true) {
			return false
		}
	}
	return true
}

func deepEqualNode(a, b Node) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case DocumentNode, ElementNode:
		if a.Kind() == ElementNode {
			if a.LocalName() != b.LocalName() || a.NamespaceURI() != b.NamespaceURI() {
				return false
			}
			aa, ba := a.Attributes(), b.Attributes()
			if len(aa) != len(ba) {
				return false
			}
			for _, x := range aa {
				found := false
				for _, y := range ba {
					if x.LocalName() == y.LocalName() && x.NamespaceURI() == y.NamespaceURI() && x.StringValue() == y.StringValue() {
						found = true
						break
					}
				}
				if !found {
					return false
				}
			}
		}
		filter := func(ns []Node) []Node {
			var out []Node
			for _, n := range ns {
				if k := n.Kind(); k == ElementNode || k == TextNode {
					out = append(out, n)
				}
			}
			return out
		}
		ca, cb := filter(a.Children()), filter(b.Children())
		if len(ca) != len(cb) {
			return false
		}
		for i := range ca {
			if !deepEqualNode(ca[i], cb[i]) {
				return false
			}
		}
		return true
	case AttributeNode, PINode:
		return a.LocalName() == b.LocalName() && a.NamespaceURI() == b.NamespaceURI() && a.StringValue() == b.StringValue()
	}
	return a.StringValue() == b.StringValue()
}

// aggregateValues atomizes and casts untyped values to xs:double.
func aggregateValues(s Sequence) ([]Atomic, error) {
	out := make([]Atomic, 0, len(s))
	for _, it := range s {
		a := atomizeItem(it)
		if a.Type() == TUntypedAtomic {
			v, err := castAtomic(a, TDouble, nil)
			if err != nil {
				return nil, err
			}
			a = v
		}
		out = append(out, a)
	}
	return out, nil
}

func sumValues(vals []Atomic) (Atomic, error) {
	acc := vals[0]
	_, isNum := numRank(acc)
	d, isDur := acc.(Duration)
	if !isNum && !(isDur && d.T != TDuration) {
		return nil, errf("FORG0006", "cannot sum %s", acc.Type())
	}
	for _, v := range vals[1:] {
		_, vNum := numRank(v)
		if vNum != isNum {
			return nil, errf("FORG0006", "cannot sum %s with %s", acc.Type(), v.Type())
		}
		if !isNum && v.Type() != acc.Type() {
			return nil, errf("FORG0006", "cannot sum %s with %s", acc.Type(), v.Type())
		}
		r, err := arith("+", acc, v, 0)
		if err != nil {
			return nil, err
		}
		acc = r
	}
	return acc, nil
}

func fnSum(c Context, args []Sequence) (Sequence, error) {
	vals, err := aggregateValues(args[0])
	if err != nil {
		return nil, err
	}
	if len(vals) == 0 {
		if len(args) == 2 {
			a, err := atomizeOpt(args[1])
			if err != nil || a == nil {
				return nil, err
			}
			return one(a), nil
		}
		return one(Int(0)), nil
	}
	r, err := sumValues(vals)
	if err != nil {
		return nil, err
	}
	return one(r), nil
}

func fnAvg(c Context, args []Sequence) (Sequence, error) {
	vals, err := aggregateValues(args[0])
	if err != nil || len(vals) == 0 {
		return nil, err
	}
	s, err := sumValues(vals)
	if err != nil {
		return nil, err
	}
	r, err := arith("div", s, Int(int64(len(vals))), 0)
	if err != nil {
		return nil, err
	}
	return one(r), nil
}

func minMax(c Context, args []Sequence, sign int) (Sequence, error) {
	if len(args) == 2 {
		if err := argCollation(c, args[1]); err != nil {
			return nil, err
		}
	}
	vals, err := aggregateValues(args[0])
	if err != nil || len(vals) == 0 {
		return nil, err
	}
	tz := c.c.dyn.dc.ImplicitTimezone
	best := vals[0]
	// numeric promotion: the result has the widest numeric type
	maxRank := -1
	for _, v := range vals {
		if r, ok := numRank(v); ok && r > maxRank {
			maxRank = r
		}
	}
	check := func(v Atomic) error {
		t := v.Type()
		if t == TQName || t == TNOTATION || t.prim == THexBinary || t.prim == TBase64Binary || t == TDuration ||
			t == TGDay || t == TGMonth || t == TGMonthDay || t == TGYear || t == TGYearMonth {
			return errf("FORG0006", "%s is not ordered", t)
		}
		return nil
	}
	if err := check(best); err != nil {
		return nil, err
	}
	hasString := false
	for _, v := range vals {
		if v.Type().DerivesFrom(TString) {
			hasString = true
		}
	}
	nan := isNaN(best)
	for _, v := range vals[1:] {
		if err := check(v); err != nil {
			return nil, err
		}
		cmp, ok, err := compareAtomic(v, best, tz, false)
		if err != nil {
			return nil, errf("FORG0006", "%s", err.(*Error).Msg)
		}
		if nan {
			continue
		}
		if !ok {
			if isNaN(v) {
				best, nan = v, true
			}
			continue
		}
		if cmp*sign > 0 {
			best = v
		}
	}
	if s, ok := best.(String); ok && s.T == TAnyURI && hasString {
		return one(Str(s.V)), nil
	}
	return one(promote(best, maxRank)), nil
}

func promote(a Atomic, rank int) Atomic {
	r, ok := numRank(a)
	if !ok || r >= rank {
		return a
	}
	switch rank {
	case rDecimal:
		return Decimal{toRat(a)}
	case rFloat:
		return Double{float64(float32(toFloat(a))), TFloat}
	case rDouble:
		return Dbl(toFloat(a))
	}
	return a
}
