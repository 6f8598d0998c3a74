package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/admin"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/mgmtclient"
)

// These tests run real orchd processes on a real data file, kill them with
// SIGKILL and start them again.

const (
	persistentPOPath = "/processes/PurchaseOrderPersistent"
	approvalPath     = "/processes/OrderApproval"
)

// persistentDeploy lays out the persistent PO (without cleanup, so
// completed instances stay to be counted), the approval example, and the
// in-memory PO, all pointed at the given partners.
func persistentDeploy(t *testing.T, crm, erp string) string {
	t.Helper()
	deploy := t.TempDir()
	copyBundleFrom(t, "../../deploy/purchase-order-persistent", deploy, "po-persistent", crm, erp, map[string][][2]string{
		"deploy.xml": {{`<cleanup on="success"/>`, ``}},
	})
	copyBundleFrom(t, "../../deploy/order-approval", deploy, "order-approval", crm, erp, nil)
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	return deploy
}

// listInstances lists the stored instances q selects, each with its
// detail (variables, branches): the management API's listing, every
// page, and each instance's detail, through the API's client (the
// tests' admin token: a server without a token reads without it).
// Waiting in-memory instances are left out.
func listInstances(t *testing.T, o *orchd, q mgmt.Query) []mgmt.InstanceDetail {
	t.Helper()
	out, err := apiInstances(context.Background(), o.base, q)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// apiInstances is listInstances, its error returned.
func apiInstances(ctx context.Context, base string, q mgmt.Query) ([]mgmt.InstanceDetail, error) {
	c, err := mgmtclient.New(base, mgmtclient.Options{HTTP: &http.Client{Timeout: 30 * time.Second}, Token: adminToken})
	if err != nil {
		return nil, err
	}
	q.Limit = 1000
	var out []mgmt.InstanceDetail
	for {
		var page mgmt.Page
		if err := c.Get(ctx, "/instances", admin.Values(q), &page); err != nil {
			return nil, fmt.Errorf("GET /api/v1/instances: %w", err)
		}
		for _, in := range page.Instances {
			if in.InMemory {
				continue
			}
			var d mgmt.InstanceDetail
			err := c.Get(ctx, "/instances/"+url.PathEscape(in.ID), nil, &d)
			if errors.Is(err, mgmt.ErrNotFound) {
				continue // deleted meanwhile (cleanup)
			}
			if err != nil {
				return nil, fmt.Errorf("GET /api/v1/instances/%s: %w", in.ID, err)
			}
			out = append(out, d)
		}
		if page.Next == "" {
			return out, nil
		}
		q.After = page.Next
	}
}

func poRequest(t *testing.T, id string) []byte {
	return bytes.Replace(readWorkload(t, "po-request.xml"), []byte("PO-000123"), []byte(id), 1)
}

func kill9(t *testing.T, o *orchd) {
	t.Helper()
	if err := o.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-o.done
	o.done <- err
}

func TestPersistentKillRecover(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := persistentDeploy(t, crm, erp)
	data := t.TempDir()
	o := startOrchd(t, "--deploy", deploy, "--data", data)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

	// 8 clients stream persistent POs; orchd is killed while they run.
	var acked sync.Map // poId -> crmRef
	var n atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("PO-%d-%04d", c, i)
				req, _ := http.NewRequest(http.MethodPost, o.base+persistentPOPath, bytes.NewReader(poRequest(t, id)))
				req.Header.Set("Content-Type", textXML)
				resp, err := client.Do(req)
				if err != nil {
					return // killed
				}
				var b bytes.Buffer
				_, _ = b.ReadFrom(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 && strings.Contains(b.String(), "ACCEPTED") {
					acked.Store(id, true)
					n.Add(1)
				}
			}
		}(c)
	}
	for wait := time.Now().Add(60 * time.Second); n.Load() < 40; {
		if time.Now().After(wait) {
			t.Fatalf("only %d persistent exchanges acknowledged in a minute\n%s", n.Load(), o.log())
		}
		time.Sleep(5 * time.Millisecond)
	}
	kill9(t, o)
	close(stop)
	wg.Wait()
	count := n.Load()
	t.Logf("%d exchanges acknowledged before kill -9", count)

	o2 := startOrchd(t, "--deploy", deploy, "--data", data)
	byPO := map[string][]mgmt.InstanceDetail{}
	for _, in := range listInstances(t, o2, mgmt.Query{Process: "PurchaseOrderPersistent"}) {
		v := in.Variables["poIn"]
		i := strings.Index(v, "<po:poId>")
		j := strings.Index(v, "</po:poId>")
		if i < 0 || j < i {
			continue
		}
		id := v[i+len("<po:poId>") : j]
		byPO[id] = append(byPO[id], in)
	}
	missing := 0
	acked.Range(func(k, _ any) bool {
		ins := byPO[k.(string)]
		switch {
		case len(ins) == 0:
			missing++
			t.Errorf("acknowledged %s has no instance after restart", k)
		case len(ins) > 1:
			t.Errorf("acknowledged %s has %d instances", k, len(ins))
		case ins[0].State != "completed":
			t.Errorf("acknowledged %s is %s, want completed", k, ins[0].State)
		case !strings.Contains(ins[0].Variables["ackOut"], "ACCEPTED") || !strings.Contains(ins[0].Variables["crmResp"], "CRM-"):
			t.Errorf("acknowledged %s lacks its variables: %v", k, ins[0].Variables)
		}
		return true
	})
	// The restarted server serves persistent exchanges again.
	checkAck(t, post(t, client, o2.base+persistentPOPath, textXML, "", poRequest(t, "PO-AFTER")), map[string]string{"poId": "PO-AFTER", "status": "ACCEPTED"})
}

