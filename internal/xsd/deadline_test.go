package xsd

import (
	"errors"
	"testing"
	"time"
)

// TestDeadlineFor: a duration after a time, as <wait for>, onAlarm for
// and repeatEvery compute their deadlines; past the clock's range it is
// Never, never a wrapped earlier time; a malformed one is an error.
func TestDeadlineFor(t *testing.T) {
	base := time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC)
	at := func(t time.Time) int64 { return t.UnixNano() }
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "PT2S", want: at(base.Add(2 * time.Second))},
		{in: "PT0.5S", want: at(base.Add(500 * time.Millisecond))},
		{in: "P1DT1H", want: at(base.Add(25 * time.Hour))},
		{in: "P1M", want: at(base.AddDate(0, 1, 0))},
		{in: "-PT1M", want: at(base.Add(-time.Minute))},
		{in: "P200Y", want: at(base.AddDate(200, 0, 0))},
		{in: "P236Y", want: at(base.AddDate(236, 0, 0))},
		{in: "P237Y", want: Never},
		{in: "P293Y", want: Never},
		{in: "P10000Y", want: Never},
		{in: "PT9223372036S", want: Never},
		{in: "PT9223372037S", want: Never},
		{in: "P1099511627776D", want: Never},
		{in: "P1099511627776Y1099511627776M", want: Never},
		{in: "-P293Y", want: at(base.AddDate(-293, 0, 0))},
		{in: "-P400Y", want: PastDeadline},
		{in: "-PT18446744073S", want: PastDeadline},
		{in: "-P10000Y", want: PastDeadline},
		{in: "P", bad: true},
		{in: "PT", bad: true},
		{in: "2S", bad: true},
	} {
		got, err := DeadlineFor(base, tc.in)
		if tc.bad != (err != nil) || (!tc.bad && got != tc.want) {
			t.Errorf("DeadlineFor(%q) = %v, %v; want %v (bad %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
	if got := DeadlineAfter(Never, Duration{Seconds: -1}); got != Never {
		t.Errorf("Never minus a second = %v, want Never", got)
	}
}

// TestDeadlineUntil: an <until> dateTime or date as a deadline; years past
// the clock's range (9999, or more digits) are Never, before it past.
func TestDeadlineUntil(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "2026-01-01T02:00:00Z", want: time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC).UnixNano()},
		{in: " 2026-01-01T02:00:00.123456789+01:00 ", want: time.Date(2026, 1, 1, 1, 0, 0, 123456789, time.UTC).UnixNano()},
		{in: "2026-01-01T02:00:00", want: time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC).UnixNano()},
		{in: "2026-03-04", want: time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC).UnixNano()},
		{in: "2024-02-29T00:00:00Z", want: time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC).UnixNano()},
		{in: "2262-04-11T23:47:16.854775806Z", want: Never - 1},
		{in: "2262-04-11T23:47:16.854775807Z", want: Never},
		{in: "2263-01-01T00:00:00Z", want: Never},
		{in: "9999-12-31T23:59:59Z", want: Never},
		{in: "12026-01-01T00:00:00Z", want: Never},
		{in: "99999999999999999999999-01-01", want: Never},
		{in: "1677-01-01T00:00:00Z", want: PastDeadline},
		{in: "-0044-03-15T00:00:00Z", want: PastDeadline},
		{in: "-99999999999999999999999-01-01", want: PastDeadline},
		{in: "1970-01-01T00:00:00Z", want: 0},
		{in: "2025-02-29T00:00:00Z", bad: true},
		{in: "0000-01-01", bad: true},
		{in: "2026-13-01", bad: true},
		{in: "2026-01-01T25:00:00Z", bad: true},
		{in: "2026-01-01T00:00:00+15:00", bad: true},
		{in: "tomorrow", bad: true},
	} {
		got, err := DeadlineUntil(tc.in)
		if tc.bad != (err != nil) || (!tc.bad && got != tc.want) || (tc.bad && !errors.Is(err, ErrDateTime)) {
			t.Errorf("DeadlineUntil(%q) = %v, %v; want %v (bad %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

// FuzzDeadlineAfter: over any start deadline and durations of one sign, a
// longer duration never gives an earlier deadline, a positive one never
// one before the start, a negative one never one after it (no wrap), and
// Never stays Never.
func FuzzDeadlineAfter(f *testing.F) {
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC).UnixNano()
	f.Add(now, int64(0), int64(9223372036), int64(0), int64(0), int64(1), int64(0))
	f.Add(now, int64(293*12), int64(0), int64(0), int64(120000), int64(0), int64(0))
	f.Add(now, int64(0), int64(1), int64(999999999), int64(0), int64(0), int64(1))
	f.Add(int64(-1), int64(1), int64(86400), int64(0), int64(2), int64(0), int64(0))
	f.Add(Never-1, int64(0), int64(0), int64(1), int64(0), int64(0), int64(0))
	f.Add(PastDeadline, int64(0), int64(1), int64(0), int64(0), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, from, months, secs, nanos, moreMonths, moreSecs, moreNanos int64) {
		abs := func(n, lim int64) int64 {
			if n < 0 {
				n = -(n + 1)
			}
			return n % lim
		}
		// Fields as ParseDuration makes them: each under 2^40 fields of
		// a year or a day, nanoseconds under a second.
		const maxMonths, maxSecs = 13 << 40, 86400 << 41
		months, secs, nanos = abs(months, maxMonths), abs(secs, maxSecs), abs(nanos, 1e9)
		moreMonths, moreSecs, moreNanos = abs(moreMonths, maxMonths), abs(moreSecs, maxSecs), abs(moreNanos, 1e9)
		short := Duration{Months: months, Seconds: secs, Nanos: nanos}
		long := Duration{Months: months + moreMonths, Seconds: secs + moreSecs + (nanos+moreNanos)/1e9, Nanos: (nanos + moreNanos) % 1e9}
		a, b := DeadlineAfter(from, short), DeadlineAfter(from, long)
		if b < a {
			t.Errorf("from %d: %+v gives %d, the longer %+v an earlier %d", from, short, a, long, b)
		}
		if a < from {
			t.Errorf("from %d: %+v gives the earlier %d", from, short, a)
		}
		neg := func(d Duration) Duration { return Duration{Months: -d.Months, Seconds: -d.Seconds, Nanos: -d.Nanos} }
		na, nb := DeadlineAfter(from, neg(short)), DeadlineAfter(from, neg(long))
		if from != Never && (nb > na || na > from) {
			t.Errorf("from %d: -%+v gives %d, the longer -%+v %d", from, short, na, long, nb)
		}
		if from == Never && (a != Never || na != Never) {
			t.Errorf("Never plus %+v is not Never: %d, %d", short, a, na)
		}
	})
}
