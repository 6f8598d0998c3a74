package ctl

import (
	"strings"
	"testing"
	"time"
)

func TestCtlFilterTimes(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		flag, value string
		want        time.Time
		wantErr     bool
	}{
		{flag: "started-after", value: "2026-11-01T08:00:00Z", want: time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)},
		{flag: "started-before", value: "90m", want: now.Add(-90 * time.Minute)},
		{flag: "active-after", value: "2026-11-01T09:00:00+01:00", want: time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)},
		{flag: "active-before", value: "0s", want: now},
		{flag: "started-after", value: "-5m", wantErr: true},
		{flag: "active-after", value: "yesterday", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.flag+"="+tc.value, func(t *testing.T) {
			var f filterFlags
			got := map[string]*string{"started-after": &f.startedAfter, "started-before": &f.startedBefore,
				"active-after": &f.activeAfter, "active-before": &f.activeBefore}
			*got[tc.flag] = tc.value
			q, err := f.query(now)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "--"+tc.flag) {
					t.Fatalf("error %v, want one naming --%s", err, tc.flag)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			at := map[string]time.Time{"started-after": q.StartedAfter, "started-before": q.StartedBefore,
				"active-after": q.ActiveAfter, "active-before": q.ActiveBefore}[tc.flag]
			if !at.Equal(tc.want) {
				t.Fatalf("%s = %s, want %s", tc.flag, at, tc.want)
			}
		})
	}
}
