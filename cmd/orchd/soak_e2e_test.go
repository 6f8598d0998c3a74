package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/loadgen"
)

// TestSoak is make soak (not make test): SOAK_DURATION (default 30m) of a
// fixed offered load, in-memory POs beside the crash loop's persistent
// mix, with a kill -9 and a restart every SOAK_RESTART (default 5m).
//
// The offered load is SOAK_LOAD (default 0.8) of the node's capacity for
// that mix, measured first in two steps: soakProbeClients closed-loop
// clients for SOAK_PROBE, default 1m, after a sixth of it as warm-up
// (measureCapacity: the most the node answers), then open-loop rates from
// that figure down in steps of soakProbeStep until one holds
// (measureOpenLoop: the most the node carries when the load arrives on
// schedule, with the generator on the same cores). The soak's load is
// open loop, and a closed-loop figure overstates what an open-loop
// generator sharing the machine can carry: 80% of it left a backlog that
// grew for the whole run. One request in soakPersistShare is of the
// persistent mix, in the probe and in the offered load. SOAK_RATE and SOAK_PERSIST_RATE set the rates instead (no
// probe). The load is open loop, as a soak's should be: requests are sent
// on schedule whether or not earlier ones were answered (loadgen.Pace, as
// orchd bench --rate). At most soakMaxOutstanding are outstanding per
// pacer; a request due while that many are is not sent (unsent), and one
// sent soakLate or more after it was due is late: the generator itself
// fell behind. Latency is measured from when a request was due. Below
// capacity, orchd keeps up and the acknowledged rate equals the offered
// one; a leak, a slowdown or a stuck recovery shows as a falling rate, a
// growing p99 or CPU per exchange.
//
// Every SOAK_SAMPLE (default 1m) it prints the acknowledged exchanges per
// second (total, persistent, in-memory), the offered rate, the sample's
// p50 and p99 latency, orchd's CPU and CPU per exchange, RSS, goroutines,
// errors, shed (HTTP 503) answers, unsent and late requests, and the
// machine's load average. At each restart: the invariants on what the
// crash left (no acknowledged exchange lost), and the first-to-last-sample
// drift of the period that ended in tx/s, p99 and CPU per exchange. The
// test fails when an invariant is violated and, unless SOAK_DRIFT=report
// (CI's short soak: drift is wall-clock, which CI does not gate on), when
// a period's tx/s drifts by more than soakMaxDrift or RSS grows by more
// than soakMaxRSSGrowth from the first period's lowest sample to the last
// period's. SOAK_HEAP_DIR=DIR saves orchd's heap profile at each sample,
// and a 10-second CPU profile near its end.
//
//	make soak                                   # 30 minutes
//	SOAK_DURATION=1h make soak
//	make soak-short                             # CI's: 2 minutes, drift reported
func TestSoak(t *testing.T) {
	if os.Getenv("ORCHD_SOAK") == "" {
		t.Skip("make soak runs this (ORCHD_SOAK=1)")
	}
	duration := envDuration(t, "SOAK_DURATION", 30*time.Minute)
	period := envDuration(t, "SOAK_RESTART", 5*time.Minute)
	sample := envDuration(t, "SOAK_SAMPLE", time.Minute)
	load := envRate(t, "SOAK_LOAD", 0.8)
	probe := envDuration(t, "SOAK_PROBE", time.Minute)
	driftGate := os.Getenv("SOAK_DRIFT") != "report"
	crm, erp, notify, plog := startRecordingPartners(t)
	deploy := crashDeploy(t, crm, erp, notify, true)
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	data := t.TempDir()
	led := newLedger()
	led.cleanup = true
	// The load generator is one client address holding up to two pacers'
	// soakMaxOutstanding connections, as a proxy in front of orchd would:
	// no per-client share.
	args := []string{"--deploy", deploy, "--data", data, "--message-hold", "-1s", "--max-conns-per-client", "0"}
	// SOAK_HEAP_DIR: save orchd's heap and CPU profiles at each sample.
	heapDir, debug := os.Getenv("SOAK_HEAP_DIR"), ""
	if heapDir != "" {
		args = append(args, "--debug-addr", "127.0.0.1:0") // its address read from each orchd's log
	}
	o := startOrchd(t, args...)
	if heapDir != "" {
		debug = o.pprofAddr(t)
	}
	// The offered load: SOAK_RATE and SOAK_PERSIST_RATE when set, else
	// SOAK_LOAD (0.8) of the capacity this node measures now for the
	// soak's mix, in its proportions (one request in soakPersistShare
	// persistent).
	var rates soakRates
	if os.Getenv("SOAK_RATE") != "" || os.Getenv("SOAK_PERSIST_RATE") != "" {
		rates = soakRates{mem: envRate(t, "SOAK_RATE", 200), persist: envRate(t, "SOAK_PERSIST_RATE", 40)}
	} else {
		closed, s := measureCapacity(o.base, "CAP", led, probe/6, probe)
		if s.errs > 0 || closed <= 0 {
			t.Fatalf("capacity probe: %.1f tx/s, %d errors (first: %s)", closed, s.errs, s.firstErr)
		}
		fmt.Printf("soak capacity, closed loop: %.1f tx/s (persistent %.1f, in-memory %.1f) over %v, %d clients, p99 %.1f ms, errors %d shed %d\n",
			closed, float64(s.persist)/s.secs, float64(s.mem)/s.secs, probe, soakProbeClients, s.p99, s.errs, s.shed)
		step := max(probe/4, 5*time.Second)
		capacity := measureOpenLoop(t, o, "CAP", led, closed, step/5, step)
		if capacity <= 0 {
			t.Fatalf("capacity probe: no open-loop rate from %.1f tx/s down to %.0f%% of it held", closed, 100*soakProbeFloor)
		}
		offered := load * capacity
		rates = soakRates{mem: offered * (soakPersistShare - 1) / soakPersistShare, persist: offered / soakPersistShare}
		fmt.Printf("soak capacity: %.1f tx/s open loop (%.0f%% of closed loop); offering %.0f%% of it\n", capacity, 100*capacity/closed, 100*load)
	}
	fmt.Printf("soak: %v, kill -9 every %v, samples every %v; offered %.1f/s in-memory POs + %.1f/s persistent mix, open loop, at most %d outstanding each (orchd %s)\n",
		duration, period, sample, rates.mem, rates.persist, soakMaxOutstanding, orchdBin)

	samples := int((period + sample/2) / sample) // per restart period
	if samples < 1 {
		samples = 1
	}
	periods := int((duration + period - 1) / period)
	start := time.Now()
	var counts soakCounters
	stop := startSoakLoad(t, o.base, "P1", led, rates, &counts)
	var floors []float64         // each period's lowest RSS
	var rssBase, rssLast float64 // the first period's last sample, the run's last
	for p := 1; p <= periods; p++ {
		// The period's first sample starts now: orchd is serving and the
		// load is on (the restart itself is reported apart).
		counts.take()
		lastCPU := cpuSeconds(o)
		lastMachine := readMachineCPU()
		var rows []soakSample
		next := time.Now()
		for k := 0; k < samples; k++ {
			next = next.Add(sample)
			var prof chan struct{}
			if heapDir != "" && sample >= 30*time.Second {
				prof = make(chan struct{})
				go func(path string, at time.Time) {
					defer close(prof)
					time.Sleep(time.Until(at))
					saveProfile(t, debug, "profile?seconds=10", path)
				}(filepath.Join(heapDir, fmt.Sprintf("cpu-%d-%d.pb.gz", p, k+1)), next.Add(-12*time.Second))
			}
			time.Sleep(time.Until(next))
			if prof != nil {
				<-prof
			}
			s, cpu := counts.take(), cpuSeconds(o)
			s.cpu = cpu - lastCPU
			s.rss = rssMiB(o)
			lastCPU = cpu
			m := readMachineCPU()
			others := m.others(lastMachine, s.cpu) / s.secs
			lastMachine = m
			rows = append(rows, s)
			fmt.Printf("soak %6s: %s  goroutines %3.0f  load %s  others %.2f cores\n",
				time.Since(start).Round(time.Second), s.line(rates), scrape(t, o.base+"/metrics", goroutinesRE), loadAverages(), others)
			if s.firstErr != "" {
				fmt.Printf("soak %6s: first error: %s\n", time.Since(start).Round(time.Second), s.firstErr)
			}
			if heapDir != "" {
				saveProfile(t, debug, "heap?gc=1", filepath.Join(heapDir, fmt.Sprintf("heap-%d-%d.pb.gz", p, k+1)))
			}
		}
		first, last := rows[0], rows[len(rows)-1]
		tx := drift(first.txPerSec(), last.txPerSec())
		fmt.Printf("soak period %d: first to last sample: tx/s %.1f -> %.1f (%+.1f%%), p99 %.1f -> %.1f ms (%+.1f%%), cpu/tx %.0f -> %.0f us (%+.1f%%)\n",
			p, first.txPerSec(), last.txPerSec(), 100*tx, first.p99, last.p99, 100*drift(first.p99, last.p99),
			first.usPerTx(), last.usPerTx(), 100*drift(first.usPerTx(), last.usPerTx()))
		if driftGate && (math.Abs(tx) > soakMaxDrift || math.IsNaN(tx)) {
			t.Errorf("period %d: tx/s drifted %+.1f%% from the first sample to the last (more than %.0f%%) at a fixed offered load of %.1f/s",
				p, 100*tx, 100*soakMaxDrift, rates.mem+rates.persist)
		}
		if p == 1 {
			rssBase = last.rss
		}
		rssLast = last.rss
		floor := rows[0].rss
		for _, r := range rows {
			floor = min(floor, r.rss)
		}
		floors = append(floors, floor)

		if p == periods {
			break
		}
		kill9(t, o)
		stop()
		view, rep, err := readDataFile(data)
		if err != nil {
			t.Fatalf("after kill -9: data file: %v", err)
		}
		bad := checkInvariants(led, plog, view, false)
		fmt.Printf("soak kill -9 #%d: %s; %d invariant violations\n", p, rep, len(bad))
		for _, b := range bad {
			t.Error(b)
		}
		restart := time.Now()
		o = startOrchd(t, args...)
		if heapDir != "" {
			debug = o.pprofAddr(t)
		}
		fmt.Printf("soak restart #%d: serving after %v; %s\n", p, time.Since(restart).Round(time.Millisecond), recoveredLine(o.log()))
		stop = startSoakLoad(t, o.base, fmt.Sprintf("P%d", p+1), led, rates, &counts)
	}
	stop()
	growth := drift(floors[0], floors[len(floors)-1])
	fmt.Printf("soak rss: lowest of each period %v MiB, first to last %+.1f%%; last sample of the first period %.1f MiB, of the run %.1f MiB (%+.1f%%)\n",
		floors, 100*growth, rssBase, rssLast, 100*drift(rssBase, rssLast))
	if driftGate && growth > soakMaxRSSGrowth {
		t.Errorf("RSS grew %+.1f%% from the first period's lowest sample to the last period's (more than %.0f%%)", 100*growth, 100*soakMaxRSSGrowth)
	}
	rep, nbad := finalCheck(t, o, data, led, plog, time.Minute)
	fmt.Printf("soak end: acknowledged po=%d request=%d decision=%d oneway=%d in-memory=%d; final store %s; %d invariant violations\n",
		led.acks.po.Load(), led.acks.request.Load(), led.acks.decision.Load(), led.acks.oneway.Load(), counts.memTotal.Load(), rep, nbad)
}

