package xsd

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// A deadline is a time as unix nanoseconds (int64), the form in which the
// engine keeps instance timers. Its range ends at
// 2262-04-11T23:47:16.854775807Z: a deadline at or past that end is
// Never, one before its start (1677-09-21) is PastDeadline. The
// conversions here saturate to those two values rather than wrap, so a
// longer duration never gives an earlier deadline (docs/limits.md,
// "Deadlines").
const (
	// Never is the deadline that never falls due: a wait on it waits
	// until something else (a message, an operator) ends it.
	Never int64 = math.MaxInt64
	// PastDeadline is the earliest deadline: it is due at once.
	PastDeadline int64 = math.MinInt64
)

// ErrDateTime is returned (wrapped) for a string that is neither an
// xsd:dateTime nor an xsd:date.
var ErrDateTime = errors.New("not an xsd:dateTime or xsd:date")

var (
	// deadlineMax and deadlineMin are the times of Never and PastDeadline.
	deadlineMax = time.Unix(0, Never)
	deadlineMin = time.Unix(0, PastDeadline)
)

// rangeSeconds bounds the seconds, and rangeMonths the months, that can
// move one deadline to another: more than the int64 range (about 584
// years) saturates before any arithmetic on time.Time, whose own range
// would wrap further out.
const (
	rangeSeconds = 600 * 366 * 86400
	rangeMonths  = 600 * 12
)

// DeadlineOf is t as a deadline: Never at or past the end of the range,
// PastDeadline before its start.
func DeadlineOf(t time.Time) int64 {
	switch {
	case !t.Before(deadlineMax):
		return Never
	case t.Before(deadlineMin):
		return PastDeadline
	}
	return t.UnixNano()
}

// DeadlineAfter is the deadline d after from (a deadline), as AddTo adds
// them (the months, then the seconds), saturated: Never when it is at or
// past the end of the range, PastDeadline before its start. Never plus any
// duration stays Never.
func DeadlineAfter(from int64, d Duration) int64 {
	switch {
	case from == Never:
		return Never
	case d.Months > rangeMonths || d.Seconds > rangeSeconds:
		return Never
	case d.Months < -rangeMonths || d.Seconds < -rangeSeconds:
		return PastDeadline
	}
	t := time.Unix(0, from).UTC().AddDate(0, int(d.Months), 0)
	// Seconds and nanoseconds apart: seconds of up to 600 years do not
	// fit in a time.Duration.
	return DeadlineOf(time.Unix(t.Unix()+d.Seconds, int64(t.Nanosecond())+d.Nanos))
}

// DeadlineFor is the deadline s, an xsd:duration, after from: the value
// of a <for> or <repeatEvery>.
func DeadlineFor(from time.Time, s string) (int64, error) {
	d, err := ParseDuration(s)
	if err != nil {
		return 0, err
	}
	return DeadlineAfter(DeadlineOf(from), d), nil
}

// DeadlineUntil is the deadline s, an xsd:dateTime or xsd:date (no
// timezone is UTC; a date is its midnight), names: the value of an
// <until>. Years of any number of digits are read (xsd:dateTime allows
// them); those out of the range saturate.
func DeadlineUntil(s string) (int64, error) {
	s = strings.TrimSpace(s)
	var year, mo, day, h, mi, sec, frac, tz string
	if m := reDateTime.FindStringSubmatch(s); m != nil && timeOK(m[4], m[5], m[6], m[7]) {
		year, mo, day, h, mi, sec, frac, tz = m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8]
	} else if m := reDate.FindStringSubmatch(s); m != nil {
		year, mo, day, h, mi, sec, tz = m[1], m[2], m[3], "00", "00", "00", m[4]
	} else {
		return 0, fmt.Errorf("%w: %q", ErrDateTime, s)
	}
	if !tzOK(tz) {
		return 0, fmt.Errorf("%w: %q", ErrDateTime, s)
	}
	y, err := strconv.ParseInt(year, 10, 64)
	switch {
	case err != nil && strings.HasPrefix(year, "-"), err == nil && y < -100000:
		return PastDeadline, nil
	case err != nil, y > 100000:
		return Never, nil
	}
	// Within ±100000 years time.Date is exact; the day is checked for
	// the year it is in (29 February of a leap year).
	if !dateOK(year, mo, day) {
		return 0, fmt.Errorf("%w: %q", ErrDateTime, s)
	}
	t := time.Date(int(y), time.Month(atoi(mo)), atoi(day), atoi(h), atoi(mi), atoi(sec), fracNanos(frac), tzLoc(tz))
	return DeadlineOf(t), nil
}

// fracNanos is a fraction of a second (".5") in nanoseconds, exactly:
// digits past the ninth are dropped.
func fracNanos(frac string) int {
	if len(frac) < 2 {
		return 0
	}
	n, _ := strconv.Atoi((frac[1:] + "000000000")[:9])
	return n
}
