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
