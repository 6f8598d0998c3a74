package xpath2

import (
	"math"
	"math/big"
	"net/url"
	"strings"
)

// CodepointCollation is the only collation supported.
const CodepointCollation = "http://www.w3.org/2005/xpath-functions/collation/codepoint"

func one(a Atomic) Sequence { return Sequence{a} }

func boolSeq(b bool) (Sequence, error) { return Sequence{Boolean(b)}, nil }

func strSeq(s string) (Sequence, error) { return Sequence{Str(s)}, nil }

func intSeq(i int64) (Sequence, error) { return Sequence{Int(i)}, nil }

// argAtomic returns the one optional atomic value of an argument.
func argAtomic(s Sequence) (Atomic, error) { return atomizeOpt(s) }

// argString converts an xs:string? argument ("" for the empty sequence).
func argString(s Sequence) (string, error) {
	a, err := atomizeOpt(s)
	if err != nil || a == nil {
		return "", err
	}
	if !isStringLike(a.Type()) {
		return "", errf("XPTY0004", "expected xs:string, got %s", a.Type())
	}
	return a.String(), nil
}

// argStringReq converts an xs:string argument that must not be empty.
func argStringReq(s Sequence) (string, error) {
	if len(s) == 0 {
		return "", errf("XPTY0004", "expected xs:string, got an empty sequence")
	}
	return argString(s)
}

// argNumeric converts an numeric? argument; untyped values become doubles.
func argNumeric(s Sequence) (Atomic, error) {
	a, err := atomizeOpt(s)
	if err != nil || a == nil {
		return nil, err
	}
	if a.Type() == TUntypedAtomic {
		return castAtomic(a, TDouble, nil)
	}
	if _, ok := numRank(a); !ok {
		return nil, errf("XPTY0004", "expected a number, got %s", a.Type())
	}
	return a, nil
}

func argInt(s Sequence) (int64, error) {
	a, err := atomizeOpt(s)
	if err != nil {
		return 0, err
	}
	if a == nil {
		return 0, errf("XPTY0004", "expected xs:integer, got an empty sequence")
	}
	i, ok := a.(Integer)
	if !ok {
		if a.Type() == TUntypedAtomic {
			v, err := castAtomic(a, TInteger, nil)
			if err != nil {
				return 0, err
			}
			i = v.(Integer)
		} else {
			return 0, errf("XPTY0004", "expected xs:integer, got %s", a.Type())
		}
	}
	if !i.V.IsInt64() {
		if i.V.Sign() > 0 {
			return math.MaxInt64, nil
		}
		return math.MinInt64, nil
	}
	return i.V.Int64(), nil
}

func argCollation(c Context, s Sequence) error {
	u, err := argString(s)
	if err != nil {
		return err
	}
	if u == CodepointCollation {
		return nil
	}
	if base, err := url.Parse(c.c.dyn.sc.BaseURI); err == nil {
		if ref, err := url.Parse(u); err == nil && base.ResolveReference(ref).String() == CodepointCollation {
			return nil
		}
	}
	return errf("FOCH0002", "unsupported collation %q", u)
}

func contextNode(c Context, args []Sequence) (Node, bool, error) {
	if len(args) == 0 {
		if c.c.item == nil {
			return nil, false, errf("XPDY0002", "no context item")
		}
		n, ok := c.c.item.(Node)
		if !ok {
			return nil, false, errf("XPTY0004", "the context item is not a node")
		}
		return n, true, nil
	}
	if len(args[0]) == 0 {
		return nil, false, nil
	}
	if len(args[0]) > 1 {
		return nil, false, errf("XPTY0004", "expected one node, got %d items", len(args[0]))
	}
	n, ok := args[0][0].(Node)
	if !ok {
		return nil, false, errf("XPTY0004", "expected a node")
	}
	return n, true, nil
}

