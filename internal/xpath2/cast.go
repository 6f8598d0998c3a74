package xpath2

import (
	"encoding/base64"
	"encoding/hex"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

var (
	decimalRe  = regexp.MustCompile(`^[+-]?(\d+(\.\d*)?|\.\d+)$`)
	integerRe  = regexp.MustCompile(`^[+-]?\d+$`)
	doubleRe   = regexp.MustCompile(`^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$`)
	languageRe = regexp.MustCompile(`^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$`)
)

// collapse applies XML Schema's whitespace collapsing.
func collapse(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			if c != ' ' || i == 0 || i == len(s)-1 || s[i+1] == ' ' {
				clean = false
				break
			}
		}
	}
	if clean {
		return s
	}
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }), " ")
}

func isHex(b byte) bool { return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F' }

func isNCName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if i == 0 && !isNameStart(r) {
			return false
		}
		if !isNameChar(r) {
			return false
		}
	}
	return true
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if i == 0 && !(isNameStart(r) || r == ':') {
			return false
		}
		if !(isNameChar(r) || r == ':') {
			return false
		}
	}
	return true
}

func isNMTOKEN(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(isNameChar(r) || r == ':') {
			return false
		}
	}
	return true
}

// castAllowed tells whether primitive type src may be cast to primitive
// type dst (F&O 17.1).
func castAllowed(src, dst *Type) bool {
	if src == dst || src == TString || src == TUntypedAtomic || dst == TString || dst == TUntypedAtomic {
		if src == TUntypedAtomic && (dst == TQName || dst == TNOTATION) {
			return false
		}
		return true
	}
	num := func(t *Type) bool { return t == TDecimal || t == TDouble || t == TFloat || t == TBoolean }
	switch {
	case num(src):
		return num(dst)
	case src == TDuration:
		return dst == TDuration
	case src == TDateTime:
		switch dst {
		case TTime, TDate, TGYearMonth, TGYear, TGMonthDay, TGDay, TGMonth:
			return true
		}
	case src == TDate:
		switch dst {
		case TDateTime, TGYearMonth, TGYear, TGMonthDay, TGDay, TGMonth:
			return true
		}
	case src == THexBinary || src == TBase64Binary:
		return dst == THexBinary || dst == TBase64Binary
	case src == TQName:
		return dst == TNOTATION
	}
	return false
}

// castAtomic casts a to type t; ns resolves prefixes for casts to xs:QName.
func castAtomic(a Atomic, t *Type, ns map[string]string) (Atomic, error) {
	at := a.Type()
	if at == t {
		return a, nil
	}
	src, dst := at.prim, t.prim
	if src == TString || src == TUntypedAtomic {
		if src == TUntypedAtomic && dst == TQName {
			return nil, errf("XPTY0004", "cannot cast xs:untypedAtomic to xs:QName")
		}
		return castFromString(a.String(), t, ns)
	}
	if src == TAnyURI && (dst == TString || dst == TUntypedAtomic || dst == TAnyURI) {
		return castFromString(a.String(), t, ns)
	}
	if !castAllowed(src, dst) {
		return nil, errf("XPTY0004", "cannot cast %s to %s", at, t)
	}
	switch dst {
	case TString, TUntypedAtomic:
		return castFromString(a.String(), t, ns)
	case TBoolean:
		switch v := a.(type) {
		case Integer:
			return Boolean(v.V.Sign() != 0), nil
		case Decimal:
			return Boolean(v.V.Sign() != 0), nil
		case Double:
			return Boolean(!(v.V == 0 || math.IsNaN(v.V))), nil
		}
	case TDouble, TFloat:
		var f float64
		switch v := a.(type) {
		case Boolean:
			if v {
				f = 1
			}
		case Integer:
			f, _ = new(big.Float).SetInt(v.V).Float64()
		case Decimal:
			f, _ = v.V.Float64()
		case Double:
			f = v.V
		}
		if dst == TFloat {
			f = float64(float32(f))
		}
		return Double{f, dst}, nil
	case TDecimal:
		var r *big.Rat
		switch v := a.(type) {
		case Boolean:
			r = big.NewRat(0, 1)
			if v {
				r = big.NewRat(1, 1)
			}
		case Integer:
			r = new(big.Rat).SetInt(v.V)
		case Decimal:
			r = v.V
		case Double:
			if math.IsNaN(v.V) || math.IsInf(v.V, 0) {
				return nil, errf("FOCA0002", "cannot cast %s to %s", v, t)
			}
			bits := 64
			if v.T == TFloat {
				bits = 32
			}
			r, _ = new(big.Rat).SetString(strconv.FormatFloat(v.V, 'f', -1, bits))
		}
		if t.DerivesFrom(TInteger) {
			i := new(big.Int).Quo(r.Num(), r.Denom())
			return makeInteger(i, t)
		}
		return Decimal{r}, nil
	case TDuration:
		d := a.(Duration)
		switch t {
		case TYearMonthDur:
			return Duration{T: t, Months: d.Months}, nil
		case TDayTimeDur:
			return Duration{T: t, Secs: d.Secs, Nanos: d.Nanos}, nil
		}
		d.T = t
		return d, nil
	case TDateTime, TTime, TDate, TGYearMonth, TGYear, TGMonthDay, TGDay, TGMonth:
		d := a.(DateTime)
		return d.clearFor(t), nil
	case THexBinary, TBase64Binary:
		b := a.(Binary)
		return Binary{b.B, t}, nil
	case TQName, TNOTATION:
		q := a.(QName)
		q.T = t
		return q, nil
	}
	return nil, errf("XPTY0004", "cannot cast %s to %s", at, t)
}

