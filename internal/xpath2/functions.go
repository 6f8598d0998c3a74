package xpath2

import (
	"math"
	"math/big"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
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

func registerStrings(fn func(string, int, int, FuncImpl)) {
	fn("codepoints-to-string", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		var b strings.Builder
		for _, it := range args[0] {
			a := atomizeItem(it)
			if a.Type() == TUntypedAtomic {
				v, err := castAtomic(a, TInteger, nil)
				if err != nil {
					return nil, err
				}
				a = v
			}
			i, ok := a.(Integer)
			if !ok {
				return nil, errf("XPTY0004", "codepoints-to-string of %s", a.Type())
			}
			cp := i.V.Int64()
			if !i.V.IsInt64() || !isXMLChar(cp) {
				return nil, errf("FOCH0001", "%s is not a valid XML character", i.V)
			}
			b.WriteRune(rune(cp))
		}
		return strSeq(b.String())
	})
	fn("string-to-codepoints", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		var out Sequence
		for _, r := range s {
			out = append(out, Int(int64(r)))
		}
		return out, nil
	})
	fn("compare", 2, 3, func(c Context, args []Sequence) (Sequence, error) {
		if len(args) == 3 {
			if err := argCollation(c, args[2]); err != nil {
				return nil, err
			}
		}
		if len(args[0]) == 0 || len(args[1]) == 0 {
			return nil, nil
		}
		a, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		b, err := argString(args[1])
		if err != nil {
			return nil, err
		}
		return intSeq(int64(strings.Compare(a, b)))
	})
	fn("codepoint-equal", 2, 2, func(c Context, args []Sequence) (Sequence, error) {
		if len(args[0]) == 0 || len(args[1]) == 0 {
			return nil, nil
		}
		a, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		b, err := argString(args[1])
		if err != nil {
			return nil, err
		}
		return boolSeq(a == b)
	})
	fn("concat", 2, -1, func(c Context, args []Sequence) (Sequence, error) {
		var b strings.Builder
		for _, s := range args {
			a, err := atomizeOpt(s)
			if err != nil {
				return nil, err
			}
			if a != nil {
				b.WriteString(a.String())
			}
		}
		return strSeq(b.String())
	})
	fn("string-join", 2, 2, func(c Context, args []Sequence) (Sequence, error) {
		sep, err := argString(args[1])
		if err != nil {
			return nil, err
		}
		if len(args[1]) == 0 {
			return nil, errf("XPTY0004", "string-join separator must not be empty sequence")
		}
		parts := make([]string, 0, len(args[0]))
		for _, it := range args[0] {
			a := atomizeItem(it)
			if !isStringLike(a.Type()) {
				return nil, errf("XPTY0004", "string-join of %s", a.Type())
			}
			parts = append(parts, a.String())
		}
		return strSeq(strings.Join(parts, sep))
	})
	fn("substring", 2, 3, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		start, end, err := positionWindow("substring", args)
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		i := 1.0
		for _, r := range s {
			if i >= start && i < end {
				b.WriteRune(r)
			}
			i++
		}
		return strSeq(b.String())
	})
	fn("string-length", 0, 1, func(c Context, args []Sequence) (Sequence, error) {
		s, err := ctxString(c, args)
		if err != nil {
			return nil, err
		}
		return intSeq(int64(utf8.RuneCountInString(s)))
	})
	fn("normalize-space", 0, 1, func(c Context, args []Sequence) (Sequence, error) {
		s, err := ctxString(c, args)
		if err != nil {
			return nil, err
		}
		return strSeq(collapse(s))
	})
	fn("normalize-unicode", 1, 2, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		form := "NFC"
		if len(args) == 2 {
			f, err := argString(args[1])
			if err != nil {
				return nil, err
			}
			form = strings.ToUpper(strings.TrimSpace(f))
		}
		switch form {
		case "NFC":
			return strSeq(norm.NFC.String(s))
		case "NFD":
			return strSeq(norm.NFD.String(s))
		case "NFKC":
			return strSeq(norm.NFKC.String(s))
		case "NFKD":
			return strSeq(norm.NFKD.String(s))
		case "":
			return strSeq(s)
		}
		return nil, errf("FOCH0003", "unsupported normalization form %q", form)
	})
	fn("upper-case", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		return strSeq(cases.Upper(language.Und).String(s))
	})
	fn("lower-case", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		return strSeq(cases.Lower(language.Und).String(s))
	})
	fn("translate", 3, 3, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		from, err := argStringReq(args[1])
		if err != nil {
			return nil, err
		}
		to, err := argStringReq(args[2])
		if err != nil {
			return nil, err
		}
		fr, tr := []rune(from), []rune(to)
		m := map[rune]rune{}
		for i, r := range fr {
			if _, seen := m[r]; seen {
				continue
			}
			if i < len(tr) {
				m[r] = tr[i]
			} else {
				m[r] = -1
			}
		}
		return strSeq(strings.Map(func(r rune) rune {
			if t, ok := m[r]; ok {
				return t
			}
			return r
		}, s))
	})
	fn("encode-for-uri", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		return strSeq(percentEncode(s, func(b byte) bool {
			return isAlnum(b) || strings.IndexByte("-_.~", b) >= 0
		}))
	})
	fn("iri-to-uri", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		return strSeq(percentEncode(s, func(b byte) bool { return b > 0x20 && b < 0x7f && strings.IndexByte("<>\"{}|\\^`", b) < 0 }))
	})
	fn("escape-html-uri", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		return strSeq(percentEncode(s, func(b byte) bool { return b >= 0x20 && b < 0x7f }))
	})
	strPred := func(name string, f func(a, b string) bool) {
		fn(name, 2, 3, func(c Context, args []Sequence) (Sequence, error) {
			if len(args) == 3 {
				if err := argCollation(c, args[2]); err != nil {
					return nil, err
				}
			}
			a, err := argString(args[0])
			if err != nil {
				return nil, err
			}
			b, err := argString(args[1])
			if err != nil {
				return nil, err
			}
			return boolSeq(f(a, b))
		})
	}
	strPred("contains", strings.Contains)
	strPred("starts-with", strings.HasPrefix)
	strPred("ends-with", strings.HasSuffix)
	strFn := func(name string, f func(a, b string) string) {
		fn(name, 2, 3, func(c Context, args []Sequence) (Sequence, error) {
			if len(args) == 3 {
				if err := argCollation(c, args[2]); err != nil {
					return nil, err
				}
			}
			a, err := argString(args[0])
			if err != nil {
				return nil, err
			}
			b, err := argString(args[1])
			if err != nil {
				return nil, err
			}
			return strSeq(f(a, b))
		})
	}
	strFn("substring-before", func(a, b string) string {
		if i := strings.Index(a, b); i >= 0 {
			return a[:i]
		}
		return ""
	})
	strFn("substring-after", func(a, b string) string {
		if b == "" {
			return a
		}
		if i := strings.Index(a, b); i >= 0 {
			return a[i+len(b):]
		}
		return ""
	})
	fn("matches", 2, 3, fnMatches)
	fn("replace", 3, 4, fnReplace)
	fn("tokenize", 2, 3, fnTokenize)
	fn("resolve-uri", 1, 2, func(c Context, args []Sequence) (Sequence, error) {
		if len(args[0]) == 0 {
			return nil, nil
		}
		rel, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		base := c.c.dyn.sc.BaseURI
		if len(args) == 2 {
			if base, err = argString(args[1]); err != nil {
				return nil, err
			}
		}
		r, err := url.Parse(rel)
		if err != nil {
			return nil, errf("FORG0002", "invalid URI %q", rel)
		}
		if r.IsAbs() {
			return one(String{rel, TAnyURI}), nil
		}
		b, err := url.Parse(base)
		if err != nil || !b.IsAbs() {
			return nil, errf("FORG0002", "invalid base URI %q", base)
		}
		return one(String{b.ResolveReference(r).String(), TAnyURI}), nil
	})
}