// Bounds of the soak.
const (
	// soakProbeClients are the capacity probe's closed-loop clients: as
	// many as make bench's knee (64), where orchd serves its most.
	soakProbeClients = 64
	// soakProbeStep and soakProbeFloor: the open-loop probe tries the
	// closed-loop figure, then 10% less each step, down to 30% of it.
	soakProbeStep  = 0.1
	soakProbeFloor = 0.3
	// soakProbeMaxP99 (ms) bounds the p99 of an open-loop rate that holds:
	// a backlog that grows during the step shows here first.
	soakProbeMaxP99 = 500.0
	// soakPersistShare: one request in this many of the probe, and of the
	// offered load, is of the persistent mix (the old defaults' 200:40).
	soakPersistShare = 6
	// soakMaxOutstanding bounds the requests each pacer (in-memory,
	// persistent) has sent and not seen answered.
	soakMaxOutstanding = 1024
	// soakMaxConns bounds each pacer's connections to orchd, as a proxy's
	// pool would: requests beyond it wait for a connection. Without the
	// bound, a moment's stall (a restart's first second) made the client
	// dial a connection per waiting request, each slowing orchd further:
	// 2,300 goroutines and 330 MiB of RSS within 20 seconds of a restart
	// at 860/s, and the idle connections kept the RSS up for minutes.
	soakMaxConns = 128
	// soakLate: a request sent this long after it was due counts as late
	// (the generator, starved of CPU, fell behind its schedule).
	soakLate = 50 * time.Millisecond
	// soakMaxDrift bounds the change of tx/s from the first to the last
	// sample of a restart period: at a fixed offered load below capacity
	// the acknowledged rate is the offered one, up to the requests in
	// flight at a sample's edges (a handful of the thousands a sample
	// counts), so 5% is far above noise.
	soakMaxDrift = 0.05
	// soakMaxRSSGrowth bounds RSS growth from the first period's lowest
	// sample to the last period's. A single sample's RSS follows the
	// requests outstanding at that moment (each holds a connection, its
	// buffers and goroutines): when the neighbours starve orchd, the
	// backlog grows to hundreds of connections and RSS by half (45 to 91
	// MiB within one period of the first full run), and the runtime
	// gives the memory back only minutes later. A period's lowest sample
	// is orchd with the backlog drained; a leak raises it, period after
	// period. A leak of 10 bytes per exchange would add 3.4 MiB over the
	// 25 minutes after the first period at 240/s, some 8% of a 45 MiB
	// floor; 25% lets GC pacing through and stops a leak of some 30
	// bytes per exchange or more.
	soakMaxRSSGrowth = 0.25
)

