package partnerallow

import (
	"net/netip"
	"testing"
)

func TestList(t *testing.T) {
	var l List
	for _, e := range []string{"127.0.0.1:9000-9010", "10.1.0.0/16", "[::1]:8080", "*.corp.example", "crm.example:443"} {
		r, err := Parse(e)
		if err != nil {
			t.Fatalf("%q: %v", e, err)
		}
		l.Rules = append(l.Rules, r)
	}
	for _, tc := range []struct {
		ip   string
		port int
		want bool
	}{
		{"127.0.0.1", 9005, true}, {"127.0.0.1", 8080, false}, {"::1", 8080, true},
		{"::ffff:127.0.0.1", 9001, true}, {"10.1.2.3", 1, true}, {"10.2.0.1", 80, false},
	} {
		if got := l.AllowsIP(netip.MustParseAddr(tc.ip), tc.port); got != tc.want {
			t.Errorf("%s:%d allowed %v, want %v", tc.ip, tc.port, got, tc.want)
		}
	}
	for _, tc := range []struct {
		host string
		port int
		want bool
	}{
		{"a.corp.example", 1, true}, {"corp.example", 1, true}, {"xcorp.example", 1, false},
		{"CRM.example.", 443, true}, {"crm.example", 80, false},
	} {
		if got := l.AllowsName(tc.host, tc.port); got != tc.want {
			t.Errorf("name %s:%d allowed %v, want %v", tc.host, tc.port, got, tc.want)
		}
	}
	for ip, want := range map[string]bool{"169.254.169.254": true, "fd00:ec2::254": true, "100.100.100.200": true,
		"fe80::1": true, "0.0.0.0": true, "::ffff:127.0.0.1": true, "10.2.0.1": false, "93.184.216.34": false} {
		if got := ForbiddenByDefault(netip.MustParseAddr(ip)); got != want {
			t.Errorf("ForbiddenByDefault(%s) = %v, want %v", ip, got, want)
		}
	}
	for _, bad := range []string{"127.0.0.1:0", "10.0.0.0/33", "[::1", "host:1-x", "a b", "u@h", "[::1]x"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// FuzzParse: Parse never panics, and a rule it accepts reads back the
// same from its Entry.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"127.0.0.1:9000-9010", "[fd00::/8]:443", "*.corp.example", "10.0.0.0/8", "h:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		r2, err := Parse(r.Entry)
		if err != nil || r2 != r {
			t.Fatalf("Parse(%q) = %+v; again from its entry: %+v, %v", s, r, r2, err)
		}
	})
}
