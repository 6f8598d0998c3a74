package interp

import (
	"testing"
	"time"
)

// TestDurations: AddDuration adds an xsd:duration to a time, as <wait for>
// and onAlarm for compute their deadlines; a malformed one is an error.
func TestDurations(t *testing.T) {
	base := time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: "PT2S", want: base.Add(2 * time.Second)},
		{in: "PT0.5S", want: base.Add(500 * time.Millisecond)},
		{in: "P1DT1H", want: base.Add(25 * time.Hour)},
		{in: "P1M", want: base.AddDate(0, 1, 0)},
		{in: "-PT1M", want: base.Add(-time.Minute)},
		{in: "P", bad: true},
		{in: "PT", bad: true},
		{in: "2S", bad: true},
	} {
		got, err := addDuration(base, tc.in)
		if tc.bad != (err != nil) || (!tc.bad && !got.Equal(tc.want)) {
			t.Errorf("addDuration(%q) = %v, %v; want %v (bad %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}