// soakRates is the offered load, in exchanges per second.
type soakRates struct{ mem, persist float64 }

// soakCounters gathers what the pacers' requests did in the current
// sample; take returns it and starts the next.
type soakCounters struct {
	mu                               sync.Mutex
	lat                              []time.Duration // acknowledged, from when due
	mem, persist, errs, unsent, late int64
	shed                             int64        // answered 503 (orchd's overload answer)
	firstErr                         string       // the sample's first error
	since                            time.Time    // the current sample's start
	memTotal                         atomic.Int64 // in-memory POs acknowledged in the run
}

// sent files one request due at due, sent at sentAt and finished now,
// answered with HTTP status code (0: no answer, err says why), which
// acknowledged it or not.
func (c *soakCounters) sent(persistent bool, due, sentAt time.Time, code int, acked bool, err error) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if sentAt.Sub(due) >= soakLate {
		c.late++
	}
	switch {
	case code == http.StatusServiceUnavailable:
		c.shed++
	case !acked:
		c.errs++
		if c.firstErr == "" {
			c.firstErr = map[bool]string{true: "persistent", false: "in-memory"}[persistent] + ": "
			switch {
			case code == 0 && err != nil:
				c.firstErr += "no answer: " + err.Error()
			case code == 0:
				c.firstErr += "no answer"
			case code != http.StatusOK:
				c.firstErr += fmt.Sprint("HTTP ", code)
			default:
				c.firstErr += "answered, not acknowledged"
			}
		}
	case persistent:
		c.persist++
		c.lat = append(c.lat, now.Sub(due))
	default:
		c.mem++
		c.memTotal.Add(1)
		c.lat = append(c.lat, now.Sub(due))
	}
}

