package admin

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
)

func TestParseIncidentQuery(t *testing.T) {
	at := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		query string
		bulk  bool
		want  mgmt.IncidentQuery
		err   string // in the error; "" for none
	}{
		{name: "empty", query: "", want: mgmt.IncidentQuery{Query: mgmt.Query{Limit: DefaultLimit}}},
		{name: "fault, activity and the instance filters", query: "fault=activityFailure&activity=callPartner&process=Fixable&startedAfter=2026-12-05T09:00:00Z&limit=5",
			want: mgmt.IncidentQuery{Query: mgmt.Query{Process: "Fixable", StartedAfter: at, Limit: 5}, Fault: "activityFailure", Activity: "callPartner"}},
		{name: "bulk takes max and variable", query: "fault=x&max=3&variable=in", bulk: true, want: mgmt.IncidentQuery{Fault: "x"}},
		{name: "variable only in bulk", query: "variable=in", err: "unknown parameter variable"},
		{name: "state refused", query: "state=suspended", err: "state:"},
		{name: "fault twice", query: "fault=a&fault=b", err: "fault: given 2 times"},
		{name: "an unknown parameter", query: "color=red", err: "unknown parameter color"},
		{name: "a bad time", query: "activeAfter=yesterday", err: "activeAfter"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseIncidentQuery(v, tc.bulk)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// FuzzParseIncidentQuery: any query either is refused or reads back the
// same from what IncidentValues writes of it.
func FuzzParseIncidentQuery(f *testing.F) {
	for _, s := range []string{"", "fault=a&activity=b", "process=%7Bns%7DP&version=2&limit=3", "state=x", "fault=a&fault=b", "correlation=1,2&correlationSet=s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := url.ParseQuery(s)
		if err != nil {
			return
		}
		q, err := ParseIncidentQuery(v, false)
		if err != nil {
			return
		}
		again, err := ParseIncidentQuery(IncidentValues(q), false)
		if err != nil {
			t.Fatalf("%q: what IncidentValues wrote is refused: %v", s, err)
		}
		if !reflect.DeepEqual(again.Query.StartedAfter.UTC(), q.Query.StartedAfter.UTC()) {
			t.Fatalf("%q: times differ", s)
		}
		q.StartedAfter, q.StartedBefore, q.ActiveAfter, q.ActiveBefore = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		again.StartedAfter, again.StartedBefore, again.ActiveAfter, again.ActiveBefore = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if !reflect.DeepEqual(q, again) {
			t.Fatalf("%q: %+v read back as %+v", s, q, again)
		}
	})
}