func approvalBody(op, id string, extra string) []byte {
	el := map[string]string{"requestApproval": "approvalRequest", "decide": "decision"}[op]
	return []byte(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
		`<appr:` + el + ` xmlns:appr="urn:example:approval"><appr:requestId>` + id + `</appr:requestId>` + extra +
		`</appr:` + el + `></soapenv:Body></soapenv:Envelope>`)
}

func approvalStatus(t *testing.T, r response) string {
	t.Helper()
	i, j := strings.Index(r.body, "<appr:status>"), strings.Index(r.body, "</appr:status>")
	if r.status != 200 || i < 0 || j < i {
		t.Fatalf("no approval status: %d\n%s", r.status, r.body)
	}
	return r.body[i+len("<appr:status>") : j]
}

func TestWaitingInstanceSurvivesRestart(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := persistentDeploy(t, crm, erp)
	data := t.TempDir()
	client := &http.Client{Timeout: 30 * time.Second}
	o := startOrchd(t, "--deploy", deploy, "--data", data)
	for _, id := range []string{"R-1", "R-2"} {
		r := post(t, client, o.base+approvalPath, textXML, `"urn:example:approval#requestApproval"`, approvalBody("requestApproval", id, "<appr:amount>10</appr:amount><appr:requester>ann</appr:requester>"))
		if st := approvalStatus(t, r); st != "PENDING" {
			t.Fatalf("%s: %s", id, st)
		}
	}
	kill9(t, o)
	o2 := startOrchd(t, "--deploy", deploy, "--data", data, "--message-hold", "300ms")
	if !strings.Contains(o2.log(), "waiting=2") {
		t.Errorf("recovery did not find the two waiting instances:\n%s", o2.log())
	}
	r := post(t, client, o2.base+approvalPath, textXML, "", approvalBody("decide", "R-2", "<appr:approved>true</appr:approved><appr:approver>bob</appr:approver>"))
	if st := approvalStatus(t, r); st != "APPROVED" {
		t.Errorf("R-2 decided: %s", st)
	}
	r = post(t, client, o2.base+approvalPath, textXML, "", approvalBody("decide", "R-1", "<appr:approved>false</appr:approved><appr:approver>bob</appr:approver>"))
	if st := approvalStatus(t, r); st != "REJECTED" {
		t.Errorf("R-1 decided: %s", st)
	}
	// A decision nobody waits for: a clear Client fault.
	r = post(t, client, o2.base+approvalPath, textXML, "", approvalBody("decide", "R-404", "<appr:approved>true</appr:approved><appr:approver>bob</appr:approver>"))
	code, reason := faultCode(t, r.body)
	if code != "Client" || !strings.Contains(reason, "byRequest=R-404") {
		t.Errorf("uncorrelated decision: %s %q", code, reason)
	}
	for _, in := range listInstances(t, o2, mgmt.Query{Process: "OrderApproval"}) {
		if in.State != "completed" {
			t.Errorf("instance %s (%v) is %s", in.ID, in.Correlations, in.State)
		}
	}
}