// notSent files a request due while soakMaxOutstanding were outstanding.
func (c *soakCounters) notSent(time.Time) {
	c.mu.Lock()
	c.unsent++
	c.mu.Unlock()
}

// take returns the sample since the last take and starts the next.
func (c *soakCounters) take() soakSample {
	c.mu.Lock()
	lat := c.lat
	s := soakSample{mem: c.mem, persist: c.persist, errs: c.errs, shed: c.shed, unsent: c.unsent, late: c.late, firstErr: c.firstErr, secs: time.Since(c.since).Seconds()}
	c.lat, c.mem, c.persist, c.errs, c.shed, c.unsent, c.late, c.firstErr, c.since = nil, 0, 0, 0, 0, 0, 0, "", time.Now()
	c.mu.Unlock()
	slices.Sort(lat)
	s.p50, s.p99 = quantileMs(lat, 0.50), quantileMs(lat, 0.99)
	return s
}

// soakSample is one sample of the soak.
type soakSample struct {
	secs                             float64 // length
	mem, persist, errs, unsent, late int64   // acknowledged in-memory and persistent exchanges, failures, not sent, sent late
	shed                             int64   // answered 503
	firstErr                         string  // the first error, if any
	p50, p99                         float64 // latency of the acknowledged ones, from when due, ms
	cpu                              float64 // orchd's CPU seconds
	rss                              float64 // orchd's RSS at the end, MiB
}

