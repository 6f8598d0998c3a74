package main

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// callBody calls its partner once and replies.
const callBody = `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    ` + initOut + `
    <invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="p1"/>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`

// hammered counts the answers of a closed-loop load.
type hammered struct {
	ok, shed, other atomic.Int64
	slowestShed     atomic.Int64 // nanoseconds from sending to a 503
	mu              sync.Mutex
	odd             string // the first answer neither 200 nor 503
}

// hammer posts a request to url from clients goroutines in a closed loop
// until stop returns true (checked between requests) or a minute passes
// (a bound for a hang: the tests wait for the limit to move, however
// slowly a loaded machine moves it). Answers 200 and 503 are counted;
// want must be in every other answer's body, or it counts as other.
func hammer(url, action string, body []byte, clients int, want string, stop func() bool) *hammered {
	var h hammered
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Timeout: 30 * time.Second, Transport: tr}
	deadline := time.Now().Add(time.Minute)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for !stop() && time.Now().Before(deadline) {
				t0 := time.Now()
				r := postAction(client, url, action, body)
				switch {
				case r.status == http.StatusServiceUnavailable:
					h.shed.Add(1)
					d := int64(time.Since(t0))
					for m := h.slowestShed.Load(); d > m && !h.slowestShed.CompareAndSwap(m, d); m = h.slowestShed.Load() {
					}
				case r.status == http.StatusOK || (want != "" && strings.Contains(r.body, want)):
					h.ok.Add(1)
				default:
					h.other.Add(1)
					h.mu.Lock()
					if h.odd == "" {
						h.odd = strconv.Itoa(r.status) + " " + r.body
					}
					h.mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return &h
}

// metricInt reads one series of orchd's /metrics as an integer.
func metricInt(t *testing.T, base, series string) int {
	t.Helper()
	_, m := get(t, base+"/metrics")
	v, err := strconv.ParseFloat(metricValue(t, m, series), 64)
	if err != nil {
		t.Fatalf("%s: %v", series, err)
	}
	return int(v)
}

// scrapeMetric reads one series of orchd's /metrics from any goroutine; it
// reports false when it could not.
func scrapeMetric(client *http.Client, base, series string) (float64, bool) {
	resp, err := client.Get(base + "/metrics")
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// TestAdaptiveAdmission: under --admission adaptive (the default) the limit
// on exchanges in flight follows their latency. With a partner answering
// in 200ms, 32 clients get in at once from a start of 16 and none is
// shed: the limit grows. Then exchanges that only burn CPU (loops stopped
// by --max-steps) come, latency grows, the limit falls back, the excess is
// shed quickly, and every admitted exchange ends as it would have alone.
func TestAdaptiveAdmission(t *testing.T) {
	partner := startSlowPartner(t, 200*time.Millisecond)
	deploy := t.TempDir()
	writeProcess(t, deploy, "Call", partner.addr, callBody, true)
	writeProcess(t, deploy, "Loop", "127.0.0.1:1", runawayBody, true)
	const start, queueWait = 16, 3 * time.Second
	o := startOrchd(t, "--deploy", deploy, "--admission", "adaptive", "--max-inflight", strconv.Itoa(start), "--queue-wait", queueWait.String(),
		"--max-queue", strconv.Itoa(4*start), "--max-steps", "40000")
	client := &http.Client{Timeout: 30 * time.Second}

	// 1. A slow partner: the limit grows, nothing is shed.
	const clients = 32
	h := hammer(o.base+"/processes/Call", `"urn:e2e#run"`, e2eRequest("C", "1"), clients, "", func() bool {
		return partner.maxFlight.Load() >= clients && partner.done.Load() >= 4*clients
	})
	if got := partner.maxFlight.Load(); got < clients {
		t.Errorf("the partner saw at most %d calls at once, want all %d clients'", got, clients)
	}
	if h.shed.Load() != 0 || h.other.Load() != 0 {
		t.Errorf("slow partner: %d shed, %d failed (%s), want none; %d ok", h.shed.Load(), h.other.Load(), h.odd, h.ok.Load())
	}
	grown := metricInt(t, o.base, "orchd_admission_limit")
	if grown < clients {
		t.Fatalf("orchd_admission_limit %d, want at least %d", grown, clients)
	}

	// 2. CPU overload: more clients than the grown limit and
	// --max-queue (4 x 16) take, each exchange burning the CPU, so the
	// queue overflows (a closed loop that fits in the limit and the
	// queue is never shed). Watch the limit and the shed count meanwhile.
	var lowest, shed atomic.Int64
	lowest.Store(int64(grown))
	stop := make(chan struct{})
	var polled sync.WaitGroup
	polled.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if v, ok := scrapeMetric(client, o.base, "orchd_admission_limit"); ok && int64(v) < lowest.Load() {
				lowest.Store(int64(v))
			}
			if v, ok := scrapeMetric(client, o.base, `orchd_shed_total{process="Loop"}`); ok {
				shed.Store(int64(v))
			}
		}
	})
	h = hammer(o.base+"/processes/Loop", `"urn:e2e#run"`, e2eRequest("L", "1"), max(8*start, grown+6*start), "stepBudgetExceeded", func() bool {
		return lowest.Load() <= start && shed.Load() > 0
	})
	close(stop)
	polled.Wait()
	t.Logf("limit grew to %d, fell to %d; %d served, %d shed, slowest shed after %s",
		grown, lowest.Load(), h.ok.Load(), h.shed.Load(), time.Duration(h.slowestShed.Load()))
	if lowest.Load() > start {
		t.Errorf("the limit fell from %d to %d at the lowest, want to its floor %d", grown, lowest.Load(), start)
	}
	// Admitted work is never shed: every other answer is the loop's own
	// step-budget fault.
	if h.shed.Load() == 0 || h.other.Load() != 0 {
		t.Errorf("CPU overload: %d shed, %d other answers (%s), want some shed and no other", h.shed.Load(), h.other.Load(), h.odd)
	}
	// Shed quickly: within --queue-wait, and slack for a busy shared
	// machine (most at once: the queue is full).
	if slowest := time.Duration(h.slowestShed.Load()); slowest > queueWait+5*time.Second {
		t.Errorf("a request was shed after %s, --queue-wait %s", slowest, queueWait)
	}
	if v := metricInt(t, o.base, `orchd_shed_total{process="Loop"}`); int64(v) != h.shed.Load() {
		t.Errorf("orchd_shed_total %d, clients saw %d", v, h.shed.Load())
	}
}

