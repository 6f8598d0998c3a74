package admin

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/mgmt"
)

func TestParseMigrate(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		want        mgmt.MigrateRequest
		err         string
	}{
		{"plain", "from=1&to=2", mgmt.MigrateRequest{Process: "P", From: 1, To: 2, Max: DefaultBulk}, ""},
		{"all", "from=3&to=1&dryRun=true&variable=a=b&variable=c=&state=waiting&correlation=R-1&max=7",
			mgmt.MigrateRequest{Process: "P", From: 3, To: 1, DryRun: true, Variables: map[string]string{"a": "b", "c": ""},
				Query: mgmt.Query{State: "waiting", Correlation: "R-1"}, Max: 7}, ""},
		{"no to", "from=1", mgmt.MigrateRequest{}, "give both versions"},
		{"bad from", "from=x&to=2", mgmt.MigrateRequest{}, `from "x"`},
		{"zero", "from=0&to=2", mgmt.MigrateRequest{}, "from 0: want at least 1"},
		{"bad dry run", "from=1&to=2&dryRun=yes", mgmt.MigrateRequest{}, `dryRun "yes"`},
		{"bad variable", "from=1&to=2&variable=x", mgmt.MigrateRequest{}, `variable "x"`},
		{"version in filter", "from=1&to=2&version=1", mgmt.MigrateRequest{}, "the path names the process"},
		{"unknown parameter", "from=1&to=2&limit=3", mgmt.MigrateRequest{}, "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseMigrate("P", v)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v %v, want %+v", got, err, tc.want)
			}
			// MigrateValues writes what ParseMigrate reads.
			again, err := ParseMigrate("P", MigrateValues(got))
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Fatalf("round trip: %+v %v, want %+v", again, err, got)
			}
		})
	}
}

// FuzzParseMigrate: any query either is refused with an error or reads
// as a request that MigrateValues writes back to the same request.
func FuzzParseMigrate(f *testing.F) {
	for _, s := range []string{"from=1&to=2", "from=3&to=1&dryRun=true&variable=a=b&variable=c=&state=waiting&correlation=R-1&max=7",
		"from=1&to=2&variable==x", "from=-1&to=99999999999999999999", "dryRun=maybe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		v, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		r, err := ParseMigrate("P", v)
		if err != nil {
			return
		}
		if r.From < 1 || r.To < 1 || r.Max < 1 {
			t.Fatalf("%q read as %+v", query, r)
		}
		again, err := ParseMigrate("P", MigrateValues(r))
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("%q: %+v does not round-trip: %+v %v", query, r, again, err)
		}
	})
}
