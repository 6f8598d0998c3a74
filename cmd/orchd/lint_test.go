package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLintCommand runs orchd lint in process over the real loader: the
// deploy directory is clean (0), a bundle breaking a static analysis rule
// is reported with the rule, file and line (1, also as JSON), and no
// operand or a folder without bundles is a usage error (2).
func TestLintCommand(t *testing.T) {
	bad := t.TempDir()
	src := "../../internal/process/check/testdata"
	for _, f := range []string{"SA00003-scope.bpel", "common.wsdl"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bad, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dd := `<deploy xmlns="http://www.apache.org/ode/schemas/dd/2007/03" xmlns:f="urn:f" xmlns:t="urn:t">
<process name="f:F"><provide partnerLink="client"><service name="t:S" port="P"/></provide><invoke partnerLink="partner"><service name="t:S2" port="P"/></invoke></process>
</deploy>`
	if err := os.WriteFile(filepath.Join(bad, "deploy.xml"), []byte(dd), 0o644); err != nil {
		t.Fatal(err)
	}

	if code, out, errOut := runInProcess("lint", "../../deploy"); code != 0 || out != "" {
		t.Errorf("lint deploy: exit %d, stdout %q, stderr %q; want 0 and nothing", code, out, errOut)
	}
	code, out, _ := runInProcess("lint", bad)
	want := filepath.Join(bad, "SA00003-scope.bpel") + `:20: <catch faultName="bpel:uninitializedVariable">: SA00003: scope "main" has exitOnStandardFault="yes", so it must not catch a standard fault`
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("lint bad bundle: exit %d, stdout:\n%s\nwant 1 and %q", code, out, want)
	}
	code, out, _ = runInProcess("lint", "--json", bad, "../../deploy")
	var problems []struct {
		File, Rule, Section string
		Line                int
	}
	if err := json.Unmarshal([]byte(out), &problems); err != nil {
		t.Fatalf("lint --json: %v\n%s", err, out)
	}
	if code != 1 || len(problems) != 1 || problems[0].Rule != "SA00003" || problems[0].Line != 20 || problems[0].Section != "5.2" {
		t.Errorf("lint --json: exit %d, %+v; want 1 and one SA00003 problem at line 20", code, problems)
	}
	for _, args := range [][]string{{"lint"}, {"lint", t.TempDir()}, {"lint", "--nope", bad}} {
		if code, _, errOut := runInProcess(args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errOut)
		}
	}
}

// TestLintTaskPackage: orchd lint takes WSO2 BPS's task packages (.ht
// files and htconfig.xml, no deploy.xml): the two-package ClaimsApproval
// sample is clean as a deploy directory and package by package (0); a
// broken package's problems name file, element and line (1); a package
// with htconfig.xml and no .ht file is a problem; a folder with neither
// a deploy.xml nor task definitions is still a usage error (2).
func TestLintTaskPackage(t *testing.T) {
	const sample = "../../testdata/wso2-humantask/ClaimsApproval2"
	for _, dir := range []string{sample, filepath.Join(sample, "ClaimsApprovalTask"), filepath.Join(sample, "ClaimsApprovalProcess")} {
		if code, out, errOut := runInProcess("lint", dir); code != 0 || out != "" {
			t.Errorf("lint %s: exit %d, stdout %q, stderr %q; want 0 and nothing", dir, code, out, errOut)
		}
	}
	bad := filepath.Join(t.TempDir(), "ClaimsApprovalTask")
	if err := os.CopyFS(bad, os.DirFS(filepath.Join(sample, "ClaimsApprovalTask"))); err != nil {
		t.Fatal(err)
	}
	ht := filepath.Join(bad, "ClaimsApprovalTask.ht")
	b, err := os.ReadFile(ht)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ht, []byte(strings.Replace(string(b), `<htd:task name="ApproveClaim">`, `<htd:task>`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runInProcess("lint", bad)
	for _, want := range []string{
		filepath.Join(bad, "ClaimsApprovalTask.ht") + ":27: <task>: a task needs a name",
		filepath.Join(bad, "htconfig.xml") + ":6: <task>: task ApproveClaim is not defined in the .ht files beside it",
	} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("lint broken task package: exit %d, stdout:\n%s\nwant 1 and %q", code, out, want)
		}
	}
	if err := os.Remove(ht); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runInProcess("lint", bad); code != 1 || !strings.Contains(out, "htconfig.xml but no .ht file") {
		t.Errorf("lint package without .ht: exit %d, stdout %q; want 1 and the missing .ht", code, out)
	}
	if err := os.Remove(filepath.Join(bad, "htconfig.xml")); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runInProcess("lint", bad); code != 2 || !strings.Contains(errOut, "no deploy.xml, no task package") {
		t.Errorf("lint folder of a WSDL alone: exit %d, stderr %q; want 2 and what a bundle holds", code, errOut)
	}
}
