package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
)

// A persistent process follows its failure policy: with faultOnFailure
// the failed call throws the catchable ext:activityFailure; without a
// policy the instance is suspended for an operator, with the failure as
// its reason, and the client is told so.
func TestPartnerFailurePersistent(t *testing.T) {
	partner := startMisbehaving(t, "s3cret-Pa55")
	deploy := t.TempDir()
	writePartnerFail(t, deploy, "http://"+partner.addr, "http://"+deadAddr(t), "http://partner.invalid:9")
	dd := filepath.Join(deploy, "partnerfail", "deploy.xml")
	b, err := os.ReadFile(dd)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "<in-memory>true</in-memory>", "<in-memory>false</in-memory>", 1)
	s = strings.Replace(s, `<invoke partnerLink="refused"><service name="tns:PartnerService" port="Refused"/></invoke>`,
		`<invoke partnerLink="refused"><service name="tns:PartnerService" port="Refused"/>`+
			`<ext:failureHandling><ext:faultOnFailure>true</ext:faultOnFailure></ext:failureHandling></invoke>`, 1)
	if err := os.WriteFile(dd, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir())
	client := &http.Client{Timeout: 30 * time.Second}

	a := callPartnerFail(t, client, o.base, "refused-p", "refused")
	if a.status != 200 || a.fault != "ext:activityFailure" || !strings.Contains(a.text, "connection refused") {
		t.Fatalf("faultOnFailure: %+v\n%s", a, o.log())
	}
	a = callPartnerFail(t, client, o.base, "nohost-p", "nohost")
	t.Logf("no policy: %d %s", a.status, a.body)
	var ins []mgmt.InstanceDetail
	if !eventually(func() bool {
		ins = listInstances(t, o, mgmt.Query{Process: "PartnerFail", State: mgmt.StateSuspended})
		return len(ins) == 1
	}) {
		t.Fatalf("no suspended instance: %+v\n%s", listInstances(t, o, mgmt.Query{Process: "PartnerFail"}), o.log())
	}
	t.Logf("%+v", ins[0])
}
