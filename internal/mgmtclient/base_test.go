package mgmtclient

import (
	"strings"
	"testing"
)

func TestNewBase(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "http://127.0.0.1:8080", want: "http://127.0.0.1:8080"},
		{in: "127.0.0.1:8080", want: "http://127.0.0.1:8080"},
		{in: "https://orchd.example:8443/api/v1/", want: "https://orchd.example:8443"},
		{in: "http:///api/v1", err: "want a URL such as"},
		{in: "http://[::1", err: "want a URL such as"},
	} {
		c, err := New(tc.in, Options{})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("New(%q) = %v, want an error saying %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || c.base != tc.want {
			t.Errorf("New(%q): base %q, %v; want %q", tc.in, c.base, err, tc.want)
		}
	}
}