func registerStandard(l *FunctionLibrary) {
	fn := func(name string, min, max int, impl FuncImpl) { l.Register(FnNamespace, name, min, max, impl) }

	// accessors
	fn("string", 0, 1, func(c Context, args []Sequence) (Sequence, error) {
		var s Sequence
		if len(args) == 0 {
			if c.c.item == nil {
				return nil, errf("XPDY0002", "no context item for string()")
			}
			s = Sequence{c.c.item}
		} else {
			s = args[0]
		}
		if len(s) == 0 {
			return strSeq("")
		}
		if len(s) > 1 {
			return nil, errf("XPTY0004", "string() of %d items", len(s))
		}
		if n, ok := s[0].(Node); ok {
			return strSeq(n.StringValue())
		}
		return strSeq(s[0].(Atomic).String())
	})
	fn("data", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		out := make(Sequence, len(args[0]))
		for i, it := range args[0] {
			out[i] = atomizeItem(it)
		}
		return out, nil
	})
	fn("node-name", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		n, ok, err := contextNode(c, args)
		if err != nil || !ok {
			return nil, err
		}
		switch n.Kind() {
		case ElementNode, AttributeNode:
			return one(QName{n.NamespaceURI(), n.Prefix(), n.LocalName(), TQName}), nil
		case PINode:
			return one(QName{"", "", n.LocalName(), TQName}), nil
		}
		return nil, nil
	})
	fn("nilled", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		n, ok, err := contextNode(c, args)
		if err != nil || !ok || n.Kind() != ElementNode {
			return nil, err
		}
		return boolSeq(false)
	})
	fn("base-uri", 0, 1, func(c Context, args []Sequence) (Sequence, error) { return nil, nil })
	fn("document-uri", 1, 1, func(c Context, args []Sequence) (Sequence, error) { return nil, nil })
	fn("static-base-uri", 0, 0, func(c Context, args []Sequence) (Sequence, error) {
		if c.c.dyn.sc.BaseURI == "" {
			return nil, nil
		}
		return one(String{c.c.dyn.sc.BaseURI, TAnyURI}), nil
	})
	fn("default-collation", 0, 0, func(c Context, args []Sequence) (Sequence, error) { return strSeq(CodepointCollation) })
	fn("error", 0, 3, fnError)
	fn("trace", 2, 2, func(c Context, args []Sequence) (Sequence, error) { return args[0], nil })

	// node functions
	nameFn := func(kind string) FuncImpl {
		return func(c Context, args []Sequence) (Sequence, error) {
			n, ok, err := contextNode(c, args)
			if err != nil {
				return nil, err
			}
			if !ok {
				if kind == "namespace-uri" {
					return one(String{"", TAnyURI}), nil
				}
				return strSeq("")
			}
			switch kind {
			case "name":
				if n.Kind() == ElementNode || n.Kind() == AttributeNode {
					if p := n.Prefix(); p != "" {
						return strSeq(p + ":" + n.LocalName())
					}
				}
				return strSeq(n.LocalName())
			case "local-name":
				return strSeq(n.LocalName())
			}
			return one(String{n.NamespaceURI(), TAnyURI}), nil
		}
	}
	fn("name", 0, 1, nameFn("name"))
	fn("local-name", 0, 1, nameFn("local-name"))
	fn("namespace-uri", 0, 1, nameFn("namespace-uri"))
	fn("root", 0, 1, func(c Context, args []Sequence) (Sequence, error) {
		n, ok, err := contextNode(c, args)
		if err != nil || !ok {
			return nil, err
		}
		return Sequence{nodeRoot(n)}, nil
	})
	fn("lang", 1, 2, func(c Context, args []Sequence) (Sequence, error) {
		want, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		n, ok, err := contextNode(c, args[1:])
		if err != nil {
			return nil, err
		}
		for ; ok && n != nil; n = n.Parent() {
			for _, a := range n.Attributes() {
				if a.LocalName() == "lang" && a.NamespaceURI() == "http://www.w3.org/XML/1998/namespace" {
					v := strings.ToLower(a.StringValue())
					w := strings.ToLower(want)
					return boolSeq(v == w || strings.HasPrefix(v, w+"-"))
				}
			}
		}
		return boolSeq(false)
	})
	fn("number", 0, 1, func(c Context, args []Sequence) (Sequence, error) {
		var s Sequence
		if len(args) == 0 {
			if c.c.item == nil {
				return nil, errf("XPDY0002", "no context item for number()")
			}
			s = Sequence{c.c.item}
		} else {
			s = args[0]
		}
		a, err := atomizeOpt(s)
		if err != nil {
			return nil, err
		}
		if a == nil {
			return one(Dbl(math.NaN())), nil
		}
		v, err := castAtomic(a, TDouble, nil)
		if err != nil {
			return one(Dbl(math.NaN())), nil
		}
		return one(v), nil
	})

	// boolean
	fn("true", 0, 0, func(Context, []Sequence) (Sequence, error) { return boolSeq(true) })
	fn("false", 0, 0, func(Context, []Sequence) (Sequence, error) { return boolSeq(false) })
	fn("boolean", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		b, err := ebv(args[0])
		if err != nil {
			return nil, err
		}
		return boolSeq(b)
	})
	fn("not", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		b, err := ebv(args[0])
		if err != nil {
			return nil, err
		}
		return boolSeq(!b)
	})

	registerNumeric(fn)
	registerStrings(fn)
	registerSequences(fn)
	registerDates(fn)
	registerQNames(fn)
}

