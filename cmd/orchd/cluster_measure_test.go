package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/orchd/orchd/internal/loadgen"
)

// TestMeasureCluster measures orchd on a 3-member etcd cluster whose
// members run as separate processes (internal/etcdtest/etcdmember), so
// that each one's CPU time can be read from /proc: the persistent PO on
// one node with --store etcd, without and with --cluster, then on 2 and
// 3 nodes with --cluster (one load generator per node, at the same
// time), and finally etcd's own write ceiling under a raw Txn load at the
// measured bytes per checkpoint. It prints markdown tables for
// docs/cluster-perf.md. It is a measurement, not a check: it runs only
// with ORCHD_MEASURE=1 (`make cluster-bench`). ORCHD_MEASURE_DURATION sets
// the measured time of each phase (10s), ORCHD_MEASURE_CLIENTS the total
// closed-loop clients, spread over the nodes (24).
func TestMeasureCluster(t *testing.T) {
	if os.Getenv("ORCHD_MEASURE") == "" {
		t.Skip("set ORCHD_MEASURE=1 to measure")
	}
	dur := envDuration(t, "ORCHD_MEASURE_DURATION", 10*time.Second)
	clients := 24
	if s := os.Getenv("ORCHD_MEASURE_CLIENTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 3 {
			t.Fatalf("ORCHD_MEASURE_CLIENTS=%q: want a number of at least 3", s)
		}
		clients = n
	}
	ec := startEtcdProcs(t, 3)
	crm, erp, mockPid := startMockProc(t)
	deploy := t.TempDir()
	copyBundleFrom(t, "../../deploy/purchase-order-persistent", deploy, "po-persistent", crm, erp, nil)
	var md strings.Builder
	fmt.Fprintf(&md, "Started %s; %d closed-loop clients in total, spread evenly over the nodes; %s measured after 2s warmup per phase; `nproc` = %d.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), clients, dur, runtime.NumCPU())

	// The last phase gives one node the share of the load each of three
	// nodes has, to tell what smaller groups cost from what more
	// processes on the same cores cost.
	phases := []struct {
		name    string
		nodes   int
		cluster bool
		clients int
	}{
		{"1 node, --store etcd", 1, false, clients},
		{"1 node, --store etcd --cluster", 1, true, clients},
		{"2 nodes, --cluster", 2, true, clients},
		{"3 nodes, --cluster", 3, true, clients},
		{fmt.Sprintf("1 node, --cluster, %d clients", clients/3), 1, true, clients / 3},
	}
	var results []phaseResult
	for i, ph := range phases {
		prefix := fmt.Sprintf("/orchd/measure%d/", i)
		var nodes []*orchd
		for n := range ph.nodes {
			args := []string{"--deploy", deploy, "--data", t.TempDir(), "--store", "etcd",
				"--etcd-endpoints", strings.Join(ec.endpoints(), ","), "--etcd-prefix", prefix}
			if ph.cluster {
				args = append(args, "--cluster", fmt.Sprintf("measure%d", i), "--node-id", fmt.Sprintf("n%d", n))
			}
			nodes = append(nodes, startOrchd(t, args...))
		}
		r := measurePhase(t, ph.name, nodes, ec, mockPid, ph.clients, dur)
		results = append(results, r)
		for _, o := range nodes {
			stopOrchd(t, o)
		}
	}
	writePhaseTables(&md, results)

	// etcd's write ceiling at the measured size of a checkpoint (of the
	// first phase that stores any: without --cluster the PO, answered
	// once at its end and cleaned up, stores nothing).
	base := results[0]
	for _, r := range results {
		if r.checkpoints > 0 && r.writeTxns > 0 {
			base = r
			break
		}
	}
	valueSize := int(base.storeBytes / base.checkpoints)
	group := int(base.checkpoints/base.writeTxns + 0.5)
	md.WriteString("\n### etcd alone: raw Txn load on the same 3 members\n\n")
	fmt.Fprintf(&md, "One clientv3 client on all three endpoints; each writer loops on `Txn().Then(Put x B)`, one fresh key per put, B puts per Txn; values of 64 bytes (about a lock key), and of %d bytes (the measured bytes per checkpoint) one per Txn and %d per Txn (the checkpoints per write Txn measured on one node); 3 s per level.\n\n", valueSize, group)
	md.WriteString("| writers | puts/Txn | value bytes | Txn/s | puts/s | MB/s put | fsyncs/s (leader) | mean fsync ms | leader's fsync busy (s/s) | CPU ms per Txn: leader / followers | leader CPU (cores) | failed Txns | load average |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, shape := range [][2]int{{1, 64}, {1, valueSize}, {group, valueSize}} {
		batch, size := shape[0], shape[1]
		for _, writers := range []int{1, 16, 64, 256} {
			r := rawTxnLoad(t, ec, writers, batch, size, 3*time.Second)
			fmt.Fprintf(&md, "| %d | %d | %d | %.0f | %.0f | %.2f | %.0f | %.2f | %.2f | %s | %.2f | %d | %s |\n",
				writers, batch, size, r.txnPerSec, r.txnPerSec*float64(batch), r.txnPerSec*float64(batch*size)/1e6,
				r.fsyncPerSec, r.fsyncMeanMS, r.fsyncPerSec*r.fsyncMeanMS/1000, r.cpuPerTxn, r.leaderCores, r.failed, r.load)
		}
	}
	t.Logf("\n%s", md.String())
	if out := os.Getenv("ORCHD_MEASURE_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(md.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// phaseResult is what one phase measured, over warmup and measured
// time together for the per-exchange ratios (the counters and CPU times
// cannot tell them apart), over the measured time for tx/s and p99.
type phaseResult struct {
	name, load, loadAfter string
	nodes                 int
	txPerSec              []float64 // per node
	p99                   []float64 // per node, ms
	errors                int64
	exchanges             float64
	checkpoints           float64
	writeTxns, readTxns   float64
	storeBytes            float64
	orchdCPU              []float64 // per node, seconds
	nodeExchanges         []float64 // per node
	etcdCPU               []float64 // per member, seconds
	mockCPU, benchCPU     float64
	etcd                  []etcdCounters // per member, deltas
	leader                int
}

// etcdCounters are a member's counters from its /metrics.
type etcdCounters struct {
	fsyncs, fsyncSeconds, puts, grpcIn, proposals, leader float64
}

func (c etcdCounters) minus(o etcdCounters) etcdCounters {
	return etcdCounters{c.fsyncs - o.fsyncs, c.fsyncSeconds - o.fsyncSeconds, c.puts - o.puts, c.grpcIn - o.grpcIn, c.proposals - o.proposals, c.leader}
}

// measurePhase runs clients closed-loop clients spread over nodes for
// dur after a 2 s warmup and reads every process's CPU time and the
// counters of orchd and etcd before and after.
func measurePhase(t *testing.T, name string, nodes []*orchd, ec *etcdProcs, mockPid, clients int, dur time.Duration) phaseResult {
	t.Helper()
	r := phaseResult{name: name, nodes: len(nodes), load: loadAvg()}
	type storeSnap struct {
		n, cps, tx, rd, bytes float64
		perNode               []float64
	}
	readStore := func() storeSnap {
		var s storeSnap
		for _, o := range nodes {
			_, m := get(t, o.base+"/metrics")
			n := promSum(m, `orchd_instances_started_total{process="PurchaseOrderPersistent"}`)
			s.n += n
			s.perNode = append(s.perNode, n)
			s.cps += promSum(m, "orchd_store_checkpoints_total")
			s.tx += promSum(m, "orchd_store_write_transactions_total")
			s.rd += promSum(m, "orchd_store_read_transactions_total")
			s.bytes += promSum(m, "orchd_store_written_bytes_total")
		}
		return s
	}
	cpus := func() (orch, etcd []float64, mock, self float64) {
		for _, o := range nodes {
			orch = append(orch, pidCPUSeconds(o.cmd.Process.Pid))
		}
		for _, m := range ec.members {
			etcd = append(etcd, pidCPUSeconds(m.cmd.Process.Pid))
		}
		return orch, etcd, pidCPUSeconds(mockPid), pidCPUSeconds(os.Getpid())
	}
	s0, e0 := readStore(), ec.counters(t)
	o0, m0, k0, b0 := cpus()

	expect, err := loadgen.NewExpect("//po:status = 'ACCEPTED'", nil)
	if err != nil {
		t.Fatal(err)
	}
	reps := make([]*loadgen.Report, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, o := range nodes {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), dur+time.Minute)
			defer cancel()
			reps[i], errs[i] = loadgen.Run(ctx, loadgen.Config{
				Targets:     []string{o.base + persistentPOPath},
				Body:        loadgen.DefaultBody(),
				SOAPAction:  loadgen.DefaultSOAPAction,
				Concurrency: []int{clients / len(nodes)},
				Duration:    dur,
				Warmup:      2 * time.Second,
				Expect:      expect,
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: load on node %d: %v", name, i, err)
		}
	}
	s1, e1 := readStore(), ec.counters(t)
	o1, m1, k1, b1 := cpus()
	r.loadAfter = loadAvg()
	for i, rep := range reps {
		l := rep.Levels[0]
		r.txPerSec = append(r.txPerSec, l.TxPerSec)
		r.p99 = append(r.p99, l.Latency.P99)
		r.errors += l.Errors
		for _, e := range l.ErrorSamples {
			t.Logf("%s: node %d: %d x %s", name, i, e.Count, e.Message)
		}
		r.orchdCPU = append(r.orchdCPU, o1[i]-o0[i])
		r.nodeExchanges = append(r.nodeExchanges, s1.perNode[i]-s0.perNode[i])
	}
	for i := range ec.members {
		r.etcdCPU = append(r.etcdCPU, m1[i]-m0[i])
		r.etcd = append(r.etcd, e1[i].minus(e0[i]))
		if e1[i].leader == 1 {
			r.leader = i
		}
	}
	r.mockCPU, r.benchCPU = k1-k0, b1-b0
	r.exchanges, r.checkpoints = s1.n-s0.n, s1.cps-s0.cps
	r.writeTxns, r.readTxns, r.storeBytes = s1.tx-s0.tx, s1.rd-s0.rd, s1.bytes-s0.bytes
	t.Logf("%s: %.0f exchanges, tx/s %v, p99 %v ms, %d errors", name, r.exchanges, r.txPerSec, r.p99, r.errors)
	return r
}

// writePhaseTables writes the phases' markdown tables.
func writePhaseTables(md *strings.Builder, rs []phaseResult) {
	sum := func(xs []float64) float64 {
		var s float64
		for _, x := range xs {
			s += x
		}
		return s
	}
	maxOf := func(xs []float64) float64 {
		var m float64
		for _, x := range xs {
			m = max(m, x)
		}
		return m
	}
	md.WriteString("### orchd phases: throughput\n\n| phase | load average before / after | total tx/s | tx/s per node | worst node's p99 ms | errors | exchanges (incl. warmup) |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		var per []string
		for _, x := range r.txPerSec {
			per = append(per, fmt.Sprintf("%.1f", x))
		}
		fmt.Fprintf(md, "| %s | %s / %s | %.1f | %s | %.1f | %d | %.0f |\n", r.name, r.load, r.loadAfter, sum(r.txPerSec), strings.Join(per, ", "), maxOf(r.p99), r.errors, r.exchanges)
	}
	md.WriteString("\n### orchd phases: per exchange\n\n| phase | checkpoints | store write Txns | store read Txns | store bytes put | etcd proposals committed (leader) | etcd puts (leader) | etcd gRPC bytes received (all members) | WAL fsyncs (leader) | WAL fsyncs (all members) |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		n := r.exchanges
		l := r.etcd[r.leader]
		var grpc, fsyncs float64
		for _, c := range r.etcd {
			grpc += c.grpcIn
			fsyncs += c.fsyncs
		}
		fmt.Fprintf(md, "| %s | %.2f | %.3f | %.3f | %.0f | %.2f | %.2f | %.0f | %.3f | %.3f |\n", r.name, r.checkpoints/n, r.writeTxns/n, r.readTxns/n, r.storeBytes/n,
			l.proposals/n, l.puts/n, grpc/n, l.fsyncs/n, fsyncs/n)
	}
	md.WriteString("\n### orchd phases: CPU milliseconds per exchange (utime+stime from /proc)\n\n| phase | each orchd node, per exchange it served | all orchd nodes | etcd leader | etcd followers | etcd total | mock partners | load generator (test process) | mean WAL fsync ms (leader) | leader's fsync ms per exchange |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		n := r.exchanges / 1000
		var per, fol []string
		for i, c := range r.orchdCPU {
			per = append(per, fmt.Sprintf("%.2f", 1000*c/r.nodeExchanges[i]))
		}
		for i, c := range r.etcdCPU {
			if i != r.leader {
				fol = append(fol, fmt.Sprintf("%.2f", c/n))
			}
		}
		l := r.etcd[r.leader]
		fmt.Fprintf(md, "| %s | %s | %.2f | %.2f | %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", r.name, strings.Join(per, ", "), sum(r.orchdCPU)/n,
			r.etcdCPU[r.leader]/n, strings.Join(fol, ", "), sum(r.etcdCPU)/n, r.mockCPU/n, r.benchCPU/n, 1000*l.fsyncSeconds/max(l.fsyncs, 1), l.fsyncSeconds/n)
	}
}

// etcdProcs is a cluster of etcdmember processes.
type etcdProcs struct {
	members []*etcdProc
}

type etcdProc struct {
	client string // host:port
	cmd    *exec.Cmd
	done   chan error
}

func (c *etcdProcs) endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.client)
	}
	return eps
}

