package xsd

import (
	"errors"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in     string
		months int64
		secs   int64
		nanos  int64
		err    error
	}{
		{in: "P1Y2M", months: 14},
		{in: "PT1H30M", secs: 5400},
		{in: "P1DT0.5S", secs: 86400, nanos: 500_000_000},
		{in: "-P1M1D", months: -1, secs: -86400},
		{in: " PT0S ", secs: 0},
		{in: "P", err: ErrDuration},
		{in: "-P", err: ErrDuration},
		{in: "P1DT", err: ErrDuration},
		{in: "PT1.S", err: ErrDuration},
		{in: "P1H", err: ErrDuration},
		{in: "1D", err: ErrDuration},
		{in: "P99999999999999999999Y", err: ErrDurationRange},
	}
	for _, tc := range tests {
		d, err := ParseDuration(tc.in)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("ParseDuration(%q) = %+v, %v; want %v", tc.in, d, err, tc.err)
			}
			continue
		}
		if err != nil || d.Months != tc.months || d.Seconds != tc.secs || d.Nanos != tc.nanos {
			t.Errorf("ParseDuration(%q) = %+v, %v; want months %d secs %d nanos %d", tc.in, d, err, tc.months, tc.secs, tc.nanos)
		}
	}
}

func TestDurationAddTo(t *testing.T) {
	base := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	d, err := ParseDuration("P1MT1H0.25S")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.AddTo(base), time.Date(2026, 3, 3, 13, 0, 0, 250_000_000, time.UTC); !got.Equal(want) {
		t.Errorf("AddTo = %v, want %v", got, want)
	}
}
