package main

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orchd/orchd/internal/etcdtest"
	"github.com/orchd/orchd/internal/mgmt"
)

// clusterNode starts an orchd node of cluster name on ec, serving the
// bundles of deploy.
func clusterNode(t *testing.T, ec *etcdtest.Cluster, name, id, deploy string) *orchd {
	t.Helper()
	return startOrchd(t, "--deploy", deploy, "--data", t.TempDir(), "--store", "etcd",
		"--etcd-endpoints", strings.Join(ec.Endpoints(), ","), "--etcd-prefix", "/orchd/"+name+"/",
		"--cluster", name, "--node-id", id, "--cluster-ttl", "2s")
}

// untilAnswer posts body to url until check accepts the answer, and
// returns it; it fails the test after d.
func untilAnswer(t *testing.T, client *http.Client, url string, body []byte, d time.Duration, what string, check func(response) bool) response {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		r := post(t, client, url, textXML, "", body)
		if check(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s; last answer %d\n%s", d, what, r.status, r.body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func decideBody(id string) []byte {
	return approvalBody("decide", id, "<appr:approved>true</appr:approved><appr:approver>bob</appr:approver>")
}

func requestBody(id string) []byte {
	return approvalBody("requestApproval", id, "<appr:amount>10</appr:amount><appr:requester>ann</appr:requester>")
}

// TestClusterForwardInMemory runs two orchd nodes serving an in-memory
// approval process: an instance started by its request on one node
// waits in that node's memory; the correlated decision sent to the other
// node is forwarded to it, and its reply comes back. When the owner is
// SIGKILLed, the decision sent to the survivor gets a Server fault naming
// the owner while its lease lasts, then, the routes gone with the lease,
// the single-node answer (no instance waits for it).
func TestClusterForwardInMemory(t *testing.T) {
	ec := etcdtest.Start(t, 1)
	deploy := t.TempDir()
	copyBundleFrom(t, "testdata/approval-inmem", deploy, "approval-inmem", "127.0.0.1:1", "127.0.0.1:1", nil)
	a, b := clusterNode(t, ec, "fwd", "a", deploy), clusterNode(t, ec, "fwd", "b", deploy)
	client := &http.Client{Timeout: 30 * time.Second}

	for i, id := range []string{"M-1", "M-2", "M-3", "M-4"} {
		on, other := []*orchd{a, b}[i%2], []*orchd{b, a}[i%2]
		if st := approvalStatus(t, post(t, client, on.base+approvalPath, textXML, "", requestBody(id))); st != "PENDING" {
			t.Fatalf("%s requested: %s", id, st)
		}
		if st := approvalStatus(t, post(t, client, other.base+approvalPath, textXML, "", decideBody(id))); st != "APPROVED" {
			t.Fatalf("%s decided on the other node: %s", id, st)
		}
	}
	// The instances ran where they started: the forwarded decisions ended
	// them there, so neither node keeps one.
	for _, o := range []*orchd{a, b} {
		if ins := listInstances(t, o, mgmt.Query{Process: "OrderApproval", State: mgmt.StateWaiting}); len(ins) != 0 {
			t.Fatalf("instances left waiting: %+v", ins)
		}
	}
	// What a forward costs (logged, not checked: the machine is shared):
	// the mean time of requests (their reply waits for the route's
	// registration), of decisions taken on the instance's node, and of
	// decisions forwarded to it.
	const n = 20
	var request, local, forwarded time.Duration
	for i := range 2 * n {
		id := "T-" + strconv.Itoa(i)
		start := time.Now()
		if st := approvalStatus(t, post(t, client, a.base+approvalPath, textXML, "", requestBody(id))); st != "PENDING" {
			t.Fatalf("%s requested: %s", id, st)
		}
		request += time.Since(start)
		on, sum := a, &local
		if i%2 == 1 {
			on, sum = b, &forwarded
		}
		start = time.Now()
		if st := approvalStatus(t, post(t, client, on.base+approvalPath, textXML, "", decideBody(id))); st != "APPROVED" {
			t.Fatalf("%s decided: %s", id, st)
		}
		*sum += time.Since(start)
	}
	t.Logf("mean over %d: request (with route registration) %v, decision on the owner %v, decision forwarded %v",
		n, (request / (2 * n)).Round(10*time.Microsecond), (local / n).Round(10*time.Microsecond), (forwarded / n).Round(10*time.Microsecond))

	// A decision for a request never made stays local: no instance.
	r := post(t, client, b.base+approvalPath, textXML, "", decideBody("M-none"))
	if r.status != http.StatusInternalServerError || !strings.Contains(r.body, "no instance of process OrderApproval") {
		t.Fatalf("uncorrelated decision: %d %s", r.status, r.body)
	}

	// The owner dies.
	if st := approvalStatus(t, post(t, client, a.base+approvalPath, textXML, "", requestBody("K-1"))); st != "PENDING" {
		t.Fatalf("K-1 requested: %s", st)
	}
	kill9(t, a)
	killed := time.Now()
	r = post(t, client, b.base+approvalPath, textXML, "", decideBody("K-1"))
	if r.status != http.StatusInternalServerError || !strings.Contains(r.body, "Server") ||
		!(strings.Contains(r.body, "(a at http://") || strings.Contains(r.body, "conversation, a, is gone")) {
		t.Fatalf("decision for the dead node's conversation: %d %s", r.status, r.body)
	}
	t.Logf("within the TTL: %.300s", r.body)
	untilAnswer(t, client, b.base+approvalPath, decideBody("K-1"), 15*time.Second, "the single-node answer after the TTL", func(r response) bool {
		return r.status == http.StatusInternalServerError && strings.Contains(r.body, "no instance of process OrderApproval")
	})
	t.Logf("routes of the dead node gone after %v (TTL 2s)", time.Since(killed).Round(100*time.Millisecond))
}

// TestClusterRollingUpgrade runs nodes a and c with version 1 of the
// persistent approval process and node b with version 2 only (the same
// process with a changed status text): a decision for an instance of
// version 1 sent to b runs on a node with version 1, and one for an
// instance of version 2 sent to a runs on b (told apart by the status
// each version answers). When a is SIGKILLed, the timers of its version-1
// instances fire on c, never on b. When c is SIGKILLed too, b answers a
// decision for a version-1 instance with a Server fault naming the
// version, and marks nothing broken.
func TestClusterRollingUpgrade(t *testing.T) {
	ec := etcdtest.Start(t, 1)
	depV1, depV2 := t.TempDir(), t.TempDir()
	copyBundleFrom(t, "../../deploy/order-approval", depV1, "order-approval", "127.0.0.1:1", "127.0.0.1:1", nil)
	copyBundleFrom(t, "../../deploy/order-approval", depV2, "order-approval", "127.0.0.1:1", "127.0.0.1:1", map[string][][2]string{
		"OrderApproval.bpel": {{"<from>'APPROVED'</from>", "<from>'APPROVED-v2'</from>"}},
	})
	a, b, c := clusterNode(t, ec, "upg", "a", depV1), clusterNode(t, ec, "upg", "b", depV2), clusterNode(t, ec, "upg", "c", depV1)
	client := &http.Client{Timeout: 30 * time.Second}

	// Every node has published its versions.
	cli, err := clientv3.New(clientv3.Config{Endpoints: ec.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	waitUntil(t, "the nodes publish their versions", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		resp, err := cli.Get(ctx, "/orchd/upg/nodes/", clientv3.WithPrefix())
		if err != nil || len(resp.Kvs) != 3 {
			return false
		}
		for _, kv := range resp.Kvs {
			if !strings.Contains(string(kv.Value), `"versions":["{urn:example:approval:process}OrderApproval#`) {
				return false
			}
		}
		return true
	})

	for _, tc := range []struct {
		id       string
		start    *orchd
		decideOn *orchd
		want     string
	}{
		{"U-1", a, b, "APPROVED"},    // version 1, decided through b
		{"U-2", b, a, "APPROVED-v2"}, // version 2, decided through a
		{"U-3", c, b, "APPROVED"},
		{"U-4", b, c, "APPROVED-v2"},
		{"U-5", a, c, "APPROVED"}, // same version: wherever it lands
	} {
		if st := approvalStatus(t, post(t, client, tc.start.base+approvalPath, textXML, "", requestBody(tc.id))); st != "PENDING" {
			t.Fatalf("%s requested: %s", tc.id, st)
		}
		if st := approvalStatus(t, post(t, client, tc.decideOn.base+approvalPath, textXML, "", decideBody(tc.id))); st != tc.want {
			t.Fatalf("%s decided: %s, want %s", tc.id, st, tc.want)
		}
	}

	// a dies with version-1 instances whose timers are due soon: c, the
	// other node with version 1, fires them all (b, by hash alone, would
	// take about half and could not run them).
	const timers = 4
	for i := range timers {
		id := "T-" + strconv.Itoa(i)
		r := post(t, client, a.base+approvalPath, textXML, "", approvalBody("requestApproval", id, "<appr:amount>10</appr:amount><appr:requester>ann</appr:requester><appr:timeout>PT3S</appr:timeout>"))
		if st := approvalStatus(t, r); st != "PENDING" {
			t.Fatalf("%s requested: %s", id, st)
		}
	}
	kill9(t, a)
	deadline := time.Now().Add(30 * time.Second)
	for {
		expired := 0
		for _, in := range listInstances(t, c, mgmt.Query{Process: "OrderApproval"}) {
			if strings.Contains(in.Variables["status"], "EXPIRED") && in.State == "completed" {
				expired++
			}
		}
		if expired == timers {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dead node's version-1 timers did not all fire (%d of %d)\nb:\n%s\nc:\n%s", expired, timers, b.log(), c.log())
		}
		time.Sleep(100 * time.Millisecond)
	}

	// c, the last node with version 1, dies too.
	if st := approvalStatus(t, post(t, client, c.base+approvalPath, textXML, "", requestBody("U-6"))); st != "PENDING" {
		t.Fatalf("U-6 requested: %s", st)
	}
	kill9(t, c)
	r := untilAnswer(t, client, b.base+approvalPath, decideBody("U-6"), 20*time.Second, "a fault naming version 1", func(r response) bool {
		return r.status == http.StatusInternalServerError && strings.Contains(r.body, "OrderApproval#") &&
			strings.Contains(r.body, "not deployed here")
	})
	t.Logf("with no node left with version 1: %.400s", r.body)
	// The instance is not marked broken by b, and b took no timer of a
	// version it lacks: U-6 waits for a node with its version.
	if l := b.log(); strings.Contains(l, "instance is broken") || strings.Contains(l, "timer: cannot load instance") {
		t.Fatalf("b marked an instance broken or took a timer it cannot run:\n%s", l)
	}
}
