package xpath1

import (
	"math"
	"strconv"
	"strings"
)

// Value is an XPath 1.0 value: float64, string, bool or NodeSet.
type Value = any

// NodeSet is a node-set, in document order without duplicates.
type NodeSet []Node

// String is string() of v (section 4.2).
func String(v Value) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return FormatNumber(t)
	case bool:
		if t {
			return "true"
		}
		return "false"
	case NodeSet:
		if len(t) == 0 {
			return ""
		}
		return t[0].StringValue()
	}
	return ""
}

// Num is number() of v (section 4.4).
func Num(v Value) float64 {
	switch t := v.(type) {
	case float64:
		return t
	case string:
		return Number(t)
	case bool:
		if t {
			return 1
		}
		return 0
	case NodeSet:
		if len(t) == 0 {
			return math.NaN()
		}
		return Number(t[0].StringValue())
	}
	return math.NaN()
}

// Bool is boolean() of v (section 4.3).
func Bool(v Value) bool {
	switch t := v.(type) {
	case bool:
		return t
	case string:
		return t != ""
	case float64:
		return t != 0 && !math.IsNaN(t)
	case NodeSet:
		return len(t) > 0
	}
	return false
}

// FormatNumber writes f as string() does (section 4.2): NaN, Infinity,
// -Infinity, an integer without a decimal point (0 for -0), otherwise a
// decimal without an exponent with as many digits as distinguish f.
func FormatNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	case f == math.Trunc(f) && math.Abs(f) < 1e15:
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// Number converts a string as number() does (section 4.4): optional
// whitespace, an optional '-', a Number (digits with an optional decimal
// point; no exponent, no '+', no "Infinity"), optional whitespace;
// anything else is NaN. Whitespace is XPath's: space, tab, CR, LF.
func Number(s string) float64 {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	s = s[i:j]
	if s == "" {
		return math.NaN()
	}
	if len(s) <= 15 {
		// A plain integer (a counter, a quantity), exact in a float64.
		n := 0
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				n = -1
				break
			}
			n = n*10 + int(s[i]-'0')
		}
		if n >= 0 {
			return float64(n)
		}
	}
	digits, dot := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		case c == '-' && i == 0:
		default:
			return math.NaN()
		}
	}
	if digits == 0 {
		return math.NaN()
	}
	// The syntax is checked: an error can only be a value out of range,
	// for which ParseFloat gives ±Inf.
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// Round is round() (section 4.4): the integer closest to f, the greater
// of two; NaN and infinities stay, and from -0.5 up to -0 it is -0.
func Round(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return f
	}
	if f < 0 && f >= -0.5 {
		return math.Copysign(0, -1)
	}
	// floor(f + 0.5) would round 0.49999999999999994 up: the sum rounds
	// to 1 in floating point.
	r := math.Floor(f)
	if f-r >= 0.5 {
		r++
	}
	return r
}

// NormalizeSpace is normalize-space() of s: XPath's whitespace (space,
// tab, CR, LF) stripped at both ends and runs of it replaced by a space.
func NormalizeSpace(s string) string {
	var b strings.Builder
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) }) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f)
	}
	return b.String()
}

// Substring is substring(s, start, length) (section 4.2) with length +Inf
// for the two-argument form: the characters at positions p (1-based) with
// round(start) <= p < round(start) + round(length).
func Substring(s string, start, length float64) string {
	from := Round(start)
	end := from + Round(length)
	lo, hi := -1, len(s)
	p := 0.0
	for i := range s {
		p++
		in := p >= from && p < end
		if in && lo < 0 {
			lo = i
		}
		if !in && lo >= 0 {
			hi = i
			break
		}
	}
	if lo < 0 {
		return ""
	}
	return s[lo:hi]
}

// Compare is the comparison l op r of section 3.4; op is one of OpEq,
// OpNe, OpLt, OpLe, OpGt, OpGe.
func Compare(op Op, l, r Value) bool {
	ln, lok := l.(NodeSet)
	rn, rok := r.(NodeSet)
	switch {
	case lok && rok:
		return CompareSets(op, ln, rn)
	case lok:
		return CompareSet(op, ln, r, false)
	case rok:
		return CompareSet(op, rn, l, true)
	}
	if op == OpEq || op == OpNe {
		var eq bool
		_, lb := l.(bool)
		_, rb := r.(bool)
		_, lf := l.(float64)
		_, rf := r.(float64)
		switch {
		case lb || rb:
			eq = Bool(l) == Bool(r)
		case lf || rf:
			eq = Num(l) == Num(r)
		default:
			eq = String(l) == String(r)
		}
		return eq == (op == OpEq)
	}
	return CompareNumbers(op, Num(l), Num(r))
}

// Strings is a node-set seen as its nodes' string-values, so that a
// caller with its own representation of node-sets compares them as
// Compare does (CompareSets, CompareSet).
type Strings interface {
	Len() int
	At(i int) string
}

// Len implements Strings.
func (s NodeSet) Len() int { return len(s) }

// At implements Strings.
func (s NodeSet) At(i int) string { return s[i].StringValue() }

// CompareSets compares two node-sets: true when some pair of their nodes'
// string-values compares true.
func CompareSets[L, R Strings](op Op, l L, r R) bool {
	for i := 0; i < l.Len(); i++ {
		a := l.At(i)
		for j := 0; j < r.Len(); j++ {
			if CompareStrings(op, a, r.At(j)) {
				return true
			}
		}
	}
	return false
}

// CompareSet compares a node-set with a value that is not one; swapped
// when the set was on the right.
func CompareSet[S Strings](op Op, set S, other Value, swapped bool) bool {
	switch o := other.(type) {
	case bool:
		if swapped {
			return Compare(op, o, set.Len() > 0)
		}
		return Compare(op, set.Len() > 0, o)
	case float64:
		for i := 0; i < set.Len(); i++ {
			a, b := Number(set.At(i)), o
			if swapped {
				a, b = b, a
			}
			if CompareNumbers(op, a, b) {
				return true
			}
		}
		return false
	}
	s := String(other)
	for i := 0; i < set.Len(); i++ {
		a, b := set.At(i), s
		if swapped {
			a, b = b, a
		}
		if CompareStrings(op, a, b) {
			return true
		}
	}
	return false
}

// CompareStrings compares two strings: = and != as strings, the
// relational operators as numbers.
func CompareStrings(op Op, a, b string) bool {
	switch op {
	case OpEq:
		return a == b
	case OpNe:
		return a != b
	}
	return CompareNumbers(op, Number(a), Number(b))
}

// CompareNumbers is a op b on numbers.
func CompareNumbers(op Op, a, b float64) bool {
	switch op {
	case OpEq:
		return a == b
	case OpNe:
		return a != b
	case OpLt:
		return a < b
	case OpLe:
		return a <= b
	case OpGt:
		return a > b
	case OpGe:
		return a >= b
	}
	return false
}