// positionWindow reads the start and optional length arguments of
// substring and subsequence: the positions p kept are start <= p < end.
func positionWindow(name string, args []Sequence) (start, end float64, err error) {
	st, err := argNumeric(args[1])
	if err != nil {
		return 0, 0, err
	}
	if st == nil {
		return 0, 0, errf("XPTY0004", "%s start must not be empty", name)
	}
	start, end = roundXPath(toFloat(st)), math.Inf(1)
	if len(args) == 3 {
		ln, err := argNumeric(args[2])
		if err != nil {
			return 0, 0, err
		}
		if ln == nil {
			return 0, 0, errf("XPTY0004", "%s length must not be empty", name)
		}
		end = start + roundXPath(toFloat(ln))
	}
	return start, end, nil
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

func percentEncode(s string, keep func(byte) bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if keep(s[i]) {
			b.WriteByte(s[i])
		} else {
			b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[s[i]>>4])+string("0123456789abcdef"[s[i]&15])))
		}
	}
	return b.String()
}

func isXMLChar(cp int64) bool {
	return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF)
}

func roundXPath(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return f
	}
	return math.Floor(f + 0.5)
}

func ctxString(c Context, args []Sequence) (string, error) {
	if len(args) == 0 {
		if c.c.item == nil {
			return "", errf("XPDY0002", "no context item")
		}
		if n, ok := c.c.item.(Node); ok {
			return n.StringValue(), nil
		}
		return c.c.item.(Atomic).String(), nil
	}
	a, err := atomizeOpt(args[0])
	if err != nil || a == nil {
		return "", err
	}
	return a.String(), nil
}

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

