package odemock

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The REST server answers as ODE's RestExtensionActivitiesTest did, over
// loopback HTTP.
func TestRESTServer(t *testing.T) {
	ctx, s := startREST(t)
	base := strings.TrimSuffix(s.URL, "/test")
	const req = `<s:postRequest xmlns:s="http://www.example.org/restApi"><s:value>POST Method Test</s:value></s:postRequest>`
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		want                     string // substring of the answer; "" wants an empty body
	}{
		{"get", "GET", "/test", "", 200, `<service:getResponse xmlns:service="http://www.example.org/restApi"><service:result>GET response data</service:result></service:getResponse>`},
		{"get below /test", "GET", "/test/x", "", 200, "GET response data"},
		{"post echoes value", "POST", "/test", req, 200, `<service:postResponse xmlns:service="http://www.example.org/restApi"><service:result>POST Method Test Result</service:result>`},
		{"put echoes value", "PUT", "/test", strings.ReplaceAll(req, "POST", "PUT"), 200, "<service:putResponse xmlns:service=\"http://www.example.org/restApi\"><service:result>PUT Method Test Result</service:result>"},
		{"post without value", "POST", "/test", "<a><b/></a>", 200, "<service:result> Result</service:result>"},
		{"post not XML", "POST", "/test", "junk", 500, ""},
		{"post no body", "POST", "/test", "", 500, ""},
		{"delete", "DELETE", "/test", "", 200, "<service:result>DELETE Method Test</service:result>"},
		{"delete other path", "DELETE", "/test/resource", "", 404, ""},
		{"other path", "GET", "/other", "", 404, ""},
		{"other method", "PATCH", "/test", "", 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := http.NewRequestWithContext(ctx, tc.method, base+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.want == "" && len(b) != 0 || !strings.Contains(string(b), tc.want) {
				t.Errorf("body %q, want %q", b, tc.want)
			}
		})
	}
}

// A port already taken is an error naming it, not a silent fallback.
func TestRESTServerPortTaken(t *testing.T) {
	ctx, s := startREST(t)
	addr := strings.TrimSuffix(strings.TrimPrefix(s.URL, "http://"), "/test")
	if _, err := StartREST(ctx, nil, addr); err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("second StartREST on %s: err = %v, want one naming the address", addr, err)
	}
}

// startREST serves REST on a port of the system's choosing for the test.
func startREST(t *testing.T) (context.Context, *RESTServer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := StartREST(ctx, nil, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return ctx, s
}
