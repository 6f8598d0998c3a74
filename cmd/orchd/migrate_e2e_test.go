package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/admin"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/mgmtclient"
)

// A persistent migration killed (SIGKILL) in its middle loses nothing:
// after the restart every waiting approval is on version 1 or on
// version 2, once each; the rest then move, each completes on version
// 2 with version 2's answer, and version 1, left without instances, is
// dropped without a restart.
func TestMigrateKill9(t *testing.T) {
	const n = 60
	deploy, data, tf := t.TempDir(), t.TempDir(), tokenFile(t, adminToken)
	copyBundleFrom(t, "../../deploy/order-approval", deploy, "order-approval", "", "", nil)
	args := []string{"--deploy", deploy, "--data", data, "--admin-token-file", tf, "--deploy-poll", "200ms"}
	o := startOrchd(t, args...)
	client := &http.Client{Timeout: 30 * time.Second}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("M-%03d", i)
		r := post(t, client, o.base+approvalPath, textXML, "", approvalBody("requestApproval", ids[i], "<appr:amount>10</appr:amount><appr:requester>ann</appr:requester>"))
		if st := approvalStatus(t, r); st != "PENDING" {
			t.Fatalf("request %s: %s", ids[i], st)
		}
	}
	stage := t.TempDir()
	copyBundleFrom(t, "../../deploy/order-approval", stage, "order-approval", "", "", map[string][][2]string{
		"OrderApproval.bpel": {{"'APPROVED'", "'APPROVED-V2'"}},
	})
	mustCtl(t, o.base, "--token-file", tf, "deploy", "order-approval", filepath.Join(stage, "order-approval"))

	onVersion := func(o *orchd, v int) []string {
		t.Helper()
		var out []string
		for _, in := range ctlInstances(t, o.base, "--token-file", tf, "--process", "OrderApproval", "--version", fmt.Sprint(v), "--state", "waiting") {
			out = append(out, in.Correlations["byRequest"])
		}
		return out
	}
	// The migration runs; orchd is killed once some instances moved.
	done := make(chan ctlResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var out, errOut strings.Builder
		code := run(ctx, []string{"ctl", "--server", o.base, "--token-file", tf, "migrate", "OrderApproval", "--from", "1", "--to", "2", "--max", fmt.Sprint(n)}, &out, &errOut)
		done <- ctlResult{code, out.String(), errOut.String()}
	}()
	c, err := mgmtclient.New(o.base, mgmtclient.Options{HTTP: client, Token: adminToken})
	if err != nil {
		t.Fatal(err)
	}
	q := admin.Values(mgmt.Query{Process: "OrderApproval", Version: 2, State: mgmt.StateWaiting, Limit: n})
	moved := 0
	for deadline := time.Now().Add(20 * time.Second); moved == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		var p mgmt.Page
		if err := c.Get(context.Background(), "/instances", q, &p); err != nil {
			t.Fatal(err)
		}
		moved = len(p.Instances)
	}
	kill9(t, o)
	r := <-done
	t.Logf("killed with %d of %d moved (the migration: exit %d)", moved, n, r.code)
	if moved == 0 {
		t.Fatalf("no instance moved before the kill: %s", r)
	}

	o = startOrchd(t, args...)
	v1, v2 := onVersion(o, 1), onVersion(o, 2)
	all := append(slices.Clone(v1), v2...)
	slices.Sort(all)
	if !slices.Equal(all, ids) {
		t.Fatalf("after the kill: %d on version 1, %d on version 2, want each of the %d once", len(v1), len(v2), n)
	}
	if len(v2) < moved {
		t.Fatalf("%d on version 2 after the restart, %d were before the kill", len(v2), moved)
	}
	out := mustCtl(t, o.base, "--token-file", tf, "migrate", "OrderApproval", "--from", "1", "--to", "2", "--max", fmt.Sprint(n))
	if want := fmt.Sprintf("%d waiting matched, %d moved, 0 cannot move", len(v1), len(v1)); !strings.Contains(out, want) {
		t.Fatalf("the rest of the migration: %s, want %q", out, want)
	}
	for _, id := range ids {
		r := post(t, client, o.base+approvalPath, textXML, "", approvalBody("decide", id, "<appr:approved>true</appr:approved><appr:approver>bob</appr:approver>"))
		if st := approvalStatus(t, r); st != "APPROVED-V2" {
			t.Fatalf("decide %s: %s, want version 2's APPROVED-V2", id, st)
		}
	}
	// Version 1 has no instance left: the deployer's poll drops it.
	dropped := regexp.MustCompile(`msg="version dropped".*version=1`)
	waitUntil(t, "version 1 dropped", func() bool { return dropped.MatchString(o.log()) })
	if out := mustCtl(t, o.base, "--token-file", tf, "processes"); strings.Contains(out, "retired") {
		t.Fatalf("a retired version is still listed:\n%s", out)
	}
}