func TestTimerFiresAfterRestart(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := persistentDeploy(t, crm, erp)
	data := t.TempDir()
	client := &http.Client{Timeout: 30 * time.Second}
	o := startOrchd(t, "--deploy", deploy, "--data", data)
	r := post(t, client, o.base+approvalPath, textXML, "", approvalBody("requestApproval", "T-1", "<appr:amount>10</appr:amount><appr:requester>ann</appr:requester><appr:timeout>PT2S</appr:timeout>"))
	if st := approvalStatus(t, r); st != "PENDING" {
		t.Fatalf("request: %s", st)
	}
	kill9(t, o)
	time.Sleep(2500 * time.Millisecond) // the timer falls due while orchd is down
	o2 := startOrchd(t, "--deploy", deploy, "--data", data)
	deadline := time.Now().Add(10 * time.Second)
	for {
		ins := listInstances(t, o2, mgmt.Query{Process: "OrderApproval"})
		if len(ins) == 1 && ins[0].State == "completed" {
			if !strings.Contains(ins[0].Variables["status"], "EXPIRED") {
				t.Errorf("expired instance's status: %s", ins[0].Variables["status"])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the timer did not fire after restart: %+v", ins)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestGroupCommitUnderConcurrency(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := persistentDeploy(t, crm, erp)
	o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir())
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var wg sync.WaitGroup
	var failures atomic.Int64
	for c := 0; c < 64; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				req, _ := http.NewRequest(http.MethodPost, o.base+persistentPOPath, bytes.NewReader(poRequest(t, fmt.Sprintf("G-%d-%d", c, i))))
				req.Header.Set("Content-Type", textXML)
				resp, err := client.Do(req)
				if err != nil {
					failures.Add(1)
					continue
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					failures.Add(1)
				}
			}
		}(c)
	}
	wg.Wait()
	if f := failures.Load(); f != 0 {
		t.Fatalf("%d of 320 persistent exchanges failed", f)
	}
	_, metrics := get(t, o.base+"/metrics")
	var txs, cps float64
	fmt.Sscan(metricValue(t, metrics, "orchd_store_write_transactions_total"), &txs)
	fmt.Sscan(metricValue(t, metrics, "orchd_store_checkpoints_total"), &cps)
	t.Logf("%v checkpoints in %v write transactions", cps, txs)
	// One per exchange, at its end (the instances are kept: no cleanup);
	// none before the calls of a new instance not answered yet.
	if cps != 320 {
		t.Errorf("checkpoints = %v, want 320 (at the end of each exchange)", cps)
	}
	if txs >= cps {
		t.Errorf("no group commit: %v transactions for %v checkpoints", txs, cps)
	}
	if v := metricValue(t, metrics, `orchd_store_commits_total{process="PurchaseOrder"}`); v != "0" {
		t.Errorf("the in-memory process committed %s times", v)
	}
}

func TestDataFileLocked(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := persistentDeploy(t, crm, erp)
	data := t.TempDir()
	startOrchd(t, "--deploy", deploy, "--data", data)
	// It gives up rather than wait for the lock: a minute bounds a hang.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, orchdBin, "serve", "--listen", "127.0.0.1:0", "--deploy", deploy, "--data", data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	checkRaces(t, "the second orchd", stderr.String(), err)
	if ctx.Err() != nil {
		t.Fatalf("a second orchd on a locked data file did not give up within a minute:\n%s", stderr.String())
	}
	if err == nil {
		t.Fatalf("a second orchd on the same data file started")
	}
	if !strings.Contains(stderr.String(), "locked") {
		t.Errorf("error does not say the file is locked:\n%s", stderr.String())
	}
}