func (s soakSample) txPerSec() float64 { return float64(s.mem+s.persist) / s.secs }

// usPerTx is orchd's CPU per acknowledged exchange, in microseconds.
func (s soakSample) usPerTx() float64 { return 1e6 * s.cpu / float64(s.mem+s.persist) }

func (s soakSample) line(r soakRates) string {
	return fmt.Sprintf("%6.1f tx/s (persistent %5.1f, in-memory %6.1f) of %.1f/s offered  p50 %5.1f ms  p99 %6.1f ms  orchd cpu %3.0f%% (%3.0f us/tx)  rss %5.1f MiB  errors %d shed %d unsent %d late %d",
		s.txPerSec(), float64(s.persist)/s.secs, float64(s.mem)/s.secs, r.mem+r.persist, s.p50, s.p99,
		100*s.cpu/s.secs, s.usPerTx(), s.rss, s.errs, s.shed, s.unsent, s.late)
}

// quantileMs is the q-quantile (nearest rank) of sorted, in milliseconds;
// NaN when it is empty.
func quantileMs(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return float64(sorted[max(i, 0)]) / float64(time.Millisecond)
}

// drift is the relative change from first to last.
func drift(first, last float64) float64 { return (last - first) / first }

// mixClients is the number of the persistent mix's clients (see
// mixStep): two PO clients, two approval clients and one one-way client,
// as the crash loop's mixedLoad has.
const mixClients = 5

// mixStep sends the i-th request (from 0) of the persistent mix's client
// k (0 to mixClients-1) with post, ids under prefix, filed in led, with r
// as its random choices: clients 0 and 1 send POs (po with a new poId),
// 2 and 3 approvals (every other step a decision for an earlier one with
// a long timer, when there is one), 4 RELIABLE one-way sends. It returns
// the HTTP status of orchd's answer (0: none) and whether the answer
// acknowledged the request.
func mixStep(post postFunc, led *loadLedger, po []byte, prefix string, k, i int, r uint64) (code int, acked bool) {
	send := func(path, action string, body []byte) (string, bool) {
		b, c := post(path, action, body)
		code = c
		return b, c == http.StatusOK
	}
	switch k {
	case 0, 1:
		acked, _ = led.order(send, po, fmt.Sprintf("%s-PO%d-%d", prefix, k, i))
	case 2, 3:
		if i%2 == 1 {
			if id, c := led.takeUndecided(nil, r%2 == 0); c != nil {
				acked, _ = led.decide(send, id, c)
				return code, acked
			}
		}
		short := (r>>8)%3 == 0
		timeout := "PT1H"
		if short {
			timeout = "PT0.5S"
		}
		acked, _ = led.request(send, fmt.Sprintf("%s-AP%d-%d", prefix, k-2, i), timeout, short, true)
	default:
		acked, _ = led.notify(send, fmt.Sprintf("%s-OW-%d", prefix, i))
	}
	return code, acked
}

// soakSenders are the soak's two kinds of request against orchd at base:
// mem posts one in-memory PO, persist the next step of the persistent mix
// (ids under prefix, filed in led); each files its result in c, with due
// as when it was due. close releases their connections.
type soakSenders struct {
	mem, persist func(due time.Time)
	close        func()
}

