package xpath2

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Item is one member of a Sequence: a Node or an Atomic value.
type Item any

// Sequence is an XDM sequence. A nil or empty Sequence is the empty
// sequence.
type Sequence []Item

// Atomic is an atomic value with its dynamic type.
type Atomic interface {
	// Type is the value's dynamic type.
	Type() *Type
	// String is the value's canonical lexical form (its cast to xs:string).
	String() string
}

// Error is an XPath error with its W3C error code (XPST0003, FORG0001...).
type Error struct {
	Code string
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Code + ": " + e.Msg + ": " + e.Err.Error()
	}
	return e.Code + ": " + e.Msg
}

// Unwrap returns the wrapped cause, if any.
func (e *Error) Unwrap() error { return e.Err }

func errf(code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// String is a string-like atomic value: xs:string and its subtypes,
// xs:untypedAtomic and xs:anyURI.
type String struct {
	V string
	T *Type
}

// Type implements Atomic.
func (s String) Type() *Type    { return s.T }
func (s String) String() string { return s.V }

// Str makes an xs:string.
func Str(s string) String { return String{s, TString} }

// Untyped makes an xs:untypedAtomic.
func Untyped(s string) String { return String{s, TUntypedAtomic} }

// Boolean is xs:boolean.
type Boolean bool

// Type implements Atomic.
func (Boolean) Type() *Type { return TBoolean }
func (b Boolean) String() string {
	if b {
		return "true"
	}
	return "false"
}

// Integer is xs:integer or one of its subtypes, of any size. V is never
// modified once the value is made.
type Integer struct {
	V *big.Int
	T *Type
}

// Type implements Atomic.
func (i Integer) Type() *Type    { return i.T }
func (i Integer) String() string { return i.V.String() }

// Int makes an xs:integer.
func Int(v int64) Integer { return Integer{big.NewInt(v), TInteger} }

// Decimal is xs:decimal; V is never modified once the value is made.
type Decimal struct{ V *big.Rat }

// Type implements Atomic.
func (Decimal) Type() *Type      { return TDecimal }
func (d Decimal) String() string { return formatRat(d.V) }

// Double is xs:double or xs:float (T tells which; a float's V is rounded to
// float32 precision).
type Double struct {
	V float64
	T *Type
}

// Type implements Atomic.
func (d Double) Type() *Type { return d.T }
func (d Double) String() string {
	if d.T == TFloat {
		return formatFloat(d.V, 32)
	}
	return formatFloat(d.V, 64)
}

// Dbl makes an xs:double.
func Dbl(v float64) Double { return Double{v, TDouble} }

// QName is xs:QName (or xs:NOTATION).
type QName struct {
	NS, Prefix, Local string
	T                 *Type
}

// Type implements Atomic.
func (q QName) Type() *Type { return q.T }
func (q QName) String() string {
	if q.Prefix != "" {
		return q.Prefix + ":" + q.Local
	}
	return q.Local
}

// Binary is xs:hexBinary or xs:base64Binary.
type Binary struct {
	B []byte
	T *Type
}

// Type implements Atomic.
func (b Binary) Type() *Type { return b.T }
func (b Binary) String() string {
	if b.T == THexBinary {
		return strings.ToUpper(hex.EncodeToString(b.B))
	}
	return base64.StdEncoding.EncodeToString(b.B)
}

// formatRat prints a decimal in canonical form: no exponent, no trailing
// zeros, no point for an integral value. r must have a terminating
// decimal expansion (all arithmetic keeps it so).
func formatRat(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	// find the number of decimal digits needed
	den := new(big.Int).Set(r.Denom())
	digits := 0
	ten := big.NewInt(10)
	two, five := big.NewInt(2), big.NewInt(5)
	m := new(big.Int)
	for den.Cmp(big.NewInt(1)) != 0 && digits < 100 {
		if m.Mod(den, two).Sign() == 0 {
			den.Div(den, two)
		} else if m.Mod(den, five).Sign() == 0 {
			den.Div(den, five)
		} else {
			break
		}
		digits++
	}
	_ = ten
	s := r.FloatString(digits)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// formatFloat prints an xs:double (bits 64) or xs:float (bits 32) in the
// XPath 2.0 canonical form.
func formatFloat(v float64, bits int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "INF"
	case math.IsInf(v, -1):
		return "-INF"
	case v == 0:
		if math.Signbit(v) {
			return "-0"
		}
		return "0"
	}
	a := math.Abs(v)
	if a >= 1e-6 && a < 1e6 {
		s := strconv.FormatFloat(v, 'f', -1, bits)
		return s
	}
	s := strconv.FormatFloat(v, 'E', -1, bits)
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// SingleAtomic returns the atomic value when seq holds exactly one.
func SingleAtomic(seq Sequence) (Atomic, bool) {
	if len(seq) != 1 {
		return nil, false
	}
	a, ok := seq[0].(Atomic)
	return a, ok
}
