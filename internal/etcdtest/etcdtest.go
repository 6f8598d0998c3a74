package etcdtest

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// StartTimeout bounds how long a member may take to become ready.
const StartTimeout = 30 * time.Second

// Cluster is a running embedded etcd cluster.
type Cluster struct {
	t       testing.TB
	mu      sync.Mutex
	members []*member
	initial string
}

type member struct {
	name      string
	dir       string
	peerURL   url.URL // advertised: the peer relay's address
	clientURL url.URL // advertised: the client relay's address
	peer      *relay
	client    *relay
	etcd      *embed.Etcd
	everReady bool
}

// Start starts an embedded cluster of n members (1 or 3) and registers
// its shutdown with t.Cleanup. It fails the test when a member does not
// start within StartTimeout.
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("etcdtest: %d members", n)
	}
	c := &Cluster{t: t}
	// The directory first: cleanups run last-registered first, so the
	// members stop (and their WAL purgers with them) before their data
	// is removed. The other order removed a running member's WAL, and
	// its purger's log.Fatal ended the whole test binary.
	base := t.TempDir()
	t.Cleanup(c.Close)
	var initial []string
	for i := range n {
		m := &member{
			name: fmt.Sprintf("m%d", i),
			dir:  filepath.Join(base, fmt.Sprintf("etcd-m%d", i)),
		}
		c.members = append(c.members, m)
		var err error
		if m.peer, err = newRelay(); err == nil {
			m.client, err = newRelay()
		}
		if err != nil {
			t.Fatalf("etcdtest: listen: %v", err)
		}
		m.peerURL = url.URL{Scheme: "http", Host: m.peer.addr()}
		m.clientURL = url.URL{Scheme: "http", Host: m.client.addr()}
		initial = append(initial, m.name+"="+m.peerURL.String())
	}
	c.initial = strings.Join(initial, ",")

	// All members must start together: each waits for the others' votes.
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, m := range c.members {
		wg.Go(func() { errs[i] = c.start(m) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("etcdtest: %v", err)
		}
	}
	return c
}

// MemberConfig is the embed configuration of one loopback member: name,
// data directory, peer and client URLs (listened on and advertised),
// and the initial cluster ("name=peerURL,..."). WAL fsync stays on; the
// log level is "fatal" (a member's errors on Close are noise; start
// failures are returned by embed.StartEtcd). It is shared by Start and
// by the etcdmember command, which runs a member as its own process.
func MemberConfig(name, dir string, peer, client url.URL, initialCluster string) *embed.Config {
	cfg := embed.NewConfig()
	cfg.Name = name
	cfg.Dir = dir
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.InitialCluster = initialCluster
	cfg.InitialClusterToken = "etcdtest"
	cfg.LogLevel = "fatal"
	cfg.LogOutputs = []string{"stderr"}
	return cfg
}

func (c *Cluster) start(m *member) error {
	cfg := MemberConfig(m.name, m.dir, m.peerURL, m.clientURL, c.initial)
	// The member listens on ports the system picks, behind the relays
	// whose addresses it advertises (see relay).
	anyPort := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenPeerUrls, cfg.ListenClientUrls = []url.URL{anyPort}, []url.URL{anyPort}
	if m.everReady {
		cfg.ClusterState = embed.ClusterStateFlagExisting
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("start member %s: %w", m.name, err)
	}
	if len(e.Peers) != 1 || len(e.Clients) != 1 {
		e.Close()
		return fmt.Errorf("member %s: %d peer and %d client listeners, want 1 each", m.name, len(e.Peers), len(e.Clients))
	}
	// Before it waits for the others' votes: they reach it through its
	// relay.
	m.peer.setTarget(e.Peers[0].Listener.Addr().String())
	m.client.setTarget(e.Clients[0].Addr().String())
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		m.peer.setTarget("")
		m.client.setTarget("")
		e.Close()
		return fmt.Errorf("member %s failed: %w", m.name, err)
	case <-time.After(StartTimeout):
		m.peer.setTarget("")
		m.client.setTarget("")
		e.Server.Stop()
		e.Close()
		return fmt.Errorf("member %s not ready within %v", m.name, StartTimeout)
	}
	c.mu.Lock()
	m.etcd = e
	m.everReady = true
	c.mu.Unlock()
	return nil
}

// Endpoints returns the client endpoints (host:port) of all members,
// running or stopped.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.clientURL.Host)
	}
	return eps
}

// Size returns the number of members.
func (c *Cluster) Size() int { return len(c.members) }

// Stop stops member i (0-based); its data stays for Restart.
func (c *Cluster) Stop(i int) {
	c.mu.Lock()
	m := c.members[i]
	e := m.etcd
	m.etcd = nil
	c.mu.Unlock()
	if e != nil {
		m.peer.setTarget("")
		m.client.setTarget("")
		e.Close()
	}
}

// Restart starts the stopped member i again on the same advertised
// addresses (its relays') and data.
// With a 3-member cluster it returns once the member serves, which needs
// a quorum. It fails the test when the member does not start in time.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	c.mu.Lock()
	m := c.members[i]
	running := m.etcd != nil
	c.mu.Unlock()
	if running {
		return
	}
	if err := c.start(m); err != nil {
		c.t.Fatalf("etcdtest: restart: %v", err)
	}
}

// Close stops all members and their relays. It is registered with
// t.Cleanup by Start.
func (c *Cluster) Close() {
	for i, m := range c.members {
		c.Stop(i)
		for _, r := range []*relay{m.peer, m.client} {
			if r != nil {
				r.close()
			}
		}
	}
}
