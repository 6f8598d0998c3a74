package console

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string) (*http.Response, string) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
	res := w.Result()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

func TestPages(t *testing.T) {
	tests := []struct {
		name, prefix, path string
		status             int
		want               []string // in the body
	}{
		{"processes", "", "/console/", 200, []string{`data-page="processes"`, `id="processes-table"`, `id="deploy-errors"`, `id="bundles-table"`, `id="nodes-table"`, `<th scope="col">Nodes</th>`, `src="/console/static/console.js"`, `data-api="/api/v1/"`}},
		{"process", "", "/console/process?name=x", 200, []string{`data-page="process"`, `id="outline"`, `id="versions-table"`, `id="diagram"`}},
		{"instances", "", "/console/instances?state=waiting", 200, []string{`data-page="instances"`, `<label for="f-process">`, `<label for="f-activeBefore">Active before</label>`, `name="startedAfter" type="datetime-local"`, `id="page-next"`, `id="auto-refresh"`, `<th scope="col">Node</th>`, `id="instances-partial"`}},
		{"instance", "", "/console/instance?id=1", 200, []string{`data-page="instance"`, `id="act-terminate" data-action="terminate" data-destructive="true"`, `id="act-resume" data-action="resume" hidden`, `--timeline N`, `id="confirm"`, `id="diagram"`}},
		{"token box on every page", "", "/console/instances", 200, []string{`<label for="token">`, `type="password"`}},
		{"other prefix", "/ops/", "/ops/instances", 200, []string{`href="/ops/static/console.css"`, `data-prefix="/ops/"`}},
		{"unknown page", "", "/console/nope", 404, nil},
		{"outside the prefix", "", "/other/", 404, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(Options{Prefix: tt.prefix})
			res, body := get(t, h, http.MethodGet, tt.path)
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d\n%s", res.StatusCode, tt.status, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("no %q in\n%s", w, body)
				}
			}
			if tt.status == 200 {
				if ct := res.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
					t.Errorf("Content-Type %q", ct)
				}
				if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
					t.Errorf("Content-Security-Policy %q", csp)
				}
			}
		})
	}
}

func TestAssets(t *testing.T) {
	h := New(Options{})
	for _, tt := range []struct{ path, ctype, want string }{
		{"/console/static/console.js", "javascript", "Authorization"},
		{"/console/static/console.css", "text/css", ".error-box"},
	} {
		res, body := get(t, h, http.MethodGet, tt.path)
		if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Type"), tt.ctype) || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d %q, %d bytes", tt.path, res.StatusCode, res.Header.Get("Content-Type"), len(body))
		}
		// Nothing is loaded from elsewhere.
		if strings.Contains(body, "http://") || strings.Contains(body, "https://") {
			t.Errorf("%s names an external address", tt.path)
		}
	}
	if res, _ := get(t, h, http.MethodGet, "/console/static/nope.js"); res.StatusCode != 404 {
		t.Errorf("a missing asset: %d", res.StatusCode)
	}
}

func TestRedirectAndMethods(t *testing.T) {
	h := New(Options{})
	if res, _ := get(t, h, http.MethodGet, "/console"); res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "/console/" {
		t.Errorf("/console: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res, _ := get(t, h, http.MethodPost, "/console/"); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", res.StatusCode)
	}
}

func TestEndpointBase(t *testing.T) {
	_, body := get(t, New(Options{EndpointBase: "http://127.0.0.1:8080/"}), http.MethodGet, "/console/")
	if !strings.Contains(body, `data-endpoint-base="http://127.0.0.1:8080"`) {
		t.Errorf("endpoint base not handed to the script:\n%s", body)
	}
}