func fnError(c Context, args []Sequence) (Sequence, error) {
	code, msg := "FOER0000", "error() called"
	if len(args) > 0 && len(args[0]) > 0 {
		if q, ok := args[0][0].(QName); ok {
			code = q.Local
		}
	}
	if len(args) > 1 {
		s, _ := argString(args[1])
		msg = s
	}
	return nil, &Error{Code: code, Msg: msg}
}

func registerNumeric(fn func(string, int, int, FuncImpl)) {
	unary := func(name string, f func(float64) float64, dec func(*big.Rat) *big.Rat) {
		fn(name, 1, 1, func(c Context, args []Sequence) (Sequence, error) {
			a, err := argNumeric(args[0])
			if err != nil || a == nil {
				return nil, err
			}
			switch v := a.(type) {
			case Integer:
				r := dec(new(big.Rat).SetInt(v.V))
				return one(Integer{new(big.Int).Set(r.Num()), TInteger}), nil
			case Decimal:
				return one(Decimal{dec(v.V)}), nil
			case Double:
				r := f(v.V)
				if v.T == TFloat {
					r = float64(float32(r))
				}
				return one(Double{r, v.T}), nil
			}
			return nil, nil
		})
	}
	unary("abs", math.Abs, func(r *big.Rat) *big.Rat { return new(big.Rat).Abs(r) })
	unary("ceiling", math.Ceil, func(r *big.Rat) *big.Rat { return ratFloor(new(big.Rat).Neg(ratFloor(new(big.Rat).Neg(r)))) })
	unary("floor", math.Floor, ratFloor)
	unary("round", func(f float64) float64 {
		if math.IsNaN(f) || math.IsInf(f, 0) || f == 0 {
			return f
		}
		r := math.Floor(f + 0.5)
		if r == 0 && f < 0 {
			return math.Copysign(0, -1)
		}
		if math.Abs(f) >= 1<<52 {
			return f
		}
		return r
	}, func(r *big.Rat) *big.Rat { return ratFloor(new(big.Rat).Add(r, big.NewRat(1, 2))) })
	fn("round-half-to-even", 1, 2, func(c Context, args []Sequence) (Sequence, error) {
		a, err := argNumeric(args[0])
		if err != nil || a == nil {
			return nil, err
		}
		prec := int64(0)
		if len(args) > 1 {
			if prec, err = argInt(args[1]); err != nil {
				return nil, err
			}
		}
		if prec > 1000 {
			prec = 1000
		}
		if prec < -1000 {
			prec = -1000
		}
		round := func(r *big.Rat) *big.Rat {
			if prec >= 0 {
				return roundRatHalfEven(r, int(prec))
			}
			scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(-prec), nil))
			x := roundRatHalfEven(new(big.Rat).Quo(r, scale), 0)
			return x.Mul(x, scale)
		}
		switch v := a.(type) {
		case Integer:
			r := round(new(big.Rat).SetInt(v.V))
			return one(Integer{new(big.Int).Set(r.Num()), TInteger}), nil
		case Decimal:
			return one(Decimal{round(v.V)}), nil
		case Double:
			if math.IsNaN(v.V) || math.IsInf(v.V, 0) || v.V == 0 {
				return one(v), nil
			}
			bits := 64
			if v.T == TFloat {
				bits = 32
			}
			r := new(big.Rat).SetFloat64(v.V)
			_ = bits
			f, _ := round(r).Float64()
			if v.T == TFloat {
				f = float64(float32(f))
			}
			if f == 0 && v.V < 0 {
				f = math.Copysign(0, -1)
			}
			return one(Double{f, v.T}), nil
		}
		return nil, nil
	})
}

func ratFloor(r *big.Rat) *big.Rat {
	q := new(big.Int).Div(r.Num(), r.Denom()) // Euclidean: floor for positive denominators
	return new(big.Rat).SetInt(q)
}
