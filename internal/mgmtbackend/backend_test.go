package mgmtbackend_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/echotest"
	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/mgmtbackend"
	"github.com/orchd/orchd/internal/mgmttest"
)

// The backend's tests run it over a real engine, hot deployer and SOAP
// front door on loopback, with the echo bundle (internal/echotest: run
// answers "TAG-<id>").

// server is a backend over a running engine and front door.
type server struct {
	b   *mgmtbackend.Backend
	url string
}

func newServer(t *testing.T, timeline *events.Timeline) *server {
	t.Helper()
	b, s := mgmttest.Backend(t, timeline)
	return &server{b: b, url: s.SOAP}
}

func TestBackendProcessesAndCounters(t *testing.T) {
	s := newServer(t, nil)
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c"} {
		if body := echotest.Call(t, s.url, id); body != "one-"+id {
			t.Fatalf("run(%s) answered %s", id, body)
		}
	}
	// An exchange is counted once its reply is written, after the
	// client may have read it.
	var ps []mgmt.Process
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		var err error
		if ps, err = s.b.Processes(ctx); err != nil {
			t.Fatal(err)
		}
		if len(ps) != 1 || ps[0].Stats.Exchanges >= 3 || time.Now().After(deadline) {
			break
		}
	}
	if len(ps) != 1 || ps[0].Local != "Echo" || ps[0].Version != 1 || ps[0].State != "active" || ps[0].Stats.Exchanges != 3 {
		t.Fatalf("processes %+v, want Echo version 1 active with 3 exchanges", ps)
	}
	local, err := s.b.LocalProcesses(ctx)
	if err != nil || len(local) != 1 || local[0].Fingerprint != ps[0].Fingerprint {
		t.Fatalf("local processes %+v, %v; want the same one version", local, err)
	}
	if p, err := s.b.Process(ctx, "Echo", 0); err != nil || p.Version != 1 || len(p.Endpoints) != 1 {
		t.Fatalf("process Echo: %+v, %v", p, err)
	}
	if _, err := s.b.Process(ctx, "Echo", 7); !errors.Is(err, mgmt.ErrNotFound) {
		t.Fatalf("process Echo version 7: %v, want ErrNotFound", err)
	}

	// Without a cluster the cluster is this node, with its counters.
	c, err := s.b.Cluster(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "" || len(c.Nodes) != 1 || !c.Nodes[0].Self || c.Nodes[0].ID != "local" || c.Nodes[0].Stats == nil ||
		c.Nodes[0].Stats.Exchanges != 3 || c.Nodes[0].Stats.InFlight != -1 || len(c.Nodes[0].Versions) != 1 {
		t.Fatalf("cluster %+v (node stats %+v), want this node alone with 3 exchanges", c, c.Nodes[0].Stats)
	}
}

func TestBackendBundlesAndVersions(t *testing.T) {
	s := newServer(t, nil)
	ctx := context.Background()
	bs, err := s.b.Bundles(ctx)
	if err != nil || len(bs) != 1 || bs[0].Name != "echo" || bs[0].State != "deployed" || bs[0].Version != 1 {
		t.Fatalf("bundles %+v, %v; want echo deployed at version 1", bs, err)
	}
	if _, err := s.b.Deploy(ctx, "../x", []byte("PK")); !errors.Is(err, mgmt.ErrInvalid) {
		t.Fatalf("Deploy of a bad name: %v, want ErrInvalid", err)
	}
	if err := s.b.SetActive(ctx, "Echo", 1, false); err != nil {
		t.Fatal(err)
	}
	if ps, _ := s.b.Processes(ctx); len(ps) != 1 || ps[0].State == "active" {
		t.Fatalf("processes %+v after retiring version 1", ps)
	}
	if err := s.b.Undeploy(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	if err := s.b.Undeploy(ctx, "echo"); !errors.Is(err, mgmt.ErrNotFound) {
		t.Fatalf("second Undeploy: %v, want ErrNotFound", err)
	}
}

func TestBackendInstanceErrors(t *testing.T) {
	s := newServer(t, nil)
	ctx := context.Background()
	page, err := s.b.Instances(ctx, mgmt.Query{})
	if err != nil || page.Instances == nil {
		t.Fatalf("instances %+v, %v; want an empty page, not nil", page, err)
	}
	if _, err := s.b.Instance(ctx, "m999"); !errors.Is(err, mgmt.ErrNotFound) {
		t.Fatalf("Instance(m999): %v, want ErrNotFound", err)
	}
	if err := s.b.Act(ctx, "m999", mgmt.Terminate); !errors.Is(err, mgmt.ErrNotFound) {
		t.Fatalf("Act(m999): %v, want ErrNotFound", err)
	}
}

func TestBackendWithoutTimeline(t *testing.T) {
	s := newServer(t, nil)
	if s.b.Streaming() {
		t.Fatal("Streaming without a timeline")
	}
	if got := s.b.Timeline("m1"); got == nil || len(got) != 0 {
		t.Fatalf("Timeline = %#v, want empty, not nil", got)
	}
	ch, cancel := s.b.Subscribe()
	defer cancel()
	if _, ok := <-ch; ok {
		t.Fatal("an event without a timeline")
	}
}

func TestBackendWithTimeline(t *testing.T) {
	tl := events.NewTimeline(events.TimelineOptions{Total: 100, PerInstance: 10})
	defer tl.Close()
	s := newServer(t, tl)
	if !s.b.Streaming() {
		t.Fatal("not Streaming with a timeline")
	}
	ch, cancel := s.b.Subscribe()
	cancel()
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatal("an event on a cancelled subscription")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled subscription's channel stays open")
	}
}

// TestBackendTimelineJSON pins the JSON of an instance's timeline as the
// management API answers it (mgmt.InstanceDetail): an event of the
// timeline does not repeat the process, version and instance the detail
// names.
func TestBackendTimelineJSON(t *testing.T) {
	tl := events.NewTimeline(events.TimelineOptions{Total: 100, PerInstance: 10})
	defer tl.Close()
	s := newServer(t, tl)
	at := time.Date(2026, 12, 5, 3, 4, 5, 0, time.UTC)
	err := tl.Deliver(context.Background(), []events.Event{
		{Kind: events.InstanceCreated, Time: at, Process: "{urn:x}P", Version: 2, Instance: "t1"},
		{Kind: events.PartnerAnswered, Time: at, Process: "{urn:x}P", Instance: "t1", Activity: "invoke", Name: "call",
			Position: "p.bpel:9", Partner: "pl", Operation: "op", Fault: "{urn:x}f", Duration: time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(mgmt.InstanceDetail{Timeline: s.b.Timeline("t1")})
	if err != nil {
		t.Fatal(err)
	}
	want := `"timeline":[{"kind":"instanceCreated","time":"2026-12-05T03:04:05Z"},` +
		`{"kind":"partnerAnswered","time":"2026-12-05T03:04:05Z","activity":"invoke","name":"call",` +
		`"position":"p.bpel:9","partner":"pl","operation":"op","fault":"{urn:x}f","durationNs":1000000000}]`
	if !strings.Contains(string(b), want) {
		t.Errorf("instance detail:\n%s\nhas no\n%s", b, want)
	}
}
