package xpath2

import (
	"math"
	"math/big"
)

// numeric ranks for promotion
const (
	rInteger = iota
	rDecimal
	rFloat
	rDouble
)

func numRank(a Atomic) (int, bool) {
	switch v := a.(type) {
	case Integer:
		return rInteger, true
	case Decimal:
		return rDecimal, true
	case Double:
		if v.T == TFloat {
			return rFloat, true
		}
		return rDouble, true
	}
	return 0, false
}

func toRat(a Atomic) *big.Rat {
	switch v := a.(type) {
	case Integer:
		return new(big.Rat).SetInt(v.V)
	case Decimal:
		return v.V
	}
	return nil
}

func toFloat(a Atomic) float64 {
	switch v := a.(type) {
	case Integer:
		f, _ := new(big.Float).SetInt(v.V).Float64()
		return f
	case Decimal:
		f, _ := v.V.Float64()
		return f
	case Double:
		return v.V
	}
	return math.NaN()
}

// decDivDigits is the scale of a non-terminating xs:decimal quotient.
const decDivDigits = 18

// roundRat rounds r to digits decimal places (half to even when even is
// set, half away from zero otherwise is not used: half up toward +inf when
// halfUp).
func roundRatHalfEven(r *big.Rat, digits int) *big.Rat {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil)
	x := new(big.Rat).Mul(r, new(big.Rat).SetInt(scale))
	q, m := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	// compare 2*|m| with denom
	m2 := new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2))
	c := m2.Cmp(x.Denom())
	if c > 0 || (c == 0 && q.Bit(0) == 1) {
		if x.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return new(big.Rat).SetFrac(q, scale)
}

func terminates(r *big.Rat) bool {
	d := new(big.Int).Set(r.Denom())
	m := new(big.Int)
	for _, p := range []int64{2, 5} {
		bp := big.NewInt(p)
		for {
			q, rem := new(big.Int).QuoRem(d, bp, m)
			if rem.Sign() != 0 {
				break
			}
			d = q
		}
	}
	return d.Cmp(big.NewInt(1)) == 0
}

func negate(a Atomic) (Atomic, error) {
	switch v := a.(type) {
	case Integer:
		return Integer{new(big.Int).Neg(v.V), TInteger}, nil
	case Decimal:
		return Decimal{new(big.Rat).Neg(v.V)}, nil
	case Double:
		return Double{-v.V, v.T}, nil
	case String:
		if v.T == TUntypedAtomic {
			f, err := castAtomic(v, TDouble, nil)
			if err != nil {
				return nil, err
			}
			return Dbl(-f.(Double).V), nil
		}
	}
	return nil, errf("XPTY0004", "unary minus of %s", a.Type())
}

// arith applies a binary arithmetic operator.
func arith(op string, a, b Atomic, tz int) (Atomic, error) {
	if a.Type() == TUntypedAtomic {
		v, err := castAtomic(a, TDouble, nil)
		if err != nil {
			return nil, err
		}
		a = v
	}
	if b.Type() == TUntypedAtomic {
		v, err := castAtomic(b, TDouble, nil)
		if err != nil {
			return nil, err
		}
		b = v
	}
	ra, okA := numRank(a)
	rb, okB := numRank(b)
	if okA && okB {
		return numArith(op, a, b, max(ra, rb))
	}
	return temporalArith(op, a, b, tz)
}

