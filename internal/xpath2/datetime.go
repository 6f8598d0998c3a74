package xpath2

import (
	"github.com/orchd/orchd/internal/xsd"

	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// DateTime is xs:dateTime, xs:date, xs:time or one of the g* types; the
// fields a type does not have hold the reference values (1972-12-31,
// 00:00:00) used to compare them.
type DateTime struct {
	T                  *Type
	Y, Mo, D, H, Mi, S int
	Nano               int
	TZ                 int // minutes east of UTC, valid when HasTZ
	HasTZ              bool
}

// Type implements Atomic.
func (d DateTime) Type() *Type { return d.T }

func fmtYear(y int) string {
	if y < 0 {
		return fmt.Sprintf("-%04d", -y)
	}
	return fmt.Sprintf("%04d", y)
}

func (d DateTime) tzString() string {
	if !d.HasTZ {
		return ""
	}
	if d.TZ == 0 {
		return "Z"
	}
	tz, sign := d.TZ, "+"
	if tz < 0 {
		tz, sign = -tz, "-"
	}
	return fmt.Sprintf("%s%02d:%02d", sign, tz/60, tz%60)
}

func (d DateTime) timeString() string {
	s := fmt.Sprintf("%02d:%02d:%02d", d.H, d.Mi, d.S)
	if d.Nano != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%09d", d.Nano), "0")
	}
	return s
}

func (d DateTime) String() string {
	switch d.T {
	case TDate:
		return fmt.Sprintf("%s-%02d-%02d", fmtYear(d.Y), d.Mo, d.D) + d.tzString()
	case TTime:
		return d.timeString() + d.tzString()
	case TGYearMonth:
		return fmt.Sprintf("%s-%02d", fmtYear(d.Y), d.Mo) + d.tzString()
	case TGYear:
		return fmtYear(d.Y) + d.tzString()
	case TGMonthDay:
		return fmt.Sprintf("--%02d-%02d", d.Mo, d.D) + d.tzString()
	case TGDay:
		return fmt.Sprintf("---%02d", d.D) + d.tzString()
	case TGMonth:
		return fmt.Sprintf("--%02d", d.Mo) + d.tzString()
	}
	return fmt.Sprintf("%s-%02d-%02dT", fmtYear(d.Y), d.Mo, d.D) + d.timeString() + d.tzString()
}

