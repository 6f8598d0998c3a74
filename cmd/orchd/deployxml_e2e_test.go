package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDeployXMLTypos: a deploy.xml with a misspelt element of ODE's
// deploy namespace or of orchd's is refused, with its line and the
// nearest known name, by orchd lint, by the hot deploy directory and by
// an upload through the management API (orchd ctl deploy, which prints
// the errors once); orchd ctl bundles keeps its columns, each error below
// its bundle's row.
func TestDeployXMLTypos(t *testing.T) {
	partner := startSlowPartner(t, 0)
	deploy := t.TempDir()
	o := startOrchd(t, "--deploy", deploy, "--deploy-poll", hotPoll, "--admin-token-file", tokenFile(t, adminToken))
	tok := tokenFile(t, adminToken)
	body := `<sequence>
  <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
  ` + initOut + `
  <reply partnerLink="client" operation="run" variable="out"/>
</sequence>`
	for _, tc := range []struct {
		name      string
		old, repl string
		want      string
	}{
		{"InMemorry", "<in-memory>true</in-memory>", "<in-memorry>true</in-memorry>",
			"deploy.xml:4: <in-memorry>: unknown element in <process> of ODE's deploy namespace; did you mean in-memory?"},
		{"Timout", `<invoke partnerLink="partner"><service name="tns:PartnerService" port="PartnerPort"/>`,
			`<invoke partnerLink="partner"><service name="tns:PartnerService" port="PartnerPort"/><orchd:timout xmlns:orchd="urn:orchd:deploy">PT2S</orchd:timout>`,
			"deploy.xml:6: <orchd:timout>: unknown element of orchd's deploy namespace (urn:orchd:deploy) in <invoke>; did you mean timeout?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			writeProcess(t, src, tc.name, partner.addr, body, true)
			ddPath := filepath.Join(src, tc.name, "deploy.xml")
			dd, err := os.ReadFile(ddPath)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(dd), tc.old) {
				t.Fatalf("deploy.xml lacks %q:\n%s", tc.old, dd)
			}
			if err := os.WriteFile(ddPath, []byte(strings.Replace(string(dd), tc.old, tc.repl, 1)), 0o644); err != nil {
				t.Fatal(err)
			}

			code, out, errOut := runInProcess("lint", filepath.Join(src, tc.name))
			if code != 1 || !strings.Contains(out, tc.want) {
				t.Errorf("orchd lint: exit %d\nstdout:\n%s\nstderr:\n%s\nwant 1 and %q", code, out, errOut, tc.want)
			}

			r := runCtl(t, o.base, "--token-file", tok, "deploy", strings.ToLower(tc.name), filepath.Join(src, tc.name))
			if r.code != 1 || strings.Count(r.stderr, tc.want) != 1 {
				t.Errorf("orchd ctl deploy: %s\nwant exit 1 and %q once", r, tc.want)
			}
			if r := callRun(t, o.base, tc.name, "T1", "1"); r.status == 200 {
				t.Errorf("the uploaded bundle was deployed: %s", r.body)
			}

			if err := os.Rename(filepath.Join(src, tc.name), filepath.Join(deploy, tc.name)); err != nil {
				t.Fatal(err)
			}
			if !eventually(func() bool { return strings.Contains(o.log(), tc.want) }) {
				t.Errorf("the hot deploy did not report %q\n%s", tc.want, o.log())
			}
			if r := callRun(t, o.base, tc.name, "T2", "1"); r.status == 200 {
				t.Errorf("the hot-deployed bundle was deployed: %s", r.body)
			}
		})
	}

	out := mustCtl(t, o.base, "--token-file", tok, "bundles")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	state := strings.Index(lines[0], "STATE")
	rows, errLines := 0, 0
	for _, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, "  "):
			errLines++
			if !strings.Contains(l, "deploy.xml:") {
				t.Errorf("an error line without its file: %q", l)
			}
		case state < 0 || len(l) < state || l[state-1] != ' ' || l[state] == ' ':
			t.Errorf("row %q: its state is not under STATE (column %d)\n%s", l, state, out)
		default:
			rows++
		}
	}
	if state < 0 || state > 20 || rows < 2 || errLines < 2 {
		t.Errorf("bundles: want STATE within 20 columns, 2 rows and their errors below them:\n%s", out)
	}
}

// TestFaultedMemInstanceLogged: the log line of an in-memory instance
// that faults after its reply names the instance (an id the management
// API lists it by) and says what failed and where.
func TestFaultedMemInstanceLogged(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "Late", "127.0.0.1:1", `<sequence>
  <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
  `+initOut+`
  <reply partnerLink="client" operation="run" variable="out"/>
  <assign name="after"><copy><from>$in.payload/tns:missing</from><to>$out.payload/tns:a</to></copy></assign>
</sequence>`, true)
	o := startOrchd(t, "--deploy", deploy)
	if r := callRun(t, o.base, "Late", "L1", "1"); r.status != 200 {
		t.Fatalf("call: %d %s", r.status, r.body)
	}
	line := regexp.MustCompile(`msg="instance ended with an error".* instance=m\d+ .*selectionFailure.*<assign name=\\"after\\">: <from> selected nothing: expression \\"\$in.payload/tns:missing\\" \(reads variable in\)`)
	if !eventually(func() bool { return line.MatchString(o.log()) }) {
		t.Fatalf("no log line matching %s\n%s", line, o.log())
	}
}