// TestAdaptiveAdmissionMessageWait: an exchange waiting for another
// message to orchd (its reply comes after a later message) gives its share
// of the adaptive limit back while it waits, so under a limit of one the
// later message is admitted, not shed, and the first exchange then ends.
func TestAdaptiveAdmissionMessageWait(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "Later", "127.0.0.1:1", `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes">
      <correlations><correlation set="cs" initiate="yes"/></correlations>
    </receive>
    `+initOut+`
    <receive partnerLink="client" operation="go" variable="more">
      <correlations><correlation set="cs"/></correlations>
    </receive>
    <assign><copy><from>concat('went ', $more.payload/tns:n)</from><to>$out.payload/tns:a</to></copy></assign>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, true)
	o := startOrchd(t, "--deploy", deploy, "--admission", "adaptive", "--max-inflight", "1", "--queue-wait", "50ms")
	client := &http.Client{Timeout: 30 * time.Second}
	url := o.base + "/processes/Later"
	var run response
	done := make(chan struct{})
	go func() {
		defer close(done)
		run = postAction(client, url, `"urn:e2e#run"`, e2eRequest("M1", "1"))
	}()
	waitUntil(t, "the first exchange to wait, giving its share back", func() bool {
		_, m := get(t, o.base+"/metrics")
		return metricValue(t, m, `orchd_exchange_stage_seconds_count{stage="dispatch"}`) == "1" &&
			metricValue(t, m, "orchd_inflight_exchanges") == "0"
	})
	if g := postAction(client, url, `"urn:e2e#go"`, e2eRequest("M1", "7")); g.status != http.StatusAccepted {
		t.Fatalf("the later message: HTTP %d %s, want 202", g.status, g.body)
	}
	<-done
	if run.status != http.StatusOK || !strings.Contains(run.body, "went 7") {
		t.Errorf("run: HTTP %d %s, want the reply the later message drove", run.status, run.body)
	}
}
