package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/etcdtest"
	"github.com/orchd/orchd/internal/mgmt"
)

// TestEtcdStoreEndToEnd runs orchd with --store etcd on an embedded
// 1-member etcd: the persistent PO is served, a waiting approval survives
// SIGKILL and restart of orchd, a request while etcd is down gets a clear
// Server fault, and service resumes when etcd returns.
func TestEtcdStoreEndToEnd(t *testing.T) {
	c := etcdtest.Start(t, 1)
	crm, erp := startMocks(t)
	deploy := persistentDeploy(t, crm, erp)
	data := t.TempDir()
	args := []string{"--deploy", deploy, "--data", data, "--store", "etcd",
		"--etcd-endpoints", strings.Join(c.Endpoints(), ","), "--etcd-prefix", "/orchd/e2e", "--etcd-request-timeout", "1s"}
	client := &http.Client{Timeout: 30 * time.Second}
	o := startOrchd(t, args...)
	checkAck(t, post(t, client, o.base+persistentPOPath, textXML, "", poRequest(t, "PO-ETCD-1")), map[string]string{"poId": "PO-ETCD-1", "status": "ACCEPTED"})
	r := post(t, client, o.base+approvalPath, textXML, "", approvalBody("requestApproval", "E-1", "<appr:amount>10</appr:amount><appr:requester>ann</appr:requester>"))
	if st := approvalStatus(t, r); st != "PENDING" {
		t.Fatalf("E-1: %s", st)
	}

	kill9(t, o)
	o2 := startOrchd(t, args...)
	if !strings.Contains(o2.log(), "waiting=1") {
		t.Errorf("recovery from etcd did not find the waiting instance:\n%s", o2.log())
	}
	r = post(t, client, o2.base+approvalPath, textXML, "", approvalBody("decide", "E-1", "<appr:approved>true</appr:approved><appr:approver>bob</appr:approver>"))
	if st := approvalStatus(t, r); st != "APPROVED" {
		t.Fatalf("E-1 decided after restart: %s", st)
	}
	if ins := listInstances(t, o2, mgmt.Query{Process: "PurchaseOrderPersistent"}); len(ins) != 1 || ins[0].State != "completed" {
		t.Errorf("persistent PO instances in etcd: %+v", ins)
	}

	// No quorum: the exchange is refused with a Server fault, and nothing
	// is acknowledged.
	c.Stop(0)
	r = post(t, client, o2.base+approvalPath, textXML, "", approvalBody("requestApproval", "E-2", "<appr:amount>10</appr:amount><appr:requester>ann</appr:requester>"))
	code, reason := faultCode(t, r.body)
	if code != "Server" || !strings.Contains(reason, "instance store unavailable") {
		t.Fatalf("request with etcd down: %d %s %q\n%s", r.status, code, reason, r.body)
	}

	c.Restart(0)
	for deadline := time.Now().Add(30 * time.Second); ; {
		r = post(t, client, o2.base+approvalPath, textXML, "", approvalBody("requestApproval", "E-3", "<appr:amount>10</appr:amount><appr:requester>ann</appr:requester>"))
		if r.status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("service did not resume after etcd returned: %d\n%s", r.status, r.body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st := approvalStatus(t, r); st != "PENDING" {
		t.Fatalf("E-3: %s", st)
	}
	r = post(t, client, o2.base+approvalPath, textXML, "", approvalBody("decide", "E-3", "<appr:approved>false</appr:approved><appr:approver>bob</appr:approver>"))
	if st := approvalStatus(t, r); st != "REJECTED" {
		t.Fatalf("E-3 decided: %s", st)
	}
	// The refused request left nothing in the store.
	for _, in := range listInstances(t, o2, mgmt.Query{Process: "OrderApproval"}) {
		for _, v := range in.Correlations {
			if strings.Contains(v, "E-2") {
				t.Errorf("instance %s of the refused request E-2 is stored (%s)", in.ID, in.State)
			}
		}
	}
}