func isLeap(y int) bool {
	if y <= 0 {
		y = -y + 1 // XSD 1.0: -0001 is 1 BCE, leap like 1 BCE proleptic (year 0)
		y--
	}
	return y%4 == 0 && (y%100 != 0 || y%400 == 0)
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil counts days from 1970-01-01 (proleptic Gregorian, with a
// year 0).
func daysFromCivil(y, m, d int) int64 {
	yy := int64(y)
	if m <= 2 {
		yy--
	}
	var era int64
	if yy >= 0 {
		era = yy / 400
	} else {
		era = (yy - 399) / 400
	}
	yoe := yy - era*400
	mm := int64(m)
	var mp int64
	if mm > 2 {
		mp = mm - 3
	} else {
		mp = mm + 9
	}
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func civilFromDays(z int64) (int, int, int) {
	z += 719468
	var era int64
	if z >= 0 {
		era = z / 146097
	} else {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	var m int64
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return int(y), int(m), int(d)
}

// internal years have a year 0; XSD 1.0 lexical years do not.
func toInternalYear(y int) int {
	if y < 0 {
		return y + 1
	}
	return y
}

func fromInternalYear(y int) int {
	if y <= 0 {
		return y - 1
	}
	return y
}

// seconds of the local (un-normalised) fields since the epoch
func (d DateTime) localSeconds() int64 {
	days := daysFromCivil(toInternalYear(d.Y), d.Mo, d.D)
	return days*86400 + int64(d.H)*3600 + int64(d.Mi)*60 + int64(d.S)
}

// instant returns the UTC seconds and nanos of d, with implicit timezone
// tz (minutes) used when d has none.
func (d DateTime) instant(implicitTZ int) (int64, int) {
	tz := implicitTZ
	if d.HasTZ {
		tz = d.TZ
	}
	return d.localSeconds() - int64(tz)*60, d.Nano
}

func fromLocalSeconds(t *Type, secs int64, nano int, tz int, hasTZ bool) DateTime {
	days := secs / 86400
	rem := secs % 86400
	if rem < 0 {
		rem += 86400
		days--
	}
	y, m, dd := civilFromDays(days)
	r := DateTime{T: t, Y: fromInternalYear(y), Mo: m, D: dd, H: int(rem / 3600), Mi: int(rem % 3600 / 60), S: int(rem % 60), Nano: nano, TZ: tz, HasTZ: hasTZ}
	return r.clearFor(t)
}

// clearFor resets the fields type t does not carry to reference values.
func (d DateTime) clearFor(t *Type) DateTime {
	d.T = t
	switch t {
	case TDate:
		d.H, d.Mi, d.S, d.Nano = 0, 0, 0, 0
	case TTime:
		d.Y, d.Mo, d.D = 1972, 12, 31
	case TGYearMonth:
		d.D, d.H, d.Mi, d.S, d.Nano = 1, 0, 0, 0, 0
	case TGYear:
		d.Mo, d.D, d.H, d.Mi, d.S, d.Nano = 1, 1, 0, 0, 0, 0
	case TGMonthDay:
		d.Y, d.H, d.Mi, d.S, d.Nano = 1972, 0, 0, 0, 0
	case TGDay:
		d.Y, d.Mo, d.H, d.Mi, d.S, d.Nano = 1972, 12, 0, 0, 0, 0
	case TGMonth:
		d.Y, d.D, d.H, d.Mi, d.S, d.Nano = 1972, 1, 0, 0, 0, 0
	}
	return d
}

var (
	reYear = `(-?(?:[1-9]\d{4,}|\d{4}))`
	reTZ   = `(Z|[+-]\d\d:\d\d)?`
	reTime = `(\d\d):(\d\d):(\d\d)(\.\d+)?`
	dtRes  = map[*Type]*regexp.Regexp{
		TDateTime:   regexp.MustCompile(`^` + reYear + `-(\d\d)-(\d\d)T` + reTime + reTZ + `$`),
		TDate:       regexp.MustCompile(`^` + reYear + `-(\d\d)-(\d\d)` + reTZ + `$`),
		TTime:       regexp.MustCompile(`^` + reTime + reTZ + `$`),
		TGYearMonth: regexp.MustCompile(`^` + reYear + `-(\d\d)` + reTZ + `$`),
		TGYear:      regexp.MustCompile(`^` + reYear + reTZ + `$`),
		TGMonthDay:  regexp.MustCompile(`^--(\d\d)-(\d\d)` + reTZ + `$`),
		TGDay:       regexp.MustCompile(`^---(\d\d)` + reTZ + `$`),
		TGMonth:     regexp.MustCompile(`^--(\d\d)` + reTZ + `$`),
	}
)

func parseTZ(s string) (int, bool, bool) {
	if s == "" {
		return 0, false, true
	}
	if s == "Z" {
		return 0, true, true
	}
	h, _ := strconv.Atoi(s[1:3])
	m, _ := strconv.Atoi(s[4:6])
	if m > 59 || h > 14 || (h == 14 && m != 0) {
		return 0, false, false
	}
	tz := h*60 + m
	if s[0] == '-' {
		tz = -tz
	}
	return tz, true, true
}

// parseDateTime parses the lexical form of a date/time type t.
func parseDateTime(s string, t *Type) (DateTime, error) {
	s = strings.TrimSpace(s)
	bad := errf("FORG0001", "invalid %s %q", t, s)
	m := dtRes[t].FindStringSubmatch(s)
	if m == nil {
		return DateTime{}, bad
	}
	d := DateTime{T: t}.clearFor(t)
	atoi := func(x string) int { n, _ := strconv.Atoi(x); return n }
	i := 1
	year := func() bool {
		y, err := strconv.Atoi(m[i])
		i++
		if err != nil || y == 0 || y > 1<<31 || y < -(1<<31) {
			return false
		}
		d.Y = y
		return true
	}
	var frac string
	timeParts := func() {
		d.H, d.Mi, d.S = atoi(m[i]), atoi(m[i+1]), atoi(m[i+2])
		frac = m[i+3]
		i += 4
	}
	switch t {
	case TDateTime:
		if !year() {
			return d, bad
		}
		d.Mo, d.D = atoi(m[i]), atoi(m[i+1])
		i += 2
		timeParts()
	case TDate:
		if !year() {
			return d, bad
		}
		d.Mo, d.D = atoi(m[i]), atoi(m[i+1])
		i += 2
	case TTime:
		timeParts()
	case TGYearMonth:
		if !year() {
			return d, bad
		}
		d.Mo = atoi(m[i])
		i++
	case TGYear:
		if !year() {
			return d, bad
		}
	case TGMonthDay:
		d.Mo, d.D = atoi(m[i]), atoi(m[i+1])
		i += 2
	case TGDay:
		d.D = atoi(m[i])
		i++
	case TGMonth:
		d.Mo = atoi(m[i])
		i++
	}
	if frac != "" {
		f := (frac[1:] + "000000000")[:9]
		d.Nano = atoi(f)
	}
	tz, has, ok := parseTZ(m[i])
	if !ok {
		return d, bad
	}
	d.TZ, d.HasTZ = tz, has
	if d.Mo < 1 || d.Mo > 12 || d.D < 1 || d.D > daysIn(toInternalYear(d.Y), d.Mo) {
		if !(t == TGMonthDay && d.Mo == 2 && d.D == 29) && !(t == TGDay && d.D <= 31 && d.D >= 1) {
			return d, bad
		}
	}
	if d.Mi > 59 || d.S > 59 || d.H > 24 {
		return d, bad
	}
	if d.H == 24 {
		if d.Mi != 0 || d.S != 0 || d.Nano != 0 {
			return d, bad
		}
		d.H = 0
		if t == TDateTime {
			d = fromLocalSeconds(t, d.localSeconds()+86400, 0, d.TZ, d.HasTZ)
		}
	}
	return d, nil
}

// Duration is xs:duration, xs:dayTimeDuration or xs:yearMonthDuration:
// a number of months and a number of seconds (Secs and Nanos share the
// sign of the whole).
type Duration struct {
	T      *Type
	Months int64
	Secs   int64
	Nanos  int64
}

// Type implements Atomic.
func (d Duration) Type() *Type { return d.T }

func (d Duration) String() string {
	neg := d.Months < 0 || d.Secs < 0 || d.Nanos < 0
	mo, se, na := d.Months, d.Secs, d.Nanos
	if neg {
		mo, se, na = -mo, -se, -na
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteByte('P')
	if mo == 0 && se == 0 && na == 0 {
		if d.T == TYearMonthDur {
			return "P0M"
		}
		return "PT0S"
	}
	if y := mo / 12; y != 0 {
		fmt.Fprintf(&b, "%dY", y)
	}
	if m := mo % 12; m != 0 {
		fmt.Fprintf(&b, "%dM", m)
	}
	if days := se / 86400; days != 0 {
		fmt.Fprintf(&b, "%dD", days)
	}
	rem := se % 86400
	if rem != 0 || na != 0 {
		b.WriteByte('T')
		if h := rem / 3600; h != 0 {
			fmt.Fprintf(&b, "%dH", h)
		}
		if m := rem % 3600 / 60; m != 0 {
			fmt.Fprintf(&b, "%dM", m)
		}
		s := rem % 60
		if s != 0 || na != 0 {
			fmt.Fprintf(&b, "%d", s)
			if na != 0 {
				b.WriteString(strings.TrimRight(fmt.Sprintf(".%09d", na), "0"))
			}
			b.WriteByte('S')
		}
	}
	return b.String()
}

func parseDuration(s string, t *Type) (Duration, error) {
	x, err := xsd.ParseDuration(s)
	switch {
	case errors.Is(err, xsd.ErrDurationRange):
		return Duration{}, errf("FODT0002", "duration overflow %q", s)
	case err != nil, t == TYearMonthDur && x.HasDayTime, t == TDayTimeDur && x.HasYearMonth:
		return Duration{}, errf("FORG0001", "invalid %s %q", t, strings.TrimSpace(s))
	}
	return Duration{T: t, Months: x.Months, Secs: x.Seconds, Nanos: x.Nanos}, nil
}

// totalNanos returns the seconds part as a big integer of nanoseconds.
func (d Duration) totalNanos() *big.Int {
	n := big.NewInt(d.Secs)
	n.Mul(n, big.NewInt(1e9))
	return n.Add(n, big.NewInt(d.Nanos))
}

func durFromNanos(t *Type, months int64, n *big.Int) (Duration, error) {
	q, r := new(big.Int).QuoRem(n, big.NewInt(1e9), new(big.Int))
	if !q.IsInt64() {
		return Duration{}, errf("FODT0002", "duration overflow")
	}
	return Duration{T: t, Months: months, Secs: q.Int64(), Nanos: r.Int64()}, nil
}

// timeNow is the wall clock; DynamicContext.Now overrides it.
func timeNow() time.Time { return time.Now() }

// dateTimeFromTime makes an xs:dateTime from a Go time in timezone tz.
func dateTimeFromTime(t time.Time, tz int) DateTime {
	t = t.In(time.FixedZone("", tz*60))
	return DateTime{T: TDateTime, Y: t.Year(), Mo: int(t.Month()), D: t.Day(), H: t.Hour(), Mi: t.Minute(), S: t.Second(), Nano: t.Nanosecond(), TZ: tz, HasTZ: true}
}
