package cluster_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beevik/etree"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/etcdtest"
	"github.com/orchd/orchd/internal/wssec"
)

var _ wssec.ReplayStore = (*cluster.Nonces)(nil)

// signedHeader is a wsse:Security header block of a PasswordDigest
// token of bob, as the front door hands it to an Authenticator.
func signedHeader(t *testing.T) []*etree.Element {
	t.Helper()
	h, err := (&wssec.Signer{User: "bob", Password: "bob-pw", Digest: true}).SecurityHeader("http://schemas.xmlsoap.org/soap/envelope/")
	if err != nil {
		t.Fatal(err)
	}
	return []*etree.Element{h}
}

// twoNodes returns the Authenticators of two nodes of one endpoint,
// each with store(i) as its replay store.
func twoNodes(t *testing.T, store func(i int) wssec.ReplayStore) [2]*wssec.Authenticator {
	t.Helper()
	creds, err := wssec.ParseCredentials([]byte("bob:{PLAIN}bob-pw\n"))
	if err != nil {
		t.Fatal(err)
	}
	var as [2]*wssec.Authenticator
	for i := range as {
		as[i] = wssec.NewAuthenticator(wssec.Policy{Credentials: creds, Digest: true, Replay: store(i)})
	}
	return as
}

// TestNoncesShared: two nodes' Authenticators, each on its own etcd
// client and Nonces, on one embedded etcd: a token the first accepted is
// refused by the second as a replay, and by the first again; a new
// token is accepted. With the default store (each node's memory) the
// second node accepts the replay: what the shared store is for. The
// nonce's key sits under the cluster's prefix, with a lease.
func TestNoncesShared(t *testing.T) {
	ec := etcdtest.Start(t, 1)
	clis := [2]*clientv3.Client{newClient(t, ec.Endpoints()), newClient(t, ec.Endpoints())}
	nodes := twoNodes(t, func(i int) wssec.ReplayStore { return cluster.NewNonces(clis[i], "n1", 0) })

	tok := signedHeader(t)
	if _, _, err := nodes[0].Authenticate(tok, false); err != nil {
		t.Fatalf("node 0 refused a fresh token: %v", err)
	}
	for i, a := range nodes {
		_, _, err := a.Authenticate(tok, false)
		if !errors.Is(err, wssec.ErrFailedAuthentication) || !strings.Contains(err.Error(), "replayed") {
			t.Errorf("node %d: replayed token: %v, want refused as a replay", i, err)
		}
	}
	if _, _, err := nodes[1].Authenticate(signedHeader(t), false); err != nil {
		t.Errorf("node 1 refused a new token: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := clis[0].Get(ctx, cluster.Prefix("n1")+"nonces/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 2 {
		t.Fatalf("%d nonce keys under %snonces/, want 2", len(resp.Kvs), cluster.Prefix("n1"))
	}
	for _, kv := range resp.Kvs {
		if kv.Lease == 0 {
			t.Errorf("nonce key %s has no lease: it would stay forever", kv.Key)
		}
		ttl, err := clis[0].TimeToLive(ctx, clientv3.LeaseID(kv.Lease))
		if err != nil {
			t.Fatal(err)
		}
		// Two windows of 5 minutes, rounded up to the lease step.
		if ttl.TTL < 590 || ttl.TTL > 620 {
			t.Errorf("nonce lease TTL %ds, want about 600s", ttl.TTL)
		}
	}

	mem := twoNodes(t, func(int) wssec.ReplayStore { return nil })
	tok = signedHeader(t)
	for i, a := range mem {
		if _, _, err := a.Authenticate(tok, false); err != nil {
			t.Fatalf("in memory, node %d: %v (each node's memory knows only its own tokens)", i, err)
		}
	}
}

// TestNoncesConcurrent: the same token sent to two nodes at once is
// accepted once.
func TestNoncesConcurrent(t *testing.T) {
	ec := etcdtest.Start(t, 1)
	clis := [2]*clientv3.Client{newClient(t, ec.Endpoints()), newClient(t, ec.Endpoints())}
	nodes := twoNodes(t, func(i int) wssec.ReplayStore { return cluster.NewNonces(clis[i], "n2", 0) })
	for round := range 20 {
		tok := signedHeader(t)
		var wg sync.WaitGroup
		var errs [2]error
		for i, a := range nodes {
			wg.Go(func() { _, _, errs[i] = a.Authenticate(tok, false) })
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("round %d: the same token to two nodes at once: %v, %v; want one accepted", round, errs[0], errs[1])
		}
	}
}

// TestNoncesUnavailable: with etcd gone the token is refused (a nonce
// that cannot be checked is not taken), within the store's timeout.
func TestNoncesUnavailable(t *testing.T) {
	ec := etcdtest.Start(t, 1)
	cli := newClient(t, ec.Endpoints())
	nodes := twoNodes(t, func(int) wssec.ReplayStore { return cluster.NewNonces(cli, "n3", 500*time.Millisecond) })
	ec.Stop(0)
	start := time.Now()
	_, _, err := nodes[0].Authenticate(signedHeader(t), false)
	if err == nil || !strings.Contains(err.Error(), "replay store") {
		t.Fatalf("etcd down: %v, want refused naming the replay store", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("refused after %s, want within the 500ms timeout", d)
	}
}