func newSoakSenders(ctx context.Context, base, prefix string, led *loadLedger, c *soakCounters) soakSenders {
	newClient := func() *http.Client {
		return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxConnsPerHost: soakMaxConns, MaxIdleConnsPerHost: soakMaxConns}}
	}
	memClient, mixClient := newClient(), newClient()
	post := newPoster(mixClient, base)
	po := readPO()
	var steps [mixClients]atomic.Int64 // requests of each mix client so far
	var seq atomic.Int64
	return soakSenders{
		mem: func(due time.Time) {
			sentAt := time.Now()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/processes/PurchaseOrder", bytes.NewReader(po))
			req.Header.Set("Content-Type", textXML)
			acked, code := false, 0
			resp, err := memClient.Do(req)
			if err == nil {
				var b []byte
				b, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				if err == nil {
					code = resp.StatusCode
					acked = code == http.StatusOK && bytes.Contains(b, []byte("ACCEPTED"))
				}
			}
			c.sent(false, due, sentAt, code, acked, err)
		},
		persist: func(due time.Time) {
			// The mix's clients take turns, so its kinds keep the crash
			// loop's proportions.
			sentAt := time.Now()
			k := int(seq.Add(1)-1) % mixClients
			code, acked := mixStep(post, led, po, prefix, k, int(steps[k].Add(1)-1), rand.Uint64())
			c.sent(true, due, sentAt, code, acked, nil)
		},
		close: func() {
			memClient.CloseIdleConnections()
			mixClient.CloseIdleConnections()
		},
	}
}

// startSoakLoad starts the open-loop load on orchd at base: in-memory POs
// and the persistent mix (ids under prefix, filed in led), each paced at
// its rate in r and counted in c. The returned stop ends it and waits for
// every request in flight (they fail at once when orchd was killed).
func startSoakLoad(t *testing.T, base, prefix string, led *loadLedger, r soakRates, c *soakCounters) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	send := newSoakSenders(ctx, base, prefix, led, c)
	pacers := []struct {
		rate float64
		send func(due time.Time)
	}{{r.mem, send.mem}, {r.persist, send.persist}}
	var wg sync.WaitGroup
	for _, p := range pacers {
		wg.Go(func() {
			if err := loadgen.Pace(ctx, p.rate, soakMaxOutstanding, p.send, c.notSent); err != nil {
				t.Error(err)
			}
		})
	}
	return func() {
		cancel()
		wg.Wait()
		send.close()
	}
}

// measureCapacity is the soak's mix at its most: soakProbeClients clients,
// each sending its next request as soon as the last is answered (closed
// loop), one request in soakPersistShare of the persistent mix and the
// rest in-memory POs, for warmup and then span, of which it returns the
// acknowledged exchanges per second and the sample (ids under prefix,
// filed in led).
func measureCapacity(base, prefix string, led *loadLedger, warmup, span time.Duration) (float64, soakSample) {
	var c soakCounters
	ctx, cancel := context.WithCancel(context.Background())
	send := newSoakSenders(ctx, base, prefix, led, &c)
	var seq atomic.Int64
	var wg sync.WaitGroup
	for range soakProbeClients {
		wg.Go(func() {
			for ctx.Err() == nil {
				if seq.Add(1)%soakPersistShare == 0 {
					send.persist(time.Now())
				} else {
					send.mem(time.Now())
				}
			}
		})
	}
	time.Sleep(warmup)
	c.take()
	time.Sleep(span)
	s := c.take()
	cancel()
	wg.Wait()
	send.close()
	return s.txPerSec(), s
}

// measureOpenLoop offers the soak's mix open loop at rates from start
// down, soakProbeStep less each time, each for warmup and then span, and
// returns the first rate that holds (heldOpenLoop), or 0 when none above
// soakProbeFloor of start does. Each step's line is printed.
func measureOpenLoop(t *testing.T, o *orchd, prefix string, led *loadLedger, start float64, warmup, span time.Duration) float64 {
	t.Helper()
	for f := 1.0; f >= soakProbeFloor-1e-9; f -= soakProbeStep {
		rate := f * start
		r := soakRates{mem: rate * (soakPersistShare - 1) / soakPersistShare, persist: rate / soakPersistShare}
		var c soakCounters
		stop := startSoakLoad(t, o.base, fmt.Sprintf("%s%.0f", prefix, 100*f), led, r, &c)
		time.Sleep(warmup)
		c.take()
		cpu := cpuSeconds(o)
		time.Sleep(span)
		s := c.take()
		s.cpu, s.rss = cpuSeconds(o)-cpu, rssMiB(o)
		stop()
		why := heldOpenLoop(s, rate)
		fmt.Printf("soak capacity, open loop at %.0f%%: %s  %s\n", 100*f, s.line(r), map[bool]string{true: "holds", false: "does not hold: " + why}[why == ""])
		if why == "" {
			return rate
		}
	}
	return 0
}

