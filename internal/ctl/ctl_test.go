package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/echotest"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/mgmttest"
)

// The ctl tests run the command (Run, no binary) against a real
// management API on loopback (internal/mgmttest) with the echo bundle
// deployed.

const token = "tok-1"

// runCtl runs orchd ctl with args and returns its exit code and output.
func runCtl(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("ORCHD_SERVER", "")
	t.Setenv("ORCHD_TOKEN_FILE", "")
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func tokenFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCtlReads(t *testing.T) {
	s := mgmttest.Serve(t, token)
	tf := tokenFile(t)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"processes", []string{"processes"}, []string{"PROCESS", "Echo", "in-memory", "active"}},
		{"process", []string{"process", "Echo"}, []string{"{urn:hotdeploy:process}Echo version 1 (active, in-memory)", "endpoint /processes/echo", "run"}},
		{"bundles", []string{"bundles"}, []string{"BUNDLE", "echo", "deployed"}},
		{"cluster", []string{"cluster"}, []string{"NODE", "local (this)"}},
		{"instances, none", []string{"instances", "--state", "waiting"}, []string{"no instance matches"}},
		{"flags after the verb", []string{"processes", "--server", s.API, "--token-file", tf}, []string{"Echo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.name != "flags after the verb" {
				args = append([]string{"--server", s.API, "--token-file", tf}, args...)
			}
			code, out, errs := runCtl(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestCtlJSON(t *testing.T) {
	s := mgmttest.Serve(t, token)
	code, out, errs := runCtl(t, "--server", s.API, "--token-file", tokenFile(t), "--json", "processes")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var ps []mgmt.Process
	if err := json.Unmarshal([]byte(out), &ps); err != nil || len(ps) != 1 || ps[0].Local != "Echo" {
		t.Fatalf("--json processes: %v, %+v\n%s", err, ps, out)
	}
}

func TestCtlMutations(t *testing.T) {
	s := mgmttest.Serve(t, token)
	// Without the token the server refuses: exit 1, its error printed.
	code, _, errs := runCtl(t, "--server", s.API, "retire", "Echo", "1")
	if code != 1 || !strings.Contains(errs, "orchd ctl:") || !strings.Contains(errs, "(40") {
		t.Fatalf("retire without a token: exit %d, %q; want 1 and the server's refusal", code, errs)
	}
	tf := tokenFile(t)
	if code, out, errs := runCtl(t, "--server", s.API, "--token-file", tf, "retire", "Echo", "1"); code != 0 || !strings.Contains(out, "Echo version 1: retired") {
		t.Fatalf("retire: exit %d, %q %q", code, out, errs)
	}
	if got := echotest.Call(t, s.SOAP, "a"); !strings.HasPrefix(got, "404") {
		t.Fatalf("answer %q with the version retired, want a 404", got)
	}
	if code, _, errs := runCtl(t, "--server", s.API, "--token-file", tf, "activate", "Echo", "1"); code != 0 {
		t.Fatalf("activate: exit %d, %s", code, errs)
	}

	// deploy zips a folder on the fly.
	stage := t.TempDir()
	echotest.Write(t, stage, "echo", "two", true)
	code, out, errs := runCtl(t, "--server", s.API, "--token-file", tf, "deploy", "echo", filepath.Join(stage, "echo"))
	if code != 0 || !strings.Contains(out, "bundle echo deployed: version 2") {
		t.Fatalf("deploy: exit %d, %q %q", code, out, errs)
	}
	if got := echotest.Call(t, s.SOAP, "b"); got != "two-b" {
		t.Fatalf("answer %q after the deploy, want two-b", got)
	}
	// A failed deploy prints its problems, one a line.
	broken := filepath.Join(stage, "echo", "echo.bpel")
	if err := os.WriteFile(broken, []byte("<process"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCtl(t, "--server", s.API, "--token-file", tf, "deploy", "echo", filepath.Join(stage, "echo"))
	if code != 1 || !strings.Contains(errs, "\n  ") || !strings.Contains(errs, "echo.bpel") {
		t.Fatalf("broken deploy: exit %d, %q; want 1 and the problems naming echo.bpel", code, errs)
	}
	if code, out, _ := runCtl(t, "--server", s.API, "--token-file", tf, "undeploy", "echo"); code != 0 || !strings.Contains(out, "undeployed") {
		t.Fatalf("undeploy: exit %d, %q", code, out)
	}
	// Acting on an unknown instance: exit 1, named.
	code, _, errs = runCtl(t, "--server", s.API, "--token-file", tf, "terminate", "m999")
	if code != 1 || !strings.Contains(errs, "terminate m999") || !strings.Contains(errs, "(404)") {
		t.Fatalf("terminate m999: exit %d, %q", code, errs)
	}
}

func TestCtlUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no verb", nil, 2, "usage: orchd ctl"},
		{"help", []string{"help"}, 0, ""},
		{"-h", []string{"-h"}, 0, ""},
		{"unknown verb", []string{"frobnicate"}, 2, `unknown verb "frobnicate"`},
		{"missing argument", []string{"retire", "Echo"}, 2, "want 2 argument(s), got 1"},
		{"bad version", []string{"retire", "Echo", "one"}, 2, `version "one"`},
		{"bad server", []string{"--server", "http:///x", "processes"}, 2, "want a URL such as"},
		{"bad time", []string{"instances", "--started-after", "yesterday"}, 2, "--started-after"},
		{"missing token file", []string{"--token-file", "/nonexistent/token", "processes"}, 2, "--token-file"},
		{"unreachable", []string{"--server", "127.0.0.1:1", "processes"}, 1, "orchd at http://127.0.0.1:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCtl(t, tc.args...)
			if code != tc.code || !strings.Contains(out+errs, tc.want) {
				t.Fatalf("exit %d, want %d; output %q %q, want %q", code, tc.code, out, errs, tc.want)
			}
		})
	}
}

// TestZipBundleTaskPackage: deploy zips a WSO2 BPS task package folder
// (.ht files and htconfig.xml, no deploy.xml) as it does a bundle; a
// folder with neither is refused before anything is sent, saying what a
// bundle holds.
func TestZipBundleTaskPackage(t *testing.T) {
	if b, err := ZipBundle("../../testdata/wso2-humantask/ClaimsApproval2/ClaimsApprovalTask"); err != nil || len(b) == 0 {
		t.Fatalf("task package: %d bytes, %v; want its zip", len(b), err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.wsdl"), []byte("<x/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ZipBundle(dir); err == nil || !strings.Contains(err.Error(), "no deploy.xml (a process bundle) and no .ht file or htconfig.xml (a task package)") {
		t.Fatalf("a WSDL alone: %v, want refused naming what a bundle holds", err)
	}
}