// counters reads every member's /metrics.
func (c *etcdProcs) counters(t *testing.T) []etcdCounters {
	t.Helper()
	var out []etcdCounters
	for _, m := range c.members {
		_, s := get(t, "http://"+m.client+"/metrics")
		out = append(out, etcdCounters{
			fsyncs:       promSum(s, "etcd_disk_wal_fsync_duration_seconds_count"),
			fsyncSeconds: promSum(s, "etcd_disk_wal_fsync_duration_seconds_sum"),
			puts:         promSum(s, "etcd_mvcc_put_total"),
			grpcIn:       promSum(s, "etcd_network_client_grpc_received_bytes_total"),
			proposals:    promSum(s, "etcd_server_proposals_committed_total"),
			leader:       promSum(s, "etcd_server_is_leader"),
		})
	}
	return out
}

// startEtcdProcs builds internal/etcdtest/etcdmember and runs n members
// of one cluster as separate processes on loopback, WAL fsync on, data
// under t.TempDir(); they are stopped by t.Cleanup.
func startEtcdProcs(t *testing.T, n int) *etcdProcs {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "etcdmember")
	build := exec.Command("go", "build", "-o", bin, "../../internal/etcdtest/etcdmember")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building etcdmember: %v\n%s", err, out)
	}
	var names, peers, clients, initial []string
	for i := range n {
		names = append(names, fmt.Sprintf("m%d", i))
		peers = append(peers, "http://"+freeLoopback(t))
		clients = append(clients, freeLoopback(t))
		initial = append(initial, names[i]+"="+peers[i])
	}
	c := &etcdProcs{}
	ready := make(chan error, n)
	for i := range n {
		cmd := exec.Command(bin, "--name", names[i], "--dir", filepath.Join(t.TempDir(), names[i]),
			"--peer", peers[i], "--client", "http://"+clients[i], "--initial-cluster", strings.Join(initial, ","))
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		m := &etcdProc{client: clients[i], cmd: cmd, done: make(chan error, 1)}
		c.members = append(c.members, m)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if sc.Text() == "ready" {
					ready <- nil
				}
			}
			ready <- fmt.Errorf("member %s exited before it was ready", names[i])
			m.done <- cmd.Wait()
		}()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-m.done
		})
	}
	for range n {
		select {
		case err := <-ready:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("etcd members not ready within 60s")
		}
	}
	return c
}

