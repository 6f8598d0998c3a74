package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orchd/orchd/internal/etcdtest"
	"github.com/orchd/orchd/internal/mgmt"
)

// TestClusterTwoNodes runs two orchd processes with --cluster on one
// embedded 3-member etcd: a correlated conversation whose messages land on
// different nodes completes, and the same decision sent to both nodes at
// once is taken by exactly one of them (the instance lock), leaving no
// lock behind; a timer set on a node that is then SIGKILLed fires on the
// other.
func TestClusterTwoNodes(t *testing.T) {
	ec := etcdtest.Start(t, 3)
	crm, erp := startMocks(t)
	deploy := persistentDeploy(t, crm, erp)
	a, b := startClusterNode(t, ec, deploy, "e2ec", "a"), startClusterNode(t, ec, deploy, "e2ec", "b")
	nodes := []*orchd{a, b}
	client := &http.Client{Timeout: 30 * time.Second}

	// One conversation, two nodes.
	for i, id := range []string{"C-1", "C-2", "C-3", "C-4"} {
		on, other := nodes[i%2], nodes[(i+1)%2]
		r := post(t, client, on.base+approvalPath, textXML, "", approvalBody("requestApproval", id, "<appr:amount>10</appr:amount><appr:requester>ann</appr:requester>"))
		if st := approvalStatus(t, r); st != "PENDING" {
			t.Fatalf("%s requested: %s", id, st)
		}
		r = post(t, client, other.base+approvalPath, textXML, "", approvalBody("decide", id, "<appr:approved>true</appr:approved><appr:approver>bob</appr:approver>"))
		if st := approvalStatus(t, r); st != "APPROVED" {
			t.Fatalf("%s decided on the other node: %s", id, st)
		}
	}

	// The same decision on both nodes at once: one takes it.
	for _, id := range []string{"R-1", "R-2", "R-3"} {
		r := post(t, client, a.base+approvalPath, textXML, "", approvalBody("requestApproval", id, "<appr:amount>10</appr:amount><appr:requester>ann</appr:requester>"))
		if st := approvalStatus(t, r); st != "PENDING" {
			t.Fatalf("%s requested: %s", id, st)
		}
		var wg sync.WaitGroup
		bodies := make([]string, 2)
		for i, n := range nodes {
			wg.Go(func() {
				resp, err := client.Post(n.base+approvalPath, textXML, bytes.NewReader(approvalBody("decide", id, "<appr:approved>true</appr:approved><appr:approver>bob</appr:approver>")))
				if err != nil {
					bodies[i] = err.Error()
					return
				}
				defer resp.Body.Close()
				rb, _ := io.ReadAll(resp.Body)
				bodies[i] = string(rb)
			})
		}
		wg.Wait()
		approved := 0
		for i, body := range bodies {
			if strings.Contains(body, "<appr:status>APPROVED</appr:status>") {
				approved++
			} else if id == "R-1" {
				t.Logf("%s on the node that lost: %.300s", id, bodies[i])
			}
		}
		if approved != 1 {
			t.Fatalf("%s decided on both nodes at once: %d approvals\n%s\n%s", id, approved, bodies[0], bodies[1])
		}
	}

	cli, err := clientv3.New(clientv3.Config{Endpoints: ec.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "/orchd/e2ec/nodes/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || resp.Count != 2 {
		t.Fatalf("live nodes: %v, %v", resp, err)
	}
	resp, err = cli.Get(ctx, "/orchd/e2ec/locks/", clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("locks left after the runs: %v, %v", resp.Kvs, err)
	}

	// A timer set on a, which dies: b adopts and fires it.
	r := post(t, client, a.base+approvalPath, textXML, "", approvalBody("requestApproval", "T-1", "<appr:amount>10</appr:amount><appr:requester>ann</appr:requester><appr:timeout>PT3S</appr:timeout>"))
	if st := approvalStatus(t, r); st != "PENDING" {
		t.Fatalf("T-1 requested: %s", st)
	}
	kill9(t, a)
	deadline := time.Now().Add(20 * time.Second)
	for {
		expired := 0
		for _, in := range listInstances(t, b, mgmt.Query{Process: "OrderApproval"}) {
			if strings.Contains(in.Variables["status"], "EXPIRED") && in.State == "completed" {
				expired++
			}
		}
		if expired == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dead node's timer did not fire on the other (%d expired)\n%s", expired, b.log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(b.log(), "adopted timers") {
		t.Errorf("b fired T-1 without adopting it:\n%s", b.log())
	}
	// b leads the outbox now (it led before, or took over from a).
	waitLog(t, b, "this node leads the outbox")
}
