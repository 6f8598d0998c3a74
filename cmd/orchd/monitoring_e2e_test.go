package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// monitoring is the folder of the dashboard and the alert rules.
const monitoring = "../../docs/monitoring"

// needTool is the path of a tool the test needs: a test without it
// skips, unless CI is set (.ci/run sets ORCHD_CI and installs it), where
// it fails.
func needTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" || os.Getenv("ORCHD_CI") != "" {
		t.Fatalf("%s not found and this is CI (CI or ORCHD_CI set): install Debian's %s package (.ci/run does)", name, pkg)
	}
	t.Skipf("%s not found: install Debian's %s package to run this test", name, pkg)
	return ""
}

// The alert rules are valid (promtool check rules) and fire as their
// unit tests say (promtool test rules).
func TestMonitoringRulesPromtool(t *testing.T) {
	promtool := needTool(t, "promtool", "prometheus")
	for _, args := range [][]string{
		{"check", "rules", "orchd-alerts.yml"},
		{"test", "rules", "orchd-alerts.test.yml"},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = monitoring
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// dashboardQueries are the PromQL expressions of the dashboard's
// panels, by panel title.
func dashboardQueries(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(monitoring, "orchd-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("the dashboard: %v", err)
	}
	out := map[string][]string{}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			if tg.Expr == "" {
				t.Fatalf("panel %q has a target without expr", p.Title)
			}
			out[p.Title] = append(out[p.Title], tg.Expr)
		}
	}
	if len(out) < 10 {
		t.Fatalf("the dashboard has %d panels with queries", len(out))
	}
	return out
}

// startPrometheus runs prometheus scraping target every second with the
// alert rules loaded, until the test ends; it returns its base URL.
func startPrometheus(t *testing.T, bin, target string) string {
	t.Helper()
	dir := t.TempDir()
	rules, err := filepath.Abs(filepath.Join(monitoring, "orchd-alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - %s
scrape_configs:
  - job_name: orchd
    static_configs:
      - targets: ['%s']
`, rules, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	var logs bytes.Buffer
	var mu sync.Mutex
	cmd.Stdout, cmd.Stderr = &lockedWriter{w: &logs, mu: &mu}, &lockedWriter{w: &logs, mu: &mu}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	base := "http://" + addr
	if !eventually(func() bool {
		r, err := http.Get(base + "/-/ready")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == 200
	}) {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("prometheus did not get ready:\n%s", logs.String())
	}
	return base
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// promQuery runs an instant query; it returns the samples' values.
func promQuery(t *testing.T, base, q string) ([]float64, error) {
	t.Helper()
	r, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer r.Body.Close()
	var a struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&a); err != nil {
		return nil, err
	}
	if a.Status != "success" {
		return nil, fmt.Errorf("%s", a.Error)
	}
	var out []float64
	for _, s := range a.Data.Result {
		str, _ := s.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return nil, fmt.Errorf("value %v: %w", s.Value[1], err)
		}
		out = append(out, v)
	}
	return out, nil
}

// A real Prometheus scrapes a running orchd serving an in-memory and a
// persistent process (with a partner that is down) with an events
// listener: every query of the
// dashboard returns data (a number, not only NaN), and every alert rule
// evaluates without error.
func TestMonitoringDashboardQueries(t *testing.T) {
	prom := needTool(t, "prometheus", "prometheus")
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	writeProcess(t, deploy, "Kept", erp, `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    <reply partnerLink="client" operation="run" variable="out"/>
    <wait for="'PT2S'"/>
  </sequence>`, false)
	// Stuck suspends on its dead partner: an incident to count.
	writeProcess(t, deploy, "Stuck", deadAddr(t), `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    <reply partnerLink="client" operation="run" variable="out"/>
    <invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="p1"/>
  </sequence>`, false)
	o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir(), "--events-file", filepath.Join(t.TempDir(), "events.jsonl"))
	queries := dashboardQueries(t)
	base := startPrometheus(t, prom, strings.TrimPrefix(o.base, "http://"))

	// Traffic while Prometheus scrapes: purchase orders (ok), junk (a
	// client error), the persistent process (a checkpoint each).
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	po := readWorkload(t, "po-request.xml")
	go func() {
		defer wg.Done()
		client := &http.Client{Timeout: 10 * time.Second}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(40 * time.Millisecond):
			}
			_ = postAction(client, o.base+"/processes/PurchaseOrder", poAction, po)
			if i%4 == 0 {
				_ = postAction(client, o.base+"/processes/PurchaseOrder", poAction, []byte("junk"))
				_ = postAction(client, o.base+"/processes/Kept", `"urn:e2e#run"`, e2eRequest(strconv.Itoa(i), "1"))
			}
			if i%25 == 0 {
				_ = postAction(client, o.base+"/processes/Stuck", `"urn:e2e#run"`, e2eRequest(strconv.Itoa(i), "1"))
			}
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
	}()

	const rateWindow = "10s"
	subst := strings.NewReplacer("$__rate_interval", rateWindow, "$process", ".*")
	// Scraped long enough for a rate over rateWindow: wait until every
	// query has data, at most 20 s.
	var missing []string
	deadline := time.Now().Add(20 * time.Second)
	for {
		missing = missing[:0]
		for title, exprs := range queries {
			for _, e := range exprs {
				q := subst.Replace(e)
				vs, err := promQuery(t, base, q)
				if err != nil {
					t.Fatalf("panel %q: %s: %v", title, q, err)
				}
				if !hasNumber(vs) {
					missing = append(missing, fmt.Sprintf("%s: %s: %v", title, q, vs))
				}
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if len(missing) > 0 {
		t.Errorf("dashboard queries without data:\n%s", strings.Join(missing, "\n"))
	}
	// Partner series carry the process.
	if vs, err := promQuery(t, base, `orchd_partner_invocations_total{process="PurchaseOrder",partner="crm",outcome="ok"}`); err != nil || !hasNumber(vs) || vs[0] == 0 {
		t.Errorf("the CRM calls of PurchaseOrder: %v %v", vs, err)
	}

	// Every rule was evaluated, without error.
	r, err := http.Get(base + "/api/v1/rules")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var rules struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name      string `json:"name"`
					Health    string `json:"health"`
					LastError string `json:"lastError"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&rules); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range rules.Data.Groups {
		for _, rl := range g.Rules {
			n++
			if rl.Health != "ok" {
				t.Errorf("rule %s: health %q %s", rl.Name, rl.Health, rl.LastError)
			}
		}
	}
	if n < 6 {
		t.Errorf("prometheus loaded %d rules", n)
	}
}

// hasNumber reports whether vs holds a value that is not NaN.
func hasNumber(vs []float64) bool {
	for _, v := range vs {
		if !math.IsNaN(v) {
			return true
		}
	}
	return false
}