// ---- dates

func registerDates(fn func(string, int, int, FuncImpl)) {
	fn("current-dateTime", 0, 0, func(c Context, args []Sequence) (Sequence, error) {
		return one(c.c.dyn.current()), nil
	})
	fn("current-date", 0, 0, func(c Context, args []Sequence) (Sequence, error) {
		return one(c.c.dyn.current().clearFor(TDate)), nil
	})
	fn("current-time", 0, 0, func(c Context, args []Sequence) (Sequence, error) {
		return one(c.c.dyn.current().clearFor(TTime)), nil
	})
	fn("implicit-timezone", 0, 0, func(c Context, args []Sequence) (Sequence, error) {
		return one(Duration{T: TDayTimeDur, Secs: int64(c.c.dyn.dc.ImplicitTimezone) * 60}), nil
	})
	durPart := func(name string, want *Type, f func(d Duration) Atomic) {
		fn(name, 1, 1, func(c Context, args []Sequence) (Sequence, error) {
			a, err := argAtomic(args[0])
			if err != nil || a == nil {
				return nil, err
			}
			if a.Type() == TUntypedAtomic {
				if a, err = castAtomic(a, want, nil); err != nil {
					return nil, err
				}
			}
			d, ok := a.(Duration)
			if !ok {
				return nil, errf("XPTY0004", "%s expects a duration, got %s", name, a.Type())
			}
			return one(f(d)), nil
		})
	}
	durPart("years-from-duration", TDuration, func(d Duration) Atomic { return Int(d.Months / 12) })
	durPart("months-from-duration", TDuration, func(d Duration) Atomic { return Int(d.Months % 12) })
	durPart("days-from-duration", TDuration, func(d Duration) Atomic { return Int(d.Secs / 86400) })
	durPart("hours-from-duration", TDuration, func(d Duration) Atomic { return Int(d.Secs % 86400 / 3600) })
	durPart("minutes-from-duration", TDuration, func(d Duration) Atomic { return Int(d.Secs % 3600 / 60) })
	durPart("seconds-from-duration", TDuration, func(d Duration) Atomic {
		r := new(big.Rat).SetFrac(big.NewInt(d.Secs%60*1e9+d.Nanos), big.NewInt(1e9))
		return Decimal{r}
	})
	dtPart := func(name string, want *Type, f func(d DateTime) Atomic) {
		fn(name, 1, 1, func(c Context, args []Sequence) (Sequence, error) {
			a, err := argAtomic(args[0])
			if err != nil || a == nil {
				return nil, err
			}
			if a.Type() == TUntypedAtomic {
				if a, err = castAtomic(a, want, nil); err != nil {
					return nil, err
				}
			}
			d, ok := a.(DateTime)
			if !ok || d.T != want {
				return nil, errf("XPTY0004", "%s expects %s, got %s", name, want, a.Type())
			}
			r := f(d)
			if r == nil {
				return nil, nil
			}
			return one(r), nil
		})
	}
	tzOf := func(d DateTime) Atomic {
		if !d.HasTZ {
			return nil
		}
		return Duration{T: TDayTimeDur, Secs: int64(d.TZ) * 60}
	}
	secs := func(d DateTime) Atomic {
		return Decimal{new(big.Rat).SetFrac(big.NewInt(int64(d.S)*1e9+int64(d.Nano)), big.NewInt(1e9))}
	}
	for _, t := range []*Type{TDateTime, TDate} {
		sfx := "-from-" + t.Name
		dtPart("year"+sfx, t, func(d DateTime) Atomic { return Int(int64(d.Y)) })
		dtPart("month"+sfx, t, func(d DateTime) Atomic { return Int(int64(d.Mo)) })
		dtPart("day"+sfx, t, func(d DateTime) Atomic { return Int(int64(d.D)) })
		dtPart("timezone"+sfx, t, tzOf)
	}
	for _, t := range []*Type{TDateTime, TTime} {
		sfx := "-from-" + t.Name
		dtPart("hours"+sfx, t, func(d DateTime) Atomic { return Int(int64(d.H)) })
		dtPart("minutes"+sfx, t, func(d DateTime) Atomic { return Int(int64(d.Mi)) })
		dtPart("seconds"+sfx, t, secs)
	}
	dtPart("timezone-from-time", TTime, tzOf)
	for _, t := range []*Type{TDateTime, TDate, TTime} {
		t := t
		fn("adjust-"+t.Name+"-to-timezone", 1, 2, func(c Context, args []Sequence) (Sequence, error) {
			a, err := argAtomic(args[0])
			if err != nil || a == nil {
				return nil, err
			}
			if a.Type() == TUntypedAtomic {
				if a, err = castAtomic(a, t, nil); err != nil {
					return nil, err
				}
			}
			d, ok := a.(DateTime)
			if !ok || d.T != t {
				return nil, errf("XPTY0004", "expected %s, got %s", t, a.Type())
			}
			tz, has := c.c.dyn.dc.ImplicitTimezone, true
			if len(args) == 2 {
				z, err := argAtomic(args[1])
				if err != nil {
					return nil, err
				}
				if z == nil {
					has = false
				} else {
					zd, ok := z.(Duration)
					if !ok || zd.T != TDayTimeDur {
						return nil, errf("XPTY0004", "timezone must be xs:dayTimeDuration")
					}
					if zd.Nanos != 0 || zd.Secs%60 != 0 || zd.Secs > 14*3600 || zd.Secs < -14*3600 {
						return nil, errf("FODT0003", "invalid timezone %s", zd)
					}
					tz = int(zd.Secs / 60)
				}
			}
			if !has {
				d.HasTZ, d.TZ = false, 0
				return one(d), nil
			}
			if !d.HasTZ {
				d.HasTZ, d.TZ = true, tz
				return one(d), nil
			}
			secs := d.localSeconds() + int64(tz-d.TZ)*60
			r := fromLocalSeconds(TDateTime, secs, d.Nano, tz, true)
			if t == TTime {
				r = r.clearFor(TTime)
			} else if t == TDate {
				r = r.clearFor(TDate)
			}
			return one(r), nil
		})
	}
	fn("dateTime", 2, 2, func(c Context, args []Sequence) (Sequence, error) {
		a, err := argAtomic(args[0])
		if err != nil || a == nil {
			return nil, err
		}
		b, err := argAtomic(args[1])
		if err != nil || b == nil {
			return nil, err
		}
		if a.Type() == TUntypedAtomic {
			if a, err = castAtomic(a, TDate, nil); err != nil {
				return nil, err
			}
		}
		if b.Type() == TUntypedAtomic {
			if b, err = castAtomic(b, TTime, nil); err != nil {
				return nil, err
			}
		}
		d, ok1 := a.(DateTime)
		t, ok2 := b.(DateTime)
		if !ok1 || !ok2 || d.T != TDate || t.T != TTime {
			return nil, errf("XPTY0004", "dateTime expects xs:date and xs:time")
		}
		r := d
		r.T = TDateTime
		r.H, r.Mi, r.S, r.Nano = t.H, t.Mi, t.S, t.Nano
		switch {
		case d.HasTZ && t.HasTZ && d.TZ != t.TZ:
			return nil, errf("FORG0008", "date and time have different timezones")
		case t.HasTZ:
			r.HasTZ, r.TZ = true, t.TZ
		}
		return one(r), nil
	})
}