// startMockProc runs `orchd mock-partners` as its own process on free
// loopback ports and waits until both accept connections.
func startMockProc(t *testing.T) (crm, erp string, pid int) {
	t.Helper()
	crm, erp = freeLoopback(t), freeLoopback(t)
	cmd := exec.Command(orchdBin, "mock-partners", "--crm", crm, "--erp", erp, "--log-level", "warn")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	deadline := time.Now().Add(30 * time.Second)
	for _, a := range []string{crm, erp} {
		for {
			c, err := net.Dial("tcp", a)
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("mock partners not listening on %s: %v", a, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return crm, erp, cmd.Process.Pid
}

// rawResult is one level of the raw Txn load.
type rawResult struct {
	txnPerSec, fsyncPerSec, fsyncMeanMS float64
	leaderCores                         float64
	cpuPerTxn, load                     string
	failed                              int
}

// rawTxnLoad runs writers goroutines that each commit Txns of batch
// puts of size bytes to the cluster for dur, and reports the rate with
// the leader's fsyncs and every member's CPU per 1000 Txns.
func rawTxnLoad(t *testing.T, ec *etcdProcs, writers, batch, size int, dur time.Duration) rawResult {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: ec.endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	value := make([]byte, size)
	rand.Read(value)
	r := rawResult{load: loadAvg()}
	e0 := ec.counters(t)
	var c0 []float64
	for _, m := range ec.members {
		c0 = append(c0, pidCPUSeconds(m.cmd.Process.Pid))
	}
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	counts := make([]int, writers)
	failed := make([]int, writers)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			ops := make([]clientv3.Op, batch)
			for i := 0; ; i++ {
				for b := range ops {
					ops[b] = clientv3.OpPut(fmt.Sprintf("/raw/%d/%d/%d", w, i, b), string(value))
				}
				if _, err := cli.Txn(ctx).Then(ops...).Commit(); err != nil {
					if ctx.Err() != nil {
						return
					}
					// Overloaded ("request timed out"): count it, go on.
					failed[w]++
					continue
				}
				counts[w]++
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	var txns int
	for w, n := range counts {
		txns += n
		r.failed += failed[w]
	}
	e1 := ec.counters(t)
	leader := 0
	for i := range e1 {
		if e1[i].leader == 1 {
			leader = i
		}
	}
	d := e1[leader].minus(e0[leader])
	r.txnPerSec = float64(txns) / elapsed
	r.fsyncPerSec = d.fsyncs / elapsed
	r.fsyncMeanMS = 1000 * d.fsyncSeconds / max(d.fsyncs, 1)
	var fol []string
	var lead string
	for i, m := range ec.members {
		c := fmt.Sprintf("%.2f", 1000*(pidCPUSeconds(m.cmd.Process.Pid)-c0[i])/float64(max(txns, 1)))
		if i == leader {
			lead = c
			r.leaderCores = (pidCPUSeconds(m.cmd.Process.Pid) - c0[i]) / elapsed
		} else {
			fol = append(fol, c)
		}
	}
	r.cpuPerTxn = lead + " / " + strings.Join(fol, ", ")
	// Leave the next level a clean database: drop what this one wrote.
	if _, err := cli.Delete(context.Background(), "/raw/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	return r
}

// promSum sums the values of the samples of series in a Prometheus
// text exposition: a series given with labels matches exactly, one
// without matches the name with any labels.
func promSum(text, series string) float64 {
	var sum float64
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		name := line[:i]
		if name != series && (strings.Contains(series, "{") || !strings.HasPrefix(name, series+"{")) {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}

// pidCPUSeconds is the CPU time (user and system) a process has used,
// from /proc/<pid>/stat; 0 when it cannot be read.
func pidCPUSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (which is in parentheses).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // USER_HZ
}

// loadAvg is the 1-minute load average from /proc/loadavg.
func loadAvg() string { return strings.Fields(loadAverages())[0] }

// freeLoopback returns a loopback address with a port free right now.
func freeLoopback(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
