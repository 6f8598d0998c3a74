package ctl

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/echotest"
	"github.com/orchd/orchd/internal/mgmttest"
)

// TestCtlDiagram draws the echo process through orchd ctl diagram
// against a real API: an SVG whose activities carry their plan ids and
// the counts of the instances timed (the first ones of a version are),
// served as image/svg+xml behind the token; a wrong process, version or
// instance is the server's refusal.
func TestCtlDiagram(t *testing.T) {
	s := mgmttest.Serve(t, token)
	tf := tokenFile(t)
	for _, id := range []string{"d1", "d2"} {
		if got := echotest.Call(t, s.SOAP, id); got != "one-"+id {
			t.Fatalf("echo %s: %q", id, got)
		}
	}
	code, out, errOut := runCtl(t, "--server", s.API, "--token-file", tf, "diagram", "Echo")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, "<svg ") || !strings.Contains(out, `data-kind="receive"`) || !strings.Contains(out, `data-activity="`) {
		t.Fatalf("not the echo process's diagram:\n%s", out)
	}
	// The first instances of a version are timed: the receive completed twice.
	if !strings.Contains(out, "×2 · ") {
		t.Errorf("no activity shows two timed completions:\n%s", out)
	}
	d := xml.NewDecoder(strings.NewReader(out))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not well-formed: %v", err)
		}
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown process", []string{"diagram", "Nope"}, "not found"},
		{"unknown version", []string{"diagram", "Echo", "--version", "9"}, "not found"},
		{"unknown instance", []string{"diagram", "Echo", "--instance", "m999999"}, "not found"},
		{"no process", []string{"diagram"}, "want 1 argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCtl(t, append([]string{"--server", s.API, "--token-file", tf}, tc.args...)...)
			if code == 0 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want a failure saying %q", code, errOut, tc.want)
			}
		})
	}

	get := func(auth string) *http.Response {
		req, err := http.NewRequest(http.MethodGet, s.API+"/api/v1/processes/Echo/diagram", nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	if res := get(""); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %s", res.Status)
	}
	res := get(token)
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/svg+xml" || !bytes.HasPrefix(body, []byte("<svg ")) {
		t.Errorf("with the token: %s, %q, %.40q", res.Status, res.Header.Get("Content-Type"), body)
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
}