// heldOpenLoop says why a probe sample at the offered rate did not hold,
// or "" when it did: every request sent on time (unsent none, late under
// 1%), answered and acknowledged (no error, no 503), at least 95% of the
// offered rate acknowledged within the sample, and p99 under
// soakProbeMaxP99.
func heldOpenLoop(s soakSample, offered float64) string {
	n := s.mem + s.persist + s.errs + s.shed
	switch {
	case s.unsent > 0:
		return fmt.Sprintf("%d requests not sent (%d outstanding)", s.unsent, soakMaxOutstanding)
	case s.errs > 0 || s.shed > 0:
		return fmt.Sprintf("%d errors, %d shed (first: %s)", s.errs, s.shed, s.firstErr)
	case float64(s.late) > 0.01*float64(n):
		return fmt.Sprintf("%d of %d requests sent late", s.late, n)
	case s.txPerSec() < 0.95*offered:
		return fmt.Sprintf("%.1f tx/s acknowledged", s.txPerSec())
	case !(s.p99 <= soakProbeMaxP99):
		return fmt.Sprintf("p99 %.1f ms", s.p99)
	}
	return ""
}

// saveProfile writes one of orchd's pprof profiles (what, e.g.
// "heap?gc=1") to path; failures are reported, not fatal (it may run in
// a goroutine of its own).
func saveProfile(t *testing.T, debug, what, path string) {
	t.Helper()
	resp, err := http.Get("http://" + debug + "/debug/pprof/" + what)
	if err != nil {
		t.Error(err)
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		t.Error(err)
		return
	}
	fmt.Printf("soak: profile in %s\n", path)
}

// rssMiB is orchd's resident set size, from /proc.
func rssMiB(o *orchd) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", o.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return -1
}

// cpuSeconds is the CPU time orchd has used (user and system), from
// /proc: with the throughput it tells a slower orchd from a busier
// machine.
func cpuSeconds(o *orchd) float64 { return pidCPUSeconds(o.cmd.Process.Pid) }

// loadAverages is the machine's load average over 1, 5 and 15 minutes,
// from /proc: how much the neighbours wanted of the CPU.
// machineCPU is a reading of the CPU seconds the whole machine (all
// cores, /proc/stat) and this test process (load generator and
// partners) have used.
type machineCPU struct{ busy, self float64 }

func readMachineCPU() machineCPU {
	var m machineCPU
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		if f := strings.Fields(line); len(f) >= 9 && f[0] == "cpu" {
			for i, v := range f[1:9] { // user nice system idle iowait irq softirq steal
				if n, err := strconv.ParseFloat(v, 64); err == nil && i != 3 && i != 4 {
					m.busy += n / 100 // USER_HZ
				}
			}
		}
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		m.self = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	}
	return m
}

// others is the CPU seconds processes other than orchd (which used
// orchdCPU) and this test used on the machine since before: the
// neighbours, whose load a sample's figures share the two cores with.
func (m machineCPU) others(before machineCPU, orchdCPU float64) float64 {
	return max(0, (m.busy-before.busy)-(m.self-before.self)-orchdCPU)
}

func loadAverages() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}

// envRate reads a positive rate (per second) from the environment
// variable name, def when it is not set.
func envRate(t *testing.T, name string, def float64) float64 {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	r, err := loadgen.ParseRates(s)
	if err != nil || len(r) != 1 {
		t.Fatalf("%s=%q: want one positive rate such as 200 or 200/s", name, s)
	}
	return r[0]
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive duration such as 30m", name, s)
	}
	return d
}
