package main

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/mgmt"
)

// The management backend tests run a real server (runServer, in this
// process, so that the test holds its mgmt.Backend), call its processes
// over SOAP on loopback, and check what the backend says and does.

// mgmtServer is a running server and its backend.
type mgmtServer struct {
	b      *backend
	base   string
	deploy string
	logs   *lockedBuffer
}

// startMgmt serves deploy (polled only if args say so) until the test
// ends.
func startMgmt(t *testing.T, deploy string, args ...string) *mgmtServer {
	t.Helper()
	fs, cfg := serveFlags(io.Discard)
	args = append([]string{"--listen", "127.0.0.1:0", "--deploy", deploy, "--deploy-poll", "0", "--data", filepath.Join(t.TempDir(), "data")}, args...)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	s := &mgmtServer{deploy: deploy, logs: &lockedBuffer{}}
	log := slog.New(slog.NewTextHandler(s.logs, nil))
	type ready struct {
		addr net.Addr
		b    *backend
	}
	up := make(chan ready, 1)
	cfg.started = func(addr net.Addr, b *backend) { up <- ready{addr, b} }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runServer(ctx, cfg, log) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	select {
	case r := <-up:
		s.b, s.base = r.b, "http://"+r.addr.String()
	case err := <-done:
		done <- err // for the cleanup
		t.Fatalf("server stopped before serving: %v\n%s", err, s.logs)
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not start\n%s", s.logs)
	}
	return s
}