func numArith(op string, a, b Atomic, rank int) (Atomic, error) {
	switch rank {
	case rFloat, rDouble:
		x, y := toFloat(a), toFloat(b)
		var r float64
		switch op {
		case "+":
			r = x + y
		case "-":
			r = x - y
		case "*":
			r = x * y
		case "div":
			r = x / y
		case "mod":
			r = math.Mod(x, y)
		case "idiv":
			if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) {
				return nil, errf("FOAR0002", "idiv of %v by %v", x, y)
			}
			if y == 0 {
				return nil, errf("FOAR0001", "integer division by zero")
			}
			q := math.Trunc(x / y)
			bf := new(big.Float).SetFloat64(q)
			i, _ := bf.Int(nil)
			return Integer{i, TInteger}, nil
		}
		t := TDouble
		if rank == rFloat {
			r = float64(float32(r))
			t = TFloat
		}
		return Double{r, t}, nil
	case rInteger:
		x, y := a.(Integer).V, b.(Integer).V
		switch op {
		case "+":
			return Integer{new(big.Int).Add(x, y), TInteger}, nil
		case "-":
			return Integer{new(big.Int).Sub(x, y), TInteger}, nil
		case "*":
			return Integer{new(big.Int).Mul(x, y), TInteger}, nil
		case "idiv":
			if y.Sign() == 0 {
				return nil, errf("FOAR0001", "integer division by zero")
			}
			return Integer{new(big.Int).Quo(x, y), TInteger}, nil
		case "mod":
			if y.Sign() == 0 {
				return nil, errf("FOAR0001", "modulus by zero")
			}
			return Integer{new(big.Int).Rem(x, y), TInteger}, nil
		}
	}
	// decimal arithmetic (and integer div)
	x, y := toRat(a), toRat(b)
	switch op {
	case "+":
		return Decimal{new(big.Rat).Add(x, y)}, nil
	case "-":
		return Decimal{new(big.Rat).Sub(x, y)}, nil
	case "*":
		return Decimal{new(big.Rat).Mul(x, y)}, nil
	case "div":
		if y.Sign() == 0 {
			return nil, errf("FOAR0001", "division by zero")
		}
		r := new(big.Rat).Quo(x, y)
		if !terminates(r) {
			r = roundRatHalfEven(r, decDivDigits)
		}
		return Decimal{r}, nil
	case "idiv":
		if y.Sign() == 0 {
			return nil, errf("FOAR0001", "integer division by zero")
		}
		q := new(big.Rat).Quo(x, y)
		return Integer{new(big.Int).Quo(q.Num(), q.Denom()), TInteger}, nil
	case "mod":
		if y.Sign() == 0 {
			return nil, errf("FOAR0001", "modulus by zero")
		}
		q := new(big.Rat).Quo(x, y)
		t := new(big.Int).Quo(q.Num(), q.Denom())
		return Decimal{new(big.Rat).Sub(x, new(big.Rat).Mul(y, new(big.Rat).SetInt(t)))}, nil
	}
	return nil, errf("XPTY0004", "bad operator %s", op)
}

func isYMD(a Atomic) bool { return a.Type() == TYearMonthDur }
func isDTD(a Atomic) bool { return a.Type() == TDayTimeDur }

func temporalArith(op string, a, b Atomic, tz int) (Atomic, error) {
	bad := func() (Atomic, error) {
		return nil, errf("XPTY0004", "operator %s is not defined for %s and %s", op, a.Type(), b.Type())
	}
	_, aNum := numRank(a)
	_, bNum := numRank(b)
	ad, aDur := a.(Duration)
	bd, bDur := b.(Duration)
	adt, aDT := a.(DateTime)
	bdt, bDT := b.(DateTime)
	switch op {
	case "+", "-":
		switch {
		case aDur && bDur && ad.T == bd.T && ad.T != TDuration:
			if op == "-" {
				bd = negDur(bd)
			}
			if ad.T == TYearMonthDur {
				return Duration{T: TYearMonthDur, Months: ad.Months + bd.Months}, nil
			}
			return durFromNanos(TDayTimeDur, 0, new(big.Int).Add(ad.totalNanos(), bd.totalNanos()))
		case aDT && bDur && bd.T != TDuration:
			if op == "-" {
				bd = negDur(bd)
			}
			return addDur(adt, bd)
		case op == "+" && aDur && bDT && ad.T != TDuration:
			return addDur(bdt, ad)
		case op == "-" && aDT && bDT && adt.T == bdt.T && (adt.T == TDateTime || adt.T == TDate || adt.T == TTime):
			s1, n1 := adt.instant(tz)
			s2, n2 := bdt.instant(tz)
			n := big.NewInt(s1 - s2)
			n.Mul(n, big.NewInt(1e9))
			n.Add(n, big.NewInt(int64(n1-n2)))
			return durFromNanos(TDayTimeDur, 0, n)
		}
	case "*":
		if aNum && bDur {
			a, b, ad, bd, aDur = b, a, bd, ad, true
			_ = bd
		}
		if aDur && ad.T != TDuration {
			if _, ok := numRank(b); ok {
				return scaleDur(ad, toFloat(b), false)
			}
		}
	case "div":
		if aDur && ad.T != TDuration {
			if bNum {
				return scaleDur(ad, toFloat(b), true)
			}
			if bDur && bd.T == ad.T {
				var x, y *big.Rat
				if ad.T == TYearMonthDur {
					x, y = big.NewRat(ad.Months, 1), big.NewRat(bd.Months, 1)
				} else {
					x, y = new(big.Rat).SetInt(ad.totalNanos()), new(big.Rat).SetInt(bd.totalNanos())
				}
				if y.Sign() == 0 {
					return nil, errf("FOAR0001", "division by a zero duration")
				}
				r := new(big.Rat).Quo(x, y)
				if !terminates(r) {
					r = roundRatHalfEven(r, decDivDigits)
				}
				return Decimal{r}, nil
			}
		}
	}
	return bad()
}

