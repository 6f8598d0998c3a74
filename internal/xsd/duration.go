package xsd

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Duration is a value of xsd:duration (XML Schema 1.0 part 2, 3.2.6): a
// number of months and a number of seconds (with nanoseconds), both with
// the sign of the lexical form. HasYearMonth and HasDayTime tell which
// fields the lexical form had, for the derived types of XPath 2.0
// (xs:yearMonthDuration, xs:dayTimeDuration).
type Duration struct {
	Months, Seconds int64
	Nanos           int64 // -999,999,999..999,999,999, with the sign of Seconds
	HasYearMonth    bool
	HasDayTime      bool
}

// ErrDuration is returned (wrapped) for a string that is not in
// xsd:duration's lexical space; ErrDurationRange for one whose fields do
// not fit in 64 bits.
var (
	ErrDuration      = errors.New("not an xsd:duration")
	ErrDurationRange = errors.New("xsd:duration out of range")
)

var durationRE = regexp.MustCompile(`^(-)?P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)D)?(?:(T)(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(\.\d+)?S)?)?$`)

// ParseDuration reads s, an xsd:duration in its lexical form
// (-PnYnMnDTnHnMnS, at least one field, T only before a time field);
// surrounding whitespace is ignored.
func ParseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	m := durationRE.FindStringSubmatch(s)
	if m == nil || s == "P" || s == "-P" || strings.HasSuffix(s, "T") {
		return Duration{}, fmt.Errorf("%w: %q", ErrDuration, s)
	}
	var v [6]int64
	for k, idx := range []int{2, 3, 4, 6, 7, 8} {
		if m[idx] == "" {
			continue
		}
		n, err := strconv.ParseInt(m[idx], 10, 64)
		if err != nil || n > 1<<40 {
			return Duration{}, fmt.Errorf("%w: %q", ErrDurationRange, s)
		}
		v[k] = n
	}
	d := Duration{Months: v[0]*12 + v[1], Seconds: v[2]*86400 + v[3]*3600 + v[4]*60 + v[5],
		HasYearMonth: m[2] != "" || m[3] != "", HasDayTime: m[4] != "" || m[5] != ""}
	if d.Months < 0 || d.Seconds < 0 {
		return Duration{}, fmt.Errorf("%w: %q", ErrDurationRange, s)
	}
	if len(m[9]) > 1 {
		d.Nanos, _ = strconv.ParseInt((m[9][1:] + "000000000")[:9], 10, 64)
	}
	if m[1] == "-" {
		d.Months, d.Seconds, d.Nanos = -d.Months, -d.Seconds, -d.Nanos
	}
	return d, nil
}

// AddTo returns t plus d: the months first (keeping the day of the month
// where it exists, as time.AddDate does), then the seconds. The seconds go
// through a time.Duration, which wraps past about 292 years: a deadline or
// a timeout is computed by DeadlineAfter (deadline.go), which saturates.
func (d Duration) AddTo(t time.Time) time.Time {
	return t.AddDate(0, int(d.Months), 0).Add(time.Duration(d.Seconds)*time.Second + time.Duration(d.Nanos))
}
