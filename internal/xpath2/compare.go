package xpath2

import (
	"bytes"
	"math"
	"strings"
)

func cmpResult(op string, c int) bool {
	switch op {
	case "eq":
		return c == 0
	case "ne":
		return c != 0
	case "lt":
		return c < 0
	case "le":
		return c <= 0
	case "gt":
		return c > 0
	}
	return c >= 0
}

func isStringLike(t *Type) bool {
	return t.DerivesFrom(TString) || t == TAnyURI || t == TUntypedAtomic
}

// valueCompare applies a value comparison operator (eq ne lt le gt ge).
func valueCompare(op string, a, b Atomic, tz int) (bool, error) {
	c, ok, err := compareAtomic(a, b, tz, op == "eq" || op == "ne")
	if err != nil {
		return false, err
	}
	if !ok { // NaN
		return op == "ne", nil
	}
	return cmpResult(op, c), nil
}

// compareAtomic orders two atomic values. ok is false when they are
// unordered (NaN). eqOnly allows types that only have equality.
func compareAtomic(a, b Atomic, tz int, eqOnly bool) (int, bool, error) {
	ta, tb := a.Type(), b.Type()
	bad := func() (int, bool, error) {
		return 0, false, errf("XPTY0004", "cannot compare %s with %s", ta, tb)
	}
	ra, okA := numRank(a)
	rb, okB := numRank(b)
	if okA && okB {
		if max(ra, rb) >= rFloat {
			x, y := toFloat(a), toFloat(b)
			if max(ra, rb) == rFloat {
				x, y = float64(float32(x)), float64(float32(y))
			}
			if math.IsNaN(x) || math.IsNaN(y) {
				return 0, false, nil
			}
			switch {
			case x < y:
				return -1, true, nil
			case x > y:
				return 1, true, nil
			}
			return 0, true, nil
		}
		return toRat(a).Cmp(toRat(b)), true, nil
	}
	if isStringLike(ta) && isStringLike(tb) {
		return strings.Compare(a.String(), b.String()), true, nil
	}
	switch x := a.(type) {
	case Boolean:
		y, ok := b.(Boolean)
		if !ok {
			return bad()
		}
		bi := func(v Boolean) int {
			if v {
				return 1
			}
			return 0
		}
		return bi(x) - bi(y), true, nil
	case DateTime:
		y, ok := b.(DateTime)
		if !ok || x.T != y.T {
			return bad()
		}
		if !eqOnly && x.T != TDateTime && x.T != TDate && x.T != TTime {
			return bad()
		}
		s1, n1 := x.instant(tz)
		s2, n2 := y.instant(tz)
		switch {
		case s1 < s2 || (s1 == s2 && n1 < n2):
			return -1, true, nil
		case s1 > s2 || (s1 == s2 && n1 > n2):
			return 1, true, nil
		}
		return 0, true, nil
	case Duration:
		y, ok := b.(Duration)
		if !ok {
			return bad()
		}
		if !eqOnly {
			if x.T != y.T || x.T == TDuration {
				return bad()
			}
		}
		if eqOnly {
			if x.Months == y.Months && x.Secs == y.Secs && x.Nanos == y.Nanos {
				return 0, true, nil
			}
			return 1, true, nil
		}
		if x.T == TYearMonthDur {
			return cmpInt64(x.Months, y.Months), true, nil
		}
		return x.totalNanos().Cmp(y.totalNanos()), true, nil
	case QName:
		y, ok := b.(QName)
		if !ok || !eqOnly || x.T != y.T {
			return bad()
		}
		if x.NS == y.NS && x.Local == y.Local {
			return 0, true, nil
		}
		return 1, true, nil
	case Binary:
		y, ok := b.(Binary)
		if !ok || !eqOnly || x.T != y.T {
			return bad()
		}
		return bytes.Compare(x.B, y.B), true, nil
	}
	return bad()
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
