package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orchd/orchd/internal/etcdtest"
	"github.com/orchd/orchd/internal/mgmt"
)

// allInstances walks every page of GET /api/v1/instances?query with
// pages of limit, and returns the instances and the partial notes met.
func allInstances(t *testing.T, base, query string, limit int) ([]mgmt.Instance, []string) {
	t.Helper()
	var all []mgmt.Instance
	var partial []string
	after := ""
	for range 100 {
		v, err := url.ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		v.Set("limit", strconv.Itoa(limit))
		if after != "" {
			v.Set("after", after)
		}
		var p mgmt.Page
		apiGet(t, base, "instances?"+v.Encode(), &p)
		all = append(all, p.Instances...)
		partial = append(partial, p.Partial...)
		if p.Next == "" {
			return all, partial
		}
		after = p.Next
	}
	t.Fatalf("instances %s: more than 100 pages", query)
	return nil, nil
}

// TestClusterView runs two orchd nodes with --cluster on an embedded
// etcd: either node's management API lists the persistent instances of
// both once and the other node's in-memory instance (named with its
// node), pages across the nodes, terminates the other node's in-memory
// instance by forwarding, sums the process versions over the nodes, and
// lists the nodes; a SIGKILLed node is named in the listing's partial at
// once (a hung one after the fan-out timeout) and leaves the cluster
// view after the TTL; orchd instances --store etcd reads the shared
// store.
func TestClusterView(t *testing.T) {
	ec := etcdtest.Start(t, 1)
	crm, erp := startMocks(t)
	deploy := persistentDeploy(t, crm, erp)
	writeProcess(t, deploy, "MemWait", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes">
      <correlations><correlation set="cs" initiate="yes"/></correlations>
    </receive>
    `+initOut+`
    <reply partnerLink="client" operation="run" variable="out"/>
    <receive partnerLink="client" operation="go" variable="more">
      <correlations><correlation set="cs"/></correlations>
    </receive>
  </sequence>`, true)
	endpoints := strings.Join(ec.Endpoints(), ",")
	tok := tokenFile(t, adminToken)
	t.Setenv("ORCHD_TOKEN_FILE", tok) // with a token configured, reads need it too
	// a's lease (10 s) outlasts by far b's listing while a hangs (the
	// fan-out timeout, 1 s): a is still a member then, however slow etcd.
	node := func(id, ttl string) *orchd {
		return startOrchd(t, "--deploy", deploy, "--data", t.TempDir(), "--store", "etcd",
			"--etcd-endpoints", endpoints, "--etcd-prefix", "/orchd/view/", "--admin-token-file", tok,
			"--cluster", "view", "--node-id", id, "--cluster-ttl", ttl, "--cluster-fanout-timeout", "1s")
	}
	a, b := node("a", "10s"), node("b", "4s")
	requestApproval(t, a.base, "P-A")
	requestApproval(t, b.base, "P-B")
	for _, id := range []string{"M-1", "M-2"} {
		if r := callRun(t, a.base, "MemWait", id, "1"); r.status != 200 {
			t.Fatalf("MemWait %s on a: %d %s", id, r.status, r.body)
		}
	}
	if r := callRun(t, b.base, "MemWait", "M-3", "1"); r.status != 200 {
		t.Fatalf("MemWait M-3 on b: %d %s", r.status, r.body)
	}

	// Either node: the two persistent instances once each, waiting, run
	// by no node now; the three in-memory ones named with their node.
	for _, n := range []*orchd{a, b} {
		ps, partial := allInstances(t, n.base, "process=OrderApproval", 50)
		if len(partial) != 0 || len(ps) != 2 || ps[0].ID == ps[1].ID {
			t.Fatalf("persistent instances listed by %s: %+v partial %v", n.base, ps, partial)
		}
		for _, in := range ps {
			if in.InMemory || in.State != mgmt.StateWaiting || in.Node != "" {
				t.Errorf("persistent instance %+v: want waiting, on no node", in)
			}
		}
		// Pages of one walk the nodes and the store without a gap or a
		// repeat.
		ms, partial := allInstances(t, n.base, "", 1)
		var ids, mem []string
		for _, in := range ms {
			ids = append(ids, in.ID)
			if in.InMemory {
				mem = append(mem, in.Node+" "+in.ID)
				if !strings.HasSuffix(in.ID, "@"+in.Node) {
					t.Errorf("in-memory instance %s on node %q: its ID does not name the node", in.ID, in.Node)
				}
			}
		}
		slices.Sort(ids)
		if len(partial) != 0 || len(ids) != 5 || len(slices.Compact(ids)) != 5 {
			t.Fatalf("every instance by pages of one on %s: %v (partial %v)", n.base, ids, partial)
		}
		if len(mem) != 3 || !strings.HasPrefix(mem[0], "a ") || !strings.HasPrefix(mem[1], "a ") || !strings.HasPrefix(mem[2], "b ") {
			t.Errorf("in-memory instances on %s: %v, want a's two then b's one", n.base, mem)
		}
	}

	// b terminates a's in-memory instance M-1 (forwarded to a).
	var onB mgmt.Page
	apiGet(t, b.base, "instances?process=MemWait&correlation=M-1", &onB)
	if len(onB.Instances) != 1 || onB.Instances[0].Node != "a" {
		t.Fatalf("M-1 listed by b: %+v", onB)
	}
	m1 := onB.Instances[0].ID
	var d mgmt.InstanceDetail
	apiGet(t, b.base, "instances/"+url.PathEscape(m1), &d)
	if d.ID != m1 || d.Node != "a" || len(d.Variables) == 0 {
		t.Errorf("M-1's detail through b: %+v", d)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	req, _ := http.NewRequest(http.MethodPost, b.base+"/api/v1/instances/"+url.PathEscape(m1)+"/terminate", nil)
	if resp, err := client.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("terminate without a token through b: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	req, _ = http.NewRequest(http.MethodPost, b.base+"/api/v1/instances/"+url.PathEscape(m1)+"/terminate", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var ar struct{ ID, State string }
	err = json.NewDecoder(resp.Body).Decode(&ar)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || ar.ID != m1 {
		t.Fatalf("terminate %s through b: %d %+v %v", m1, resp.StatusCode, ar, err)
	}
	var onA mgmt.Page
	apiGet(t, a.base, "instances?scope=local", &onA)
	if len(onA.Instances) != 1 || onA.Instances[0].ID == m1 || !onA.Instances[0].InMemory {
		t.Errorf("a's own in-memory instances after M-1 was terminated through b: %+v", onA.Instances)
	}

	// A persistent instance whose lock a node holds (it runs there)
	// names that node.
	ps, _ := allInstances(t, a.base, "process=OrderApproval&correlation=P-A", 50)
	if len(ps) != 1 {
		t.Fatalf("P-A: %+v", ps)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: ec.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lockKey := "/orchd/view/locks/" + ps[0].ID
	if _, err := cli.Put(ctx, lockKey, "b"); err != nil {
		t.Fatal(err)
	}
	ps, _ = allInstances(t, a.base, "process=OrderApproval&correlation=P-A", 50)
	if _, err := cli.Delete(ctx, lockKey); err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Node != "b" {
		t.Errorf("P-A while b holds its lock, listed by a: %+v", ps)
	}

	// The process list: every version on both nodes, counters summed,
	// numbered as on the node asked.
	var procs []mgmt.Process
	apiGet(t, b.base, "processes", &procs)
	found := false
	for _, p := range procs {
		if strings.HasSuffix(p.Name, "}MemWait") {
			found = true
			if !slices.Equal(p.Nodes, []string{"a", "b"}) || len(p.NodeStats) != 2 || p.Stats.Started != 3 ||
				p.NodeStats[0].Stats.Started != 2 || p.NodeStats[1].Stats.Started != 1 || p.Version != p.NodeStats[1].Version {
				t.Errorf("MemWait in b's process list: version %d nodes %v stats %+v per node %+v", p.Version, p.Nodes, p.Stats, p.NodeStats)
			}
		}
	}
	if !found {
		t.Fatalf("b's process list lacks MemWait: %+v", procs)
	}

	// The cluster view: both nodes, b itself, each with its counters.
	var c mgmt.Cluster
	apiGet(t, b.base, "cluster", &c)
	if c.Name != "view" || len(c.Nodes) != 2 || c.Nodes[0].ID != "a" || c.Nodes[1].ID != "b" || c.Nodes[0].Self || !c.Nodes[1].Self ||
		c.Nodes[0].Stats == nil || c.Nodes[0].Stats.Exchanges < 3 || c.Nodes[0].Admin != a.base || len(c.Nodes[0].Versions) == 0 || len(c.Partial) != 0 {
		t.Fatalf("cluster view of b: %+v", c)
	}

	// orchd ctl pointed at b shows the whole cluster.
	if out := mustCtl(t, b.base, "instances"); !strings.Contains(out, "NODE") || !strings.Contains(out, "@a") || !strings.Contains(out, "@b") {
		t.Errorf("orchd ctl instances on b:\n%s", out)
	}
	if out := mustCtl(t, b.base, "cluster"); !strings.Contains(out, "cluster view: 2 node(s)") || !strings.Contains(out, "b (this)") {
		t.Errorf("orchd ctl cluster on b:\n%s", out)
	}
	if out := mustCtl(t, b.base, "processes"); !regexp.MustCompile(`(?m)^MemWait .* a,b$`).MatchString(out) {
		t.Errorf("orchd ctl processes on b:\n%s", out)
	}

	// orchd instances reads the shared store while the nodes serve it.
	out, err := runOrchd(t, "instances", "--store", "etcd", "--etcd-endpoints", endpoints,
		"--etcd-prefix", "/orchd/view/", "--deploy", deploy, "--process", "OrderApproval")
	if err != nil || !strings.Contains(string(out), "byRequest = P-A") || !strings.Contains(string(out), "byRequest = P-B") ||
		!strings.Contains(string(out), "2 instance(s)") {
		t.Errorf("orchd instances --store etcd: %v\n%s", err, out)
	}

	// a hangs (SIGSTOP: its port still takes connections): b's listing
	// names it once the fan-out timeout (1s) has passed; then a dies
	// (SIGKILL: connections refused), which b's next listing names at
	// once; both before a's lease (10s) ends.
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// kill returns before the process stops: a thread running on the
	// other core can still answer for a moment (once, b's listing 12 ms
	// after the signal got a's answer). Wait until it is stopped.
	waitStopped(t, a.cmd.Process.Pid)
	stopped := time.Now()
	hung, partial := allInstances(t, b.base, "", 50)
	if len(partial) != 1 || !strings.HasPrefix(partial[0], "a: ") || !strings.Contains(partial[0], "timeout") {
		t.Errorf("b's listing with a hung (%v after the SIGSTOP, a's lease is 10s): partial %v, want a named, timed out\n%+v\n%s\n%s",
			time.Since(stopped).Round(time.Millisecond), partial, hung, grepLines(b.log(), "membership"), a.log())
	}
	kill9(t, a)
	if r := runCtl(t, b.base, "instances"); r.code != 0 || !strings.Contains(r.stderr, "missing from this answer: node a: ") {
		t.Errorf("orchd ctl instances on b with a dead (%v after the SIGSTOP, a's lease is 10s): %s", time.Since(stopped).Round(time.Millisecond), r)
	}
	// a leaves b's view when its lease ends: waited for (a minute's bound).
	waitUntil(t, "a to leave b's cluster view after its death", func() bool {
		apiGet(t, b.base, "cluster", &c)
		return len(c.Nodes) == 1 && c.Nodes[0].ID == "b"
	})
	ms, partial := allInstances(t, b.base, "", 50)
	if len(partial) != 0 || len(ms) != 3 { // P-A, P-B, M-3
		t.Errorf("b's listing after a left: %d instances, partial %v", len(ms), partial)
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// waitStopped waits (up to 5 s) until process pid is stopped by a
// signal: state T in /proc/PID/stat.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		// pid (comm) state ...: comm may hold spaces, so read after the
		// last ')'.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'T' {
			return
		}
	}
	t.Fatalf("process %d not stopped 5 s after SIGSTOP", pid)
}