// ---- QNames

func registerQNames(fn func(string, int, int, FuncImpl)) {
	fn("QName", 2, 2, func(c Context, args []Sequence) (Sequence, error) {
		uri, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		lex, err := argString(args[1])
		if err != nil {
			return nil, err
		}
		prefix, local, hasPrefix := strings.Cut(lex, ":")
		if !hasPrefix {
			prefix, local = "", lex
		}
		if !isNCName(local) || (hasPrefix && !isNCName(prefix)) {
			return nil, errf("FOCA0002", "%q is not a lexical QName", lex)
		}
		if hasPrefix && uri == "" {
			return nil, errf("FOCA0002", "a prefixed QName needs a namespace URI")
		}
		return one(QName{uri, prefix, local, TQName}), nil
	})
	fn("resolve-QName", 2, 2, func(c Context, args []Sequence) (Sequence, error) {
		if len(args[0]) == 0 {
			return nil, nil
		}
		lex, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		n, ok, err := contextNode(c, args[1:])
		if err != nil {
			return nil, err
		}
		if !ok || n.Kind() != ElementNode {
			return nil, errf("XPTY0004", "resolve-QName needs an element")
		}
		prefix, local, hasPrefix := strings.Cut(lex, ":")
		if !hasPrefix {
			prefix, local = "", lex
		}
		if !isNCName(local) || (hasPrefix && !isNCName(prefix)) {
			return nil, errf("FOCA0002", "%q is not a lexical QName", lex)
		}
		uri, found := n.LookupNamespace(prefix)
		if !found && prefix != "" {
			return nil, errf("FONS0004", "prefix %q is not in scope", prefix)
		}
		return one(QName{uri, prefix, local, TQName}), nil
	})
	qpart := func(name string, f func(q QName) Atomic) {
		fn(name, 1, 1, func(c Context, args []Sequence) (Sequence, error) {
			a, err := argAtomic(args[0])
			if err != nil || a == nil {
				return nil, err
			}
			q, ok := a.(QName)
			if !ok {
				return nil, errf("XPTY0004", "%s expects xs:QName, got %s", name, a.Type())
			}
			r := f(q)
			if r == nil {
				return nil, nil
			}
			return one(r), nil
		})
	}
	qpart("prefix-from-QName", func(q QName) Atomic {
		if q.Prefix == "" {
			return nil
		}
		return String{q.Prefix, TNCName}
	})
	qpart("local-name-from-QName", func(q QName) Atomic { return String{q.Local, TNCName} })
	qpart("namespace-uri-from-QName", func(q QName) Atomic { return String{q.NS, TAnyURI} })
	fn("namespace-uri-for-prefix", 2, 2, func(c Context, args []Sequence) (Sequence, error) {
		p, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		n, ok, err := contextNode(c, args[1:])
		if err != nil || !ok {
			return nil, err
		}
		u, found := n.LookupNamespace(p)
		if !found || u == "" {
			return nil, nil
		}
		return one(String{u, TAnyURI}), nil
	})
	fn("in-scope-prefixes", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		n, ok, err := contextNode(c, args)
		if err != nil || !ok {
			return nil, err
		}
		ps := n.InScopePrefixes()
		sort.Strings(ps)
		out := make(Sequence, len(ps))
		for i, p := range ps {
			out[i] = Str(p)
		}
		return out, nil
	})
}
