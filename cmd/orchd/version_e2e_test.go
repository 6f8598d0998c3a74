package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestVersionCommand: orchd version and orchd --version print the same
// line (version, VCS revision, Go version) and the management API's
// GET /api/v1/ says the same of the running server.
func TestVersionCommand(t *testing.T) {
	line := regexp.MustCompile(`^orchd (\S+) \(revision (\S+)\) built with (go\S+)\n$`)
	var first string
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, err := runOrchd(t, args...)
		if err != nil || !line.Match(out) {
			t.Fatalf("orchd %s: %v\n%s\nwant a line matching %s", args[0], err, out, line)
		}
		if first == "" {
			first = string(out)
		} else if string(out) != first {
			t.Errorf("orchd --version printed %q, orchd version %q", out, first)
		}
	}
	m := line.FindStringSubmatch(first)
	if m[3] != runtime.Version() {
		t.Errorf("Go version %q, want %q (the toolchain that built it)", m[3], runtime.Version())
	}

	o := startOrchd(t, "--deploy", t.TempDir())
	_, body := get(t, o.base+"/api/v1/")
	var info struct {
		Version, Revision, GoVersion string
	}
	if err := json.Unmarshal([]byte(body), &info); err != nil {
		t.Fatalf("GET /api/v1/: %v\n%s", err, body)
	}
	if got := fmt.Sprintf("orchd %s (revision %s) built with %s\n", info.Version, info.Revision, info.GoVersion); got != first {
		t.Errorf("GET /api/v1/ says %q, orchd version %q\n%s", got, first, body)
	}
	if code, _, errOut := runInProcess("version", "extra"); code != 2 || !strings.Contains(errOut, "no arguments") {
		t.Errorf("orchd version extra: exit %d, %q; want 2 and a message", code, errOut)
	}
}
