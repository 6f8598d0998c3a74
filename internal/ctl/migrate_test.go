package ctl

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/echotest"
	"github.com/orchd/orchd/internal/mgmttest"
)

// orchd ctl migrate against a real API: the echo process has no waiting
// instances, so what is checked here is the verb's path (flags, query,
// route, token, the result's printing) and its refusals; the moves
// themselves are internal/process's TestMigrate and cmd/orchd's
// TestMigrateKill9.
func TestCtlMigrate(t *testing.T) {
	s := mgmttest.Serve(t, token)
	tf := tokenFile(t)
	stage := t.TempDir()
	echotest.Write(t, stage, "echo", "two", true)
	if code, _, errs := runCtl(t, "--server", s.API, "--token-file", tf, "deploy", "echo", filepath.Join(stage, "echo")); code != 0 {
		t.Fatalf("deploy version 2: exit %d, %s", code, errs)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"dry run", []string{"--token-file", tf, "migrate", "Echo", "--from", "1", "--to", "2", "--dry-run", "--correlation", "x"}, 0,
			"Echo version 1 -> 2: 0 waiting matched, 0 would move (dry run), 0 cannot move"},
		{"moves", []string{"--token-file", tf, "migrate", "Echo", "--from", "1", "--to", "2", "--map-variable", "a=b"}, 0,
			"Echo version 1 -> 2: 0 waiting matched, 0 moved, 0 cannot move"},
		{"json", []string{"--token-file", tf, "--json", "migrate", "Echo", "--from", "1", "--to", "2"}, 0, `"moved": []`},
		{"no token", []string{"migrate", "Echo", "--from", "1", "--to", "2"}, 1, "(40"},
		{"unknown version", []string{"--token-file", tf, "migrate", "Echo", "--from", "1", "--to", "9"}, 1, "version 9: not found (404)"},
		{"same version", []string{"--token-file", tf, "migrate", "Echo", "--from", "2", "--to", "2"}, 1, "want two versions"},
		{"not waiting", []string{"--token-file", tf, "migrate", "Echo", "--from", "1", "--to", "2", "--state", "completed"}, 1, "only waiting instances move"},
		{"no versions", []string{"migrate", "Echo"}, 2, "give --from and --to"},
		{"--process", []string{"migrate", "Echo", "--from", "1", "--to", "2", "--process", "X"}, 2, "the process is the argument"},
		{"bad mapping", []string{"migrate", "Echo", "--from", "1", "--to", "2", "--map-variable", "x"}, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCtl(t, append([]string{"--server", s.API}, tc.args...)...)
			if code != tc.code || !strings.Contains(out+errs, tc.want) {
				t.Fatalf("exit %d, want %d; output %q %q, want %q", code, tc.code, out, errs, tc.want)
			}
		})
	}
}