func makeInteger(i *big.Int, t *Type) (Atomic, error) {
	for x := t; x != nil && x != TInteger; x = x.Parent {
		if x.min != nil {
			lo, _ := new(big.Int).SetString(*x.min, 10)
			if i.Cmp(lo) < 0 {
				return nil, errf("FORG0001", "%s is out of the range of %s", i, t)
			}
		}
		if x.max != nil {
			hi, _ := new(big.Int).SetString(*x.max, 10)
			if i.Cmp(hi) > 0 {
				return nil, errf("FORG0001", "%s is out of the range of %s", i, t)
			}
		}
	}
	return Integer{i, t}, nil
}

// castFromString casts a lexical form to type t.
func castFromString(s string, t *Type, ns map[string]string) (Atomic, error) {
	bad := func() (Atomic, error) { return nil, errf("FORG0001", "%q is not a valid %s", s, t) }
	switch t.prim {
	case TString:
		switch t {
		case TString:
			return String{s, t}, nil
		case TNormalized:
			return String{strings.Map(func(r rune) rune {
				if r == '\t' || r == '\n' || r == '\r' {
					return ' '
				}
				return r
			}, s), t}, nil
		}
		c := collapse(s)
		ok := true
		switch {
		case t == TToken:
		case t == TLanguage:
			ok = languageRe.MatchString(c)
		case t == TNMTOKEN:
			ok = isNMTOKEN(c)
		case t == TName:
			ok = isName(c)
		default: // NCName, ID, IDREF, ENTITY
			ok = isNCName(c)
		}
		if !ok {
			return bad()
		}
		return String{c, t}, nil
	case TUntypedAtomic:
		return String{s, TUntypedAtomic}, nil
	case TAnyURI:
		c := collapse(s)
		if strings.HasPrefix(c, ":") {
			return bad()
		}
		for i := 0; i < len(c); i++ {
			if c[i] == '%' && (i+2 >= len(c) || !isHex(c[i+1]) || !isHex(c[i+2])) {
				return bad()
			}
		}
		return String{c, TAnyURI}, nil
	case TBoolean:
		switch collapse(s) {
		case "true", "1":
			return Boolean(true), nil
		case "false", "0":
			return Boolean(false), nil
		}
		return bad()
	case TDecimal:
		c := collapse(s)
		if t.DerivesFrom(TInteger) {
			if !integerRe.MatchString(c) {
				return bad()
			}
			i, _ := new(big.Int).SetString(strings.TrimPrefix(c, "+"), 10)
			return makeInteger(i, t)
		}
		if !decimalRe.MatchString(c) {
			return bad()
		}
		r, ok := new(big.Rat).SetString(strings.TrimPrefix(c, "+"))
		if !ok {
			return bad()
		}
		return Decimal{r}, nil
	case TDouble, TFloat:
		c := collapse(s)
		var f float64
		switch c {
		case "INF":
			f = math.Inf(1)
		case "-INF":
			f = math.Inf(-1)
		case "NaN":
			f = math.NaN()
		default:
			if !doubleRe.MatchString(c) {
				return bad()
			}
			var err error
			f, err = strconv.ParseFloat(c, 64)
			if err != nil && !strings.Contains(err.Error(), "range") {
				return bad()
			}
		}
		if t == TFloat {
			f32, _ := strconv.ParseFloat(c, 32)
			if c != "INF" && c != "-INF" && c != "NaN" {
				f = float64(float32(f32))
			} else {
				f = float64(float32(f))
			}
		}
		return Double{f, t.prim}, nil
	case TDuration:
		return parseDuration(s, t)
	case TDateTime, TTime, TDate, TGYearMonth, TGYear, TGMonthDay, TGDay, TGMonth:
		return parseDateTime(s, t)
	case THexBinary:
		c := collapse(s)
		b, err := hex.DecodeString(c)
		if err != nil {
			return bad()
		}
		return Binary{b, t}, nil
	case TBase64Binary:
		c := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
		b, err := base64.StdEncoding.Strict().DecodeString(c)
		if err != nil {
			return bad()
		}
		return Binary{b, t}, nil
	case TQName:
		c := collapse(s)
		prefix, local, ok := strings.Cut(c, ":")
		if !ok {
			prefix, local = "", c
		}
		if !isNCName(local) || (ok && !isNCName(prefix)) {
			return bad()
		}
		uri := ""
		if prefix != "" || ns != nil {
			u, found := ns[prefix]
			if !found && prefix != "" {
				return nil, errf("FONS0004", "namespace prefix %q is not declared", prefix)
			}
			uri = u
		}
		return QName{uri, prefix, local, TQName}, nil
	case TNOTATION:
		return nil, errf("XPST0080", "cannot cast to xs:NOTATION")
	}
	return nil, errf("XPTY0004", "cannot cast to %s", t)
}
