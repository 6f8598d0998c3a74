package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
)

// editPartnerFail rewrites a file of the partnerfail bundle written into
// deployDir by writePartnerFail: each pair of old, new in turn, each of
// which must be there.
func editPartnerFail(t *testing.T, deployDir, file string, oldNew ...string) {
	t.Helper()
	path := filepath.Join(deployDir, "partnerfail", file)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i+1 < len(oldNew); i += 2 {
		if !strings.Contains(s, oldNew[i]) {
			t.Fatalf("%s has no %q", file, oldNew[i])
		}
		s = strings.Replace(s, oldNew[i], oldNew[i+1], 1)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

const (
	pfInMemory   = "<in-memory>true</in-memory>"
	pfPersistent = "<in-memory>false</in-memory>"
)

// TestPartnerFailuresBothModes runs every partner misbehaviour of
// TestPartnerFailures against the same catching process, once deployed
// in-memory and once persistent (a real bbolt store): the answers are the
// same, and the table's.
func TestPartnerFailuresBothModes(t *testing.T) {
	partner := startMisbehaving(t, "s3cret-Pa55")
	silent := startSilent(t)
	refused, nohost := "http://"+deadAddr(t), "http://partner.invalid:9"
	modes := []struct {
		name string
		o    *orchd
	}{{name: "mem"}, {name: "persist"}}
	for i := range modes {
		deploy := t.TempDir()
		writePartnerFail(t, deploy, "http://"+partner.addr, refused, nohost, "http://"+silent.addr)
		args := []string{"--deploy", deploy, "--partner-timeout", "5s", "--partner-max-response", "1048576"}
		if modes[i].name == "persist" {
			editPartnerFail(t, deploy, "deploy.xml", pfInMemory, pfPersistent)
			args = append(args, "--data", t.TempDir())
		}
		modes[i].o = startOrchd(t, args...)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	// The ids and orchd's local port of a connection differ by mode,
	// nothing else does.
	idRE := regexp.MustCompile(`(ok|flaky|authok)-(mem|persist)`)
	portRE := regexp.MustCompile(`:\d+->`)
	for _, row := range partnerFailureRows() {
		t.Run(row.behaviour, func(t *testing.T) {
			var answers []pfAnswer
			for _, m := range modes {
				a := callPartnerFail(t, client, m.o.base, row.behaviour+"-"+m.name, row.via)
				t.Logf("%s: %d %s: %s", m.name, a.status, a.fault, a.text)
				if a.status != 200 || a.fault != row.fault {
					t.Errorf("%s: answer %d fault %q text %q, want fault %q\n%s", m.name, a.status, a.fault, a.text, row.fault, a.body)
				}
				for _, w := range row.text {
					if !strings.Contains(a.text, w) {
						t.Errorf("%s: text %q does not say %q", m.name, a.text, w)
					}
				}
				a.text = portRE.ReplaceAllString(idRE.ReplaceAllString(a.text, "$1-ID"), ":PORT->")
				answers = append(answers, a)
			}
			if answers[0].fault != answers[1].fault || answers[0].text != answers[1].text {
				t.Errorf("in-memory answered %s %q, persistent %s %q", answers[0].fault, answers[0].text, answers[1].fault, answers[1].text)
			}
		})
	}
	// The persistent instances all ended: none waits for an operator.
	o := modes[1].o
	if ins := listInstances(t, o, mgmt.Query{Process: "PartnerFail", State: mgmt.StateSuspended}); len(ins) != 0 {
		t.Errorf("suspended instances: %+v", ins)
	}
	partner.mu.Lock()
	flaky := [2]int{partner.attempts["flaky-mem"], partner.attempts["flaky-persist"]}
	partner.mu.Unlock()
	if flaky != [2]int{2, 2} {
		t.Errorf("flaky partner called %v times (in-memory, persistent), want 2 each (retryFor 1)", flaky)
	}
}