func negDur(d Duration) Duration {
	d.Months, d.Secs, d.Nanos = -d.Months, -d.Secs, -d.Nanos
	return d
}

func scaleDur(d Duration, f float64, div bool) (Atomic, error) {
	if math.IsNaN(f) {
		return nil, errf("FOCA0005", "duration multiplied by NaN")
	}
	if div {
		if f == 0 {
			return nil, errf("FODT0002", "duration divided by zero")
		}
		if math.IsInf(f, 0) {
			return Duration{T: d.T}, nil
		}
	} else if math.IsInf(f, 0) {
		return nil, errf("FODT0002", "duration multiplied by infinity")
	}
	if d.T == TYearMonthDur {
		var m float64
		if div {
			m = float64(d.Months) / f
		} else {
			m = float64(d.Months) * f
		}
		r := math.Floor(m + 0.5)
		if math.Abs(r) > 1e15 {
			return nil, errf("FODT0002", "duration overflow")
		}
		return Duration{T: d.T, Months: int64(r)}, nil
	}
	n := new(big.Float).SetInt(d.totalNanos())
	ff := new(big.Float).SetFloat64(f)
	if div {
		n.Quo(n, ff)
	} else {
		n.Mul(n, ff)
	}
	// round to the nearest nanosecond... microsecond precision is what the
	// double carries; round half up
	n.Add(n, new(big.Float).SetFloat64(0.5))
	i, _ := n.Int(nil)
	if n.Sign() < 0 {
		fl := new(big.Float).Sub(n, new(big.Float).SetInt(i))
		if fl.Sign() < 0 {
			i.Sub(i, big.NewInt(1))
		}
	}
	return durFromNanos(TDayTimeDur, 0, i)
}

// addDur adds a yearMonth or dayTime duration to a date, time or dateTime.
func addDur(d DateTime, dur Duration) (Atomic, error) {
	if dur.T == TYearMonthDur {
		if d.T == TTime {
			return nil, errf("XPTY0004", "cannot add %s to xs:time", dur.T)
		}
		y := toInternalYear(d.Y)
		m := int64(y)*12 + int64(d.Mo-1) + dur.Months
		ny := int(floorDiv(m, 12))
		nm := int(m - int64(ny)*12 + 1)
		nd := d.D
		if dm := daysIn(ny, nm); nd > dm {
			nd = dm
		}
		r := d
		r.Y, r.Mo, r.D = fromInternalYear(ny), nm, nd
		return r, nil
	}
	if d.T == TTime {
		secs := int64(d.H)*3600 + int64(d.Mi)*60 + int64(d.S)
		nanos := int64(d.Nano) + dur.Nanos
		secs += dur.Secs + floorDiv(nanos, 1e9)
		nanos -= floorDiv(nanos, 1e9) * 1e9
		secs = secs - floorDiv(secs, 86400)*86400
		r := d
		r.H, r.Mi, r.S, r.Nano = int(secs/3600), int(secs%3600/60), int(secs%60), int(nanos)
		return r, nil
	}
	secs := d.localSeconds()
	nanos := int64(d.Nano) + dur.Nanos
	secs += dur.Secs + floorDiv(nanos, 1e9)
	nanos -= floorDiv(nanos, 1e9) * 1e9
	if d.T == TDate {
		nanos = 0
	}
	return fromLocalSeconds(d.T, secs, int(nanos), d.TZ, d.HasTZ), nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