// bundleZip writes bundle name with the versioned process tagged tag (or
// body, when tag is empty) and returns it as a zip archive whose one top
// folder holds it.
func bundleZip(t *testing.T, name, tag, body string) []byte {
	t.Helper()
	dir := t.TempDir()
	if tag != "" {
		body = strings.ReplaceAll(versionedBody, "TAG", tag)
	}
	writeProcess(t, dir, name, "127.0.0.1:1", body, true)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func (s *mgmtServer) versions(t *testing.T, name string) []mgmt.Process {
	t.Helper()
	ps, err := s.b.Processes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []mgmt.Process
	for _, p := range ps {
		if p.Local == name {
			out = append(out, p)
		}
	}
	return out
}

// states sums up the versions of name: "2:active 1:retired".
func (s *mgmtServer) states(t *testing.T, name string) string {
	t.Helper()
	var parts []string
	for _, p := range s.versions(t, name) {
		parts = append(parts, strings.Join([]string{strconv.Itoa(p.Version), p.State}, ":"))
	}
	return strings.Join(parts, " ")
}

func TestMgmtProcessStatsAndOutline(t *testing.T) {
	deploy := t.TempDir()
	writeVersion(t, deploy, "hd", "V1", true)
	s := startMgmt(t, deploy, "--sample-every", "1")
	ps := s.versions(t, "hd")
	if len(ps) != 1 {
		t.Fatalf("versions of hd: %+v", ps)
	}
	p := ps[0]
	if p.State != "active" || p.Version < 1 || p.Name != "{urn:e2e:process}hd" || p.Bundle != "hd" || !p.InMemory || p.Deployed.IsZero() || p.SampleEvery != 1 {
		t.Errorf("process: %+v", p)
	}
	if len(p.Endpoints) != 1 || p.Endpoints[0].Path != "/processes/hd" || p.Endpoints[0].SOAP != "1.1" || !strings.Contains(strings.Join(p.Endpoints[0].Operations, ","), "run") {
		t.Errorf("endpoints: %+v", p.Endpoints)
	}
	if p.Stats != (mgmt.Stats{}) {
		t.Errorf("stats before any call: %+v", p.Stats)
	}
	const n = 3
	for i := 0; i < n; i++ {
		id := "s" + strconv.Itoa(i)
		if got := answer(t, s.base, "hd", id, "1"); got != "V1-started-"+id {
			t.Fatalf("start %s: %q", id, got)
		}
		if got := answer(t, s.base, "hd", id, "2"); got != "V1-done-2" {
			t.Fatalf("finish %s: %q", id, got)
		}
	}
	// The reply leaves before the run ends: the counters follow soon.
	var st mgmt.Stats
	eventually(func() bool { st = s.versions(t, "hd")[0].Stats; return st.Completed == n && st.Exchanges == 2*n })
	if st.Started != n || st.Completed != n || st.Faulted != 0 || st.Exchanges != 2*n || st.ExchangeNanos == 0 {
		t.Errorf("stats after %d instances of 2 exchanges: %+v", n, st)
	}
	var full *mgmt.Process
	eventually(func() bool {
		var err error
		full, err = s.b.Process(context.Background(), "hd", 0)
		return err == nil && full.Outline != nil && full.Outline.Count == n
	})
	o := full.Outline
	if o == nil || o.Kind != "process" || o.Name != "hd" || o.Count != n || o.Nanos == 0 {
		t.Fatalf("outline root: %+v", o)
	}
	if len(o.Children) != 1 || o.Children[0].Kind != "sequence" {
		t.Fatalf("outline under the process: %+v", o.Children)
	}
	var kinds []string
	for _, a := range o.Children[0].Children {
		kinds = append(kinds, a.Kind)
		if a.Count != n || !strings.HasPrefix(a.Position, "hd.bpel:") {
			t.Errorf("%s at %s: count %d (want %d), %d ns", a.Kind, a.Position, a.Count, n, a.Nanos)
		}
	}
	// Time nests: a sequence's runs cover its children's (its last
	// child's too, to which it hands its frame), the process's its body's.
	var sum uint64
	for _, a := range o.Children[0].Children {
		sum += a.Nanos
	}
	if seq := o.Children[0]; seq.Count != n || seq.Nanos < sum || o.Nanos < seq.Nanos {
		t.Errorf("times do not nest: process %d ns, sequence %d ns (count %d), its children %d ns", o.Nanos, seq.Nanos, seq.Count, sum)
	}
	if got := strings.Join(kinds, " "); got != "receive assign assign reply receive assign reply" {
		t.Errorf("sequence children: %s", got)
	}
	if _, err := s.b.Process(context.Background(), "hd", 99); !errors.Is(err, mgmt.ErrNotFound) {
		t.Errorf("version 99: %v", err)
	}
	if _, err := s.b.Process(context.Background(), "{urn:other}hd", 0); !errors.Is(err, mgmt.ErrNotFound) {
		t.Errorf("other namespace: %v", err)
	}
	if _, err := s.b.Process(context.Background(), "{urn:e2e:process}hd", 0); err != nil {
		t.Errorf("by {ns}local: %v", err)
	}
}

func TestMgmtOutlineUnsampled(t *testing.T) {
	deploy := t.TempDir()
	writeVersion(t, deploy, "hd", "V1", true)
	s := startMgmt(t, deploy, "--sample-every", "0")
	for _, want := range []string{"V1-started-u", "V1-done-2"} {
		if got := answer(t, s.base, "hd", "u", strings.TrimPrefix(want, "V1-done-")); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	var p *mgmt.Process
	eventually(func() bool {
		var err error
		p, err = s.b.Process(context.Background(), "hd", 0)
		return err == nil && p.Stats.Completed == 1
	})
	if p == nil || p.Stats.Completed != 1 || p.Outline == nil || p.Outline.Count != 0 || p.Outline.Children[0].Children[0].Count != 0 {
		t.Errorf("sampling off: stats %+v, outline %+v", p.Stats, p.Outline)
	}
}

func TestMgmtDeployUndeploy(t *testing.T) {
	s := startMgmt(t, t.TempDir())
	ctx := context.Background()
	if r := callRun(t, s.base, "hd", "a", "1"); r.status != http.StatusNotFound {
		t.Fatalf("before the deploy: %d %s", r.status, r.body)
	}
	b, err := s.b.Deploy(ctx, "hd", bundleZip(t, "hd", "V1", ""))
	if err != nil {
		t.Fatalf("deploy: %v\n%s", err, s.logs)
	}
	if b.State != "deployed" || b.Version < 1 || len(b.Processes) != 1 || b.Processes[0] != "{urn:e2e:process}hd" || b.Deployed.IsZero() {
		t.Errorf("bundle after the deploy: %+v", b)
	}
	// Deployed at once: no poll needed.
	if got := answer(t, s.base, "hd", "a", "1"); got != "V1-started-a" {
		t.Fatalf("after the deploy: %q", got)
	}
	if !exists(filepath.Join(s.deploy, "hd.deployed")) || !exists(filepath.Join(s.deploy, "hd", "deploy.xml")) {
		t.Errorf("no marker or no bundle folder after the deploy")
	}

	// A broken bundle: the errors come back with file:line, V1 serves on.
	broken := `<sequence><receive partnerLink="client" operation="run" variable="nope" createInstance="yes"/></sequence>`
	b, err = s.b.Deploy(ctx, "hd", bundleZip(t, "hd", "", broken))
	if !errors.Is(err, mgmt.ErrInvalid) || b == nil || b.State != "failed" {
		t.Fatalf("broken deploy: %v, bundle %+v", err, b)
	}
	if len(b.Errors) == 0 || !strings.Contains(b.Errors[0], "hd.bpel:") || !strings.Contains(strings.Join(b.Errors, "\n"), "nope") {
		t.Errorf("errors of the broken bundle: %q", b.Errors)
	}
	if got := answer(t, s.base, "hd", "b", "1"); got != "V1-started-b" {
		t.Fatalf("after the broken deploy: %q", got)
	}
	bs, err := s.b.Bundles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || bs[0].Name != "hd" || bs[0].State != "failed" || len(bs[0].Errors) == 0 || bs[0].Version != b.Version || len(bs[0].Processes) != 1 {
		t.Errorf("bundles after the broken deploy: %+v", bs)
	}

	// Archives that are no bundle, and bad names, change nothing.
	for _, tc := range []struct {
		name string
		zip  []byte
	}{
		{"hd", []byte("not a zip")},
		{"hd", func() []byte {
			var buf bytes.Buffer
			zw := zip.NewWriter(&buf)
			w, _ := zw.Create("../escape/deploy.xml")
			_, _ = w.Write([]byte("<deploy/>"))
			_ = zw.Close()
			return buf.Bytes()
		}()},
		{"../hd", bundleZip(t, "hd", "V9", "")},
		{"..", bundleZip(t, "hd", "V9", "")},
		{".hidden", bundleZip(t, "hd", "V9", "")},
		{"a/b", bundleZip(t, "hd", "V9", "")},
	} {
		if _, err := s.b.Deploy(ctx, tc.name, tc.zip); !errors.Is(err, mgmt.ErrInvalid) {
			t.Errorf("deploy %q: %v, want ErrInvalid", tc.name, err)
		}
	}
	if exists(filepath.Join(filepath.Dir(s.deploy), "escape")) {
		t.Errorf("a zip-slip entry was written outside the deploy directory")
	}
	if got := answer(t, s.base, "hd", "c", "1"); got != "V1-started-c" {
		t.Fatalf("after the refused archives: %q", got)
	}

	// A good redeploy serves the new version at once.
	b, err = s.b.Deploy(ctx, "hd", bundleZip(t, "hd", "V2", ""))
	if err != nil || b.State != "deployed" || len(b.Errors) != 0 {
		t.Fatalf("redeploy: %v %+v", err, b)
	}
	if got := answer(t, s.base, "hd", "d", "1"); got != "V2-started-d" {
		t.Fatalf("after the redeploy: %q", got)
	}
	// The instance started on V1 finishes there.
	if got := answer(t, s.base, "hd", "a", "5"); got != "V1-done-5" {
		t.Errorf("V1's instance: %q", got)
	}

	if err := s.b.Undeploy(ctx, "hd"); err != nil {
		t.Fatal(err)
	}
	if r := callRun(t, s.base, "hd", "e", "1"); r.status != http.StatusNotFound {
		t.Errorf("after the undeploy: %d %s", r.status, r.body)
	}
	if exists(filepath.Join(s.deploy, "hd")) || exists(filepath.Join(s.deploy, "hd.deployed")) {
		t.Errorf("folder or marker left after the undeploy")
	}
	if bs, _ := s.b.Bundles(ctx); len(bs) != 0 {
		t.Errorf("bundles after the undeploy: %+v", bs)
	}
	if err := s.b.Undeploy(ctx, "hd"); !errors.Is(err, mgmt.ErrNotFound) {
		t.Errorf("second undeploy: %v", err)
	}
	if ents, _ := os.ReadDir(s.deploy); len(ents) != 0 {
		t.Errorf("the deploy directory holds leftovers: %v", ents)
	}
}

func TestMgmtDeployedBundleSurvivesPolling(t *testing.T) {
	// The poller sees an API deploy as done: no second version.
	s := startMgmt(t, t.TempDir(), "--deploy-poll", "20ms")
	if _, err := s.b.Deploy(context.Background(), "hd", bundleZip(t, "hd", "V1", "")); err != nil {
		t.Fatal(err)
	}
	// A bundle copied in later is deployed by a poll: by then the
	// poller has seen hd too.
	writeVersion(t, s.deploy, "other", "O1", true)
	if !eventually(func() bool { return answer(t, s.base, "other", "o", "1") == "O1-started-o" }) {
		t.Fatalf("the poller did not deploy other\n%s", s.logs)
	}
	if got := s.states(t, "hd"); got != "1:active" {
		t.Errorf("versions of hd after polls: %s\n%s", got, s.logs)
	}
}

func TestMgmtSetActive(t *testing.T) {
	s := startMgmt(t, t.TempDir())
	ctx := context.Background()
	for _, tag := range []string{"V1", "V2"} {
		if _, err := s.b.Deploy(ctx, "hd", bundleZip(t, "hd", tag, "")); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.states(t, "hd"); got != "2:active 1:retired" {
		t.Fatalf("after two deploys: %s", got)
	}
	steps := []struct {
		version int
		active  bool
		states  string
		serves  string // the tag answering, "" for none
	}{
		{1, true, "2:retired 1:active", "V1"},
		{1, true, "2:retired 1:active", "V1"}, // again: nothing changes
		{1, false, "2:retired 1:retired", ""},
		{2, true, "2:active 1:retired", "V2"},
		{0, false, "2:retired 1:retired", ""}, // 0: the active one
		{1, true, "2:retired 1:active", "V1"},
	}
	for i, st := range steps {
		if err := s.b.SetActive(ctx, "hd", st.version, st.active); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got := s.states(t, "hd"); got != st.states {
			t.Errorf("step %d: versions %s, want %s", i, got, st.states)
		}
		r := callRun(t, s.base, "hd", "x"+strconv.Itoa(i), "1")
		switch {
		case st.serves == "" && r.status != http.StatusNotFound:
			t.Errorf("step %d: nothing should serve, got %d %s", i, r.status, r.body)
		case st.serves != "" && between(r.body, "<tns:a>", "</tns:a>") != st.serves+"-started-x"+strconv.Itoa(i):
			t.Errorf("step %d: want %s serving, got %d %s", i, st.serves, r.status, r.body)
		}
	}
	if err := s.b.SetActive(ctx, "hd", 7, true); !errors.Is(err, mgmt.ErrNotFound) {
		t.Errorf("unknown version: %v", err)
	}
	if err := s.b.SetActive(ctx, "nope", 0, true); !errors.Is(err, mgmt.ErrNotFound) {
		t.Errorf("unknown process: %v", err)
	}
}

func TestMgmtTimeline(t *testing.T) {
	deploy := t.TempDir()
	writeVersion(t, deploy, "hd", "V1", true)
	s := startMgmt(t, deploy, "--timeline", "1000")
	if !s.b.Streaming() {
		t.Fatal("no stream with --timeline")
	}
	live, cancel := s.b.Subscribe()
	defer cancel()
	answer(t, s.base, "hd", "t1", "1")
	answer(t, s.base, "hd", "t1", "2")
	var id string
	var kinds []string
	timeout := time.After(10 * time.Second)
	for id == "" || kinds[len(kinds)-1] != "instanceCompleted" {
		select {
		case ev, ok := <-live:
			if !ok {
				t.Fatal("the subscription was closed")
			}
			id = ev.Instance
			kinds = append(kinds, ev.Kind.String())
		case <-timeout:
			t.Fatalf("the subscriber got %v and no instanceCompleted", kinds)
		}
	}
	if kinds[0] != "instanceCreated" {
		t.Errorf("first event streamed: %s", kinds[0])
	}
	var tl []events.Event
	if !eventually(func() bool { tl = s.b.Timeline(id); return len(tl) == len(kinds) }) {
		t.Fatalf("timeline of %s: %d events, the stream had %d", id, len(tl), len(kinds))
	}
	for i, ev := range tl {
		if ev.Kind.String() != kinds[i] || ev.Time.IsZero() {
			t.Errorf("timeline event %d: %+v, streamed %s", i, ev, kinds[i])
		}
	}
	if tl[len(tl)-1].Duration == 0 {
		t.Errorf("instanceCompleted carries no duration: %+v", tl[len(tl)-1])
	}
	corr := false
	for _, ev := range tl {
		if ev.Kind == events.CorrelationSetInitialized {
			corr = ev.CorrelationSet != "" && strings.Contains(ev.Value, "t1")
			if !corr {
				t.Errorf("correlation event without its set and value: %+v", ev)
			}
		}
	}
	if !corr {
		t.Errorf("no correlationSetInitialized in the timeline %v", kinds)
	}
	if got := s.b.Timeline("no-such-instance"); got == nil || len(got) != 0 {
		t.Errorf("timeline of an unknown instance: %v", got)
	}
}

func TestMgmtNoTimeline(t *testing.T) {
	deploy := t.TempDir()
	writeVersion(t, deploy, "hd", "V1", true)
	s := startMgmt(t, deploy)
	live, cancel := s.b.Subscribe()
	defer cancel()
	if _, ok := <-live; ok || s.b.Streaming() {
		t.Error("a stream without --timeline")
	}
	answer(t, s.base, "hd", "n1", "1")
	if tl := s.b.Timeline("m1"); len(tl) != 0 {
		t.Errorf("a timeline without --timeline: %v", tl)
	}
}
