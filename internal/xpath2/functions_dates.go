package xpath2

import (
	"math/big"
	"sort"
	"strings"
)

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
