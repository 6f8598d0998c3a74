package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orchd/orchd/internal/etcdtest"
	"github.com/orchd/orchd/internal/mgmt"
)

// heldPartner is a partner in front of another that holds every call
// whose body contains mark until release is closed; arrived is closed
// when the first such call comes in.
type heldPartner struct {
	addr    string
	arrived chan struct{}
	release chan struct{}
}

func startHeldPartner(t *testing.T, target, mark string) *heldPartner {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &heldPartner{addr: ln.Addr().String(), arrived: make(chan struct{}), release: make(chan struct{})}
	var once sync.Once
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if bytes.Contains(body, []byte(mark)) {
			once.Do(func() { close(h.arrived) })
			select {
			case <-h.release:
			case <-r.Context().Done():
				return
			}
		}
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, "http://"+target+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
		srv.Close()
	})
	return h
}

func sendSignal(t *testing.T, o *orchd, sig syscall.Signal) {
	t.Helper()
	if err := o.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// TestClusterFenceAndRejoin runs two orchd nodes with --cluster and a 2 s
// TTL on an embedded etcd. Node a runs a persistent PO whose CRM call the
// test holds (a BLOCKING invoke: a holds the instance's lock); a is
// SIGSTOPped past its TTL; b terminates the instance (the operator action
// waits for a's lock to expire, then commits). a is continued and the CRM
// answer released: a's next checkpoint fails its fence, a's client gets a
// Server fault saying a lost the instance, and the store keeps b's
// terminated instance. Then, without a restart, a rejoins: it is in b's
// membership again and serves persistent exchanges.
func TestClusterFenceAndRejoin(t *testing.T) {
	ec := etcdtest.Start(t, 1)
	crm, erp := startMocks(t)
	held := startHeldPartner(t, crm, "PO-FENCE")
	deploy := persistentDeploy(t, held.addr, erp)
	tok := tokenFile(t, adminToken)
	t.Setenv("ORCHD_TOKEN_FILE", tok) // with a token configured, reads need it too
	node := func(id string) *orchd {
		return startOrchd(t, "--deploy", deploy, "--data", t.TempDir(), "--store", "etcd",
			"--etcd-endpoints", strings.Join(ec.Endpoints(), ","), "--etcd-prefix", "/orchd/fence/",
			"--cluster", "fence", "--node-id", id, "--cluster-ttl", "2s", "--admin-token-file", tok)
	}
	a, b := node("a"), node("b")
	client := &http.Client{Timeout: 60 * time.Second}

	// a runs PO-FENCE into the held CRM call.
	answer := make(chan response, 1)
	fenced := poRequest(t, "PO-FENCE")
	go func() {
		req, _ := http.NewRequest(http.MethodPost, a.base+persistentPOPath, bytes.NewReader(fenced))
		req.Header.Set("Content-Type", textXML)
		resp, err := client.Do(req)
		if err != nil {
			answer <- response{body: err.Error()}
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		answer <- response{status: resp.StatusCode, body: string(body)}
	}()
	select {
	case <-held.arrived:
	case r := <-answer:
		t.Fatalf("PO-FENCE answered before its CRM call: %d %s\n%s", r.status, r.body, a.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("PO-FENCE's CRM call did not come\n%s", a.log())
	}
	var id string
	for _, in := range listInstances(t, b, mgmt.Query{Process: "PurchaseOrderPersistent"}) {
		if strings.Contains(in.Variables["poIn"], "PO-FENCE") {
			id = in.ID
			if in.State != "running" {
				t.Fatalf("PO-FENCE stored as %s before the CRM call, want running", in.State)
			}
		}
	}
	if id == "" {
		t.Fatal("PO-FENCE's checkpoint before the CRM call is not in the store")
	}

	// a pauses past its TTL; b takes the instance once a's lock expires.
	sendSignal(t, a, syscall.SIGSTOP)
	stopped := time.Now()
	if out := mustCtl(t, b.base, "--token-file", tok, "terminate", id); strings.TrimSpace(out) != id+": terminated" {
		t.Fatalf("terminate on b: %q", out)
	}
	t.Logf("b terminated %s %v after a stopped", id, time.Since(stopped).Round(time.Millisecond))
	// a's node key went with its lease; an impostor takes it, so that a,
	// continued, cannot rejoin until the test lets it.
	cli, err := clientv3.New(clientv3.Config{Endpoints: ec.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lease, err := cli.Grant(ctx, 30)
	if err != nil {
		t.Fatal(err)
	}
	const aKey = "/orchd/fence/nodes/a"
	if resp, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(aKey), "=", 0)).
		Then(clientv3.OpPut(aKey, "http://impostor", clientv3.WithLease(lease.ID))).Commit(); err != nil || !resp.Succeeded {
		t.Fatalf("a's node key outlived the lock of its lease: %v, %v", resp, err)
	}
	// a's lease ends one TTL after its last renewal, sent every third of
	// the TTL: b waited at least two thirds of it.
	if time.Since(stopped) < time.Second {
		t.Fatalf("b ran the instance %v after a stopped, well within a's TTL: the lock did not hold", time.Since(stopped))
	}
	sendSignal(t, a, syscall.SIGCONT)
	close(held.release)

	var r response
	select {
	case r = <-answer:
	case <-time.After(30 * time.Second):
		t.Fatalf("a did not answer PO-FENCE after it was continued\n%s", a.log())
	}
	if r.status != http.StatusInternalServerError || !strings.Contains(r.body, "Server") || !strings.Contains(r.body, "lost the instance") {
		t.Fatalf("a's client got %d, want a Server fault saying a lost the instance:\n%s\n%s", r.status, r.body, a.log())
	}
	t.Logf("a's client: %.400s", r.body)
	if d := ctlInstance(t, b.base, id); d.State != "terminated" {
		t.Fatalf("stored instance %s is %s after a's fenced commit, want b's terminated: %+v", id, d.State, d)
	}
	for _, in := range listInstances(t, b, mgmt.Query{Process: "PurchaseOrderPersistent"}) {
		if in.ID == id && in.Variables["ackOut"] != "" {
			t.Fatalf("a's state reached the store: %+v", in)
		}
	}

	// Until a has rejoined, its runs fail at once with a Server fault.
	waitLog(t, a, "cluster session lost; rejoining")
	start := time.Now()
	r = postNoFatal(client, a.base+persistentPOPath, poRequest(t, "PO-LOST"))
	if r.status != http.StatusInternalServerError || !strings.Contains(r.body, "Server") || !strings.Contains(r.body, "session lost") || !strings.Contains(r.body, "rejoining") {
		t.Fatalf("a without a session answered %d, want a Server fault saying it rejoins:\n%s", r.status, r.body)
	}
	t.Logf("a without a session answered in %v: %.300s", time.Since(start).Round(time.Millisecond), r.body)

	// a rejoins by itself once the key is free: b sees it again, and it
	// serves persistent exchanges.
	if _, err := cli.Revoke(ctx, lease.ID); err != nil {
		t.Fatal(err)
	}
	waitLog(t, a, "cluster rejoined")
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(b.log(), "member=a event=PUT") || strings.LastIndex(b.log(), "member=a event=PUT") < strings.LastIndex(b.log(), "member=a event=DELETE") {
		if time.Now().After(deadline) {
			t.Fatalf("b did not see a join again:\n%s", b.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The membership value is JSON (cluster.Member): its URL is a's.
	if resp, err := cli.Get(ctx, aKey); err != nil || len(resp.Kvs) != 1 || !strings.Contains(string(resp.Kvs[0].Value), `"url":"`+a.base+`"`) {
		t.Fatalf("a's node key after it rejoined: %v, %v (want %s)", resp, err, a.base)
	}
	for i := 0; ; i++ {
		r := postNoFatal(client, a.base+persistentPOPath, poRequest(t, "PO-AFTER"))
		if r.status == 200 && strings.Contains(r.body, "ACCEPTED") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a does not serve persistent exchanges after rejoining: %d %s\n%s", r.status, r.body, a.log())
		}
		t.Logf("a before rejoining (%d): %.300s", i, r.body)
		time.Sleep(100 * time.Millisecond)
	}
	// And a conversation across both nodes works again.
	requestApproval(t, a.base, "RJ-1")
	if st := approvalStatus(t, decide(t, b.base, "RJ-1")); st != "APPROVED" {
		t.Fatalf("RJ-1 decided on b: %s", st)
	}
}