func TestCorruptDataFile(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := persistentDeploy(t, crm, erp)
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "orchd.db"), bytes.Repeat([]byte("not a bbolt file "), 512), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(orchdBin, "serve", "--listen", "127.0.0.1:0", "--deploy", deploy, "--data", data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	checkRaces(t, "orchd on a corrupt file", stderr.String(), err)
	if err == nil {
		t.Fatalf("orchd started on a corrupt data file")
	}
	if strings.Contains(stderr.String(), "panic") || !strings.Contains(stderr.String(), "orchd.db") {
		t.Errorf("unclear error for a corrupt file:\n%s", stderr.String())
	}
}

// TestFullDisk puts the data file on a 1 MiB tmpfs, fills it, and checks
// that a persistent exchange gets a Server fault while the in-memory
// process keeps serving. Mounting the tmpfs needs root (CAP_SYS_ADMIN):
// without it the test skips, saying so, unless ORCHD_REQUIRE_FULLDISK is
// set (.ci/run sets it where it can mount one), when it fails.
func TestFullDisk(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := persistentDeploy(t, crm, erp)
	data := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", data).CombinedOutput(); err != nil {
		if os.Getenv("ORCHD_REQUIRE_FULLDISK") != "" {
			t.Fatalf("mount tmpfs (ORCHD_REQUIRE_FULLDISK is set): %v: %s", err, out)
		}
		t.Skipf("cannot mount a tmpfs (needs root, CAP_SYS_ADMIN; set ORCHD_REQUIRE_FULLDISK to fail instead): %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", data).Run() })
	o := startOrchd(t, "--deploy", deploy, "--data", data)
	client := &http.Client{Timeout: 30 * time.Second}
	checkAck(t, post(t, client, o.base+persistentPOPath, textXML, "", poRequest(t, "PO-FIRST")), map[string]string{"status": "ACCEPTED"})
	filler, err := os.Create(filepath.Join(data, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := filler.Write(chunk); err != nil {
			break
		}
	}
	filler.Close()
	sawFault := false
	for i := 0; i < 200 && !sawFault; i++ {
		r := post(t, client, o.base+persistentPOPath, textXML, "", poRequest(t, fmt.Sprintf("PO-FULL-%d", i)))
		if r.status == 200 {
			continue // bbolt may still have free pages
		}
		code, reason := faultCode(t, r.body)
		if code != "Server" || !strings.Contains(reason, "could not be stored") {
			t.Fatalf("full disk: %d %s %q", r.status, code, reason)
		}
		sawFault = true
	}
	if !sawFault {
		t.Fatalf("no exchange failed on a full disk")
	}
	checkAck(t, post(t, client, o.base+"/processes/PurchaseOrder", textXML, poAction, readWorkload(t, "po-request.xml")), map[string]string{"status": "ACCEPTED"})
	// Room again: persistent exchanges are served again.
	os.Remove(filepath.Join(data, "filler"))
	checkAck(t, post(t, client, o.base+persistentPOPath, textXML, "", poRequest(t, "PO-AGAIN")), map[string]string{"status": "ACCEPTED"})
}

func TestInstancesCommand(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := persistentDeploy(t, crm, erp)
	data := t.TempDir()
	o := startOrchd(t, "--deploy", deploy, "--data", data)
	client := &http.Client{Timeout: 30 * time.Second}
	post(t, client, o.base+approvalPath, textXML, "", approvalBody("requestApproval", "C-1", "<appr:amount>10</appr:amount><appr:requester>ann</appr:requester>"))
	// While orchd holds the file, the command says to use the endpoint.
	out, err := runOrchd(t, "instances", "--data", data, "--deploy", deploy)
	if err == nil || !strings.Contains(string(out), "orchd ctl instances") {
		t.Errorf("instances on a locked store: %v\n%s", err, out)
	}
	if err := o.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-o.done
	o.done <- nil
	out, err = runOrchd(t, "instances", "--data", data, "--deploy", deploy, "--state", "waiting")
	if err != nil {
		t.Fatalf("instances: %v\n%s", err, out)
	}
	for _, want := range []string{"waiting", "OrderApproval", "correlation byRequest = C-1", "$request = <payload>", "1 instance(s)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("instances output lacks %q:\n%s", want, out)
		}
	}
}
