package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSoak is make soak (not make test, not CI): SOAK_DURATION (default
// 30m) of mixed load, in-memory POs beside the crash loop's persistent mix,
// with a kill -9 and a restart every SOAK_RESTART (default 5m). Every
// SOAK_SAMPLE (default 1m) it prints the acknowledged exchanges per second,
// orchd's RSS and goroutines; at each restart the invariants on what the
// crash left, the first-to-last-sample drift of the period that ended, and
// at the end the invariants once every timer and outbox message is done.
// SOAK_HEAP_DIR=DIR saves orchd's heap profile at each sample.
//
//	make soak                                   # 30 minutes
//	SOAK_DURATION=3m SOAK_RESTART=90s SOAK_SAMPLE=30s make soak
func TestSoak(t *testing.T) {
	if os.Getenv("ORCHD_SOAK") == "" {
		t.Skip("make soak runs this (ORCHD_SOAK=1)")
	}
	duration := envDuration(t, "SOAK_DURATION", 30*time.Minute)
	period := envDuration(t, "SOAK_RESTART", 5*time.Minute)
	sample := envDuration(t, "SOAK_SAMPLE", time.Minute)
	crm, erp, notify, plog := startRecordingPartners(t)
	deploy := crashDeploy(t, crm, erp, notify, true)
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	data := t.TempDir()
	led := newLedger()
	led.cleanup = true
	args := []string{"--deploy", deploy, "--data", data, "--message-hold", "-1s"}
	// SOAK_HEAP_DIR: save orchd's heap profile at each sample.
	heapDir, debug := os.Getenv("SOAK_HEAP_DIR"), ""
	if heapDir != "" {
		debug = deadAddr(t)
		args = append(args, "--debug-addr", debug)
	}
	var memAcks atomic.Int64
	fmt.Printf("soak: %v, kill -9 every %v, samples every %v (orchd %s)\n", duration, period, sample, orchdBin)

	samples := int((period + sample/2) / sample) // per restart period
	if samples < 1 {
		samples = 1
	}
	periods := int((duration + period - 1) / period)
	start := time.Now()
	o := startOrchd(t, args...)
	stop, done := startSoakLoad(o.base, "P1", led, &memAcks)
	persistAcks := func() int64 {
		return led.acks.po.Load() + led.acks.request.Load() + led.acks.decision.Load() + led.acks.oneway.Load()
	}
	for p := 1; p <= periods; p++ {
		lastPersist, lastMem := persistAcks(), memAcks.Load()
		lastCPU := cpuSeconds(o)
		var rates []float64
		next := time.Now()
		for k := 0; k < samples; k++ {
			next = next.Add(sample)
			time.Sleep(time.Until(next))
			np, nm, cpu := persistAcks(), memAcks.Load(), cpuSeconds(o)
			secs := sample.Seconds()
			tx := float64(np - lastPersist + nm - lastMem)
			rates = append(rates, tx/secs)
			fmt.Printf("soak %6s: %7.1f tx/s (persistent %6.1f, in-memory %7.1f)  orchd cpu %3.0f%% (%3.0f us/tx)  rss %5.1f MiB  goroutines %3.0f\n",
				time.Since(start).Round(time.Second), rates[k], float64(np-lastPersist)/secs, float64(nm-lastMem)/secs,
				100*(cpu-lastCPU)/secs, 1e6*(cpu-lastCPU)/tx, rssMiB(o), scrape(t, o.base+"/metrics", goroutinesRE))
			lastPersist, lastMem, lastCPU = np, nm, cpu
			if heapDir != "" {
				saveHeap(t, debug, filepath.Join(heapDir, fmt.Sprintf("heap-%d-%d.pb.gz", p, k+1)))
			}
		}
		first, last := rates[0], rates[len(rates)-1]
		fmt.Printf("soak period %d: first sample %.1f tx/s, last %.1f tx/s, drift %+.1f%%\n", p, first, last, 100*(last-first)/first)

		if p == periods {
			break
		}
		kill9(t, o)
		close(stop)
		<-done
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
		fmt.Printf("soak restart #%d: serving after %v; %s\n", p, time.Since(restart).Round(time.Millisecond), recoveredLine(o.log()))
		stop, done = startSoakLoad(o.base, fmt.Sprintf("P%d", p+1), led, &memAcks)
	}
	close(stop)
	<-done
	rep, nbad := finalCheck(t, o, data, led, plog, time.Minute)
	fmt.Printf("soak end: acknowledged po=%d request=%d decision=%d oneway=%d in-memory=%d; final store %s; %d invariant violations\n",
		led.acks.po.Load(), led.acks.request.Load(), led.acks.decision.Load(), led.acks.oneway.Load(), memAcks.Load(), rep, nbad)
}

// startSoakLoad starts the persistent mix and in-memory PO clients against
// base; they stop when stop is closed or orchd dies, then done is closed.
func startSoakLoad(base, prefix string, led *loadLedger, memAcks *atomic.Int64) (stop chan struct{}, done chan struct{}) {
	stop, done = make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		mixedLoad(base, prefix, led, stop, uint64(time.Now().UnixNano()))
	}()
	po := readPO()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodPost, base+"/processes/PurchaseOrder", bytes.NewReader(po))
				req.Header.Set("Content-Type", textXML)
				resp, err := client.Do(req)
				if err != nil {
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err == nil && resp.StatusCode == 200 && bytes.Contains(b, []byte("ACCEPTED")) {
					memAcks.Add(1)
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		client.CloseIdleConnections()
		close(done)
	}()
	return stop, done
}

// saveHeap writes orchd's heap profile (after a collection) to path.
func saveHeap(t *testing.T, debug, path string) {
	t.Helper()
	resp, err := http.Get("http://" + debug + "/debug/pprof/heap?gc=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("soak: heap profile in %s\n", path)
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
