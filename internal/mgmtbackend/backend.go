package mgmtbackend

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orchd/orchd/internal/clusterview"
	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/hotdeploy"
	"github.com/orchd/orchd/internal/humantask"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process"
)

// Backend implements mgmt.Backend, what the management API and the
// console operate on, over the engine (processes, versions, instances),
// the deployer (bundles of --deploy) and the timeline (--timeline: the
// recent events of each instance and the live stream).
type Backend struct {
	engine   *process.Engine
	deploy   *hotdeploy.Deployer
	timeline *events.Timeline  // nil without --timeline
	cv       *clusterview.View // nil without --cluster
	counters *counters
	tasks    *humantask.Engine // nil: no task routes
}

var (
	_ mgmt.Backend        = (*Backend)(nil)
	_ mgmt.ClusterBackend = (*Backend)(nil)
	_ clusterview.Local   = (*Backend)(nil)
	_ mgmt.TaskBackend    = (*Backend)(nil)
)

// Options configure a Backend.
type Options struct {
	// Engine runs the processes and knows their instances.
	Engine *process.Engine
	// Deployer deploys the bundles of --deploy and uploads.
	Deployer *hotdeploy.Deployer
	// Timeline keeps instances' recent events and streams them; nil
	// means none (no --timeline).
	Timeline *events.Timeline
	// Gatherer is read for the in-flight exchanges gauge of this node's
	// counters; nil leaves it unknown (-1).
	Gatherer prometheus.Gatherer
	// Tasks is the task engine the task routes act on; nil serves none.
	Tasks *humantask.Engine
}

// New returns the management backend of a running server.
func New(o Options) *Backend {
	return &Backend{engine: o.Engine, deploy: o.Deployer, timeline: o.Timeline, tasks: o.Tasks,
		counters: &counters{started: time.Now(), gather: o.Gatherer}}
}

// UseCluster makes the backend answer for the whole cluster through cv
// (built over this backend as its Local part); call it before serving.
func (b *Backend) UseCluster(cv *clusterview.View) { b.cv = cv }

// Processes implements mgmt.Backend.
// In a cluster it sums every node's versions (clusterProcesses).
func (b *Backend) Processes(ctx context.Context) ([]mgmt.Process, error) {
	if b.cv != nil {
		return b.cv.Processes(ctx)
	}
	return b.engine.Versions(), nil
}

// LocalProcesses implements mgmt.ClusterBackend: this node's versions.
func (b *Backend) LocalProcesses(context.Context) ([]mgmt.Process, error) {
	return b.engine.Versions(), nil
}

// Process implements mgmt.Backend.
func (b *Backend) Process(_ context.Context, name string, version int) (*mgmt.Process, error) {
	return b.engine.Version(name, version)
}

// SetActive implements mgmt.Backend.
func (b *Backend) SetActive(ctx context.Context, name string, version int, active bool) error {
	return b.deploy.SetActive(ctx, name, version, active)
}

// Bundles implements mgmt.Backend.
func (b *Backend) Bundles(context.Context) ([]mgmt.Bundle, error) {
	return b.deploy.Bundles()
}

// Deploy implements mgmt.Backend.
func (b *Backend) Deploy(_ context.Context, name string, zip []byte) (*mgmt.Bundle, error) {
	return b.deploy.DeployZip(name, zip)
}

// Undeploy implements mgmt.Backend.
func (b *Backend) Undeploy(_ context.Context, name string) error {
	return b.deploy.Undeploy(name)
}

// Instances implements mgmt.Backend.
func (b *Backend) Instances(ctx context.Context, q mgmt.Query) (*mgmt.Page, error) {
	if b.cv != nil {
		return b.cv.Instances(ctx, q)
	}
	return b.engine.QueryInstances(ctx, q)
}

// Instance implements mgmt.Backend: the engine's description, with the
// instance's recent events from the timeline.
func (b *Backend) Instance(ctx context.Context, id string) (*mgmt.InstanceDetail, error) {
	if b.cv != nil {
		return b.cv.Instance(ctx, id)
	}
	return b.LocalInstance(ctx, id)
}

// LocalInstance implements clusterview.Local: an instance this node's
// engine knows, with its timeline.
func (b *Backend) LocalInstance(ctx context.Context, id string) (*mgmt.InstanceDetail, error) {
	d, err := b.engine.InstanceDetail(ctx, id)
	if err != nil {
		return nil, err
	}
	d.Timeline = b.Timeline(id)
	return d, nil
}

// Act implements mgmt.Backend.
func (b *Backend) Act(ctx context.Context, id string, a mgmt.Action) error {
	if b.cv != nil {
		return b.cv.Act(ctx, id, a)
	}
	return b.engine.Act(ctx, id, a)
}

// LocalInstances implements clusterview.Local.
func (b *Backend) LocalInstances(ctx context.Context, q mgmt.Query) (*mgmt.Page, error) {
	return b.engine.QueryInstances(ctx, q)
}

// LocalAct implements clusterview.Local.
func (b *Backend) LocalAct(ctx context.Context, id string, a mgmt.Action) error {
	return b.engine.Act(ctx, id, a)
}

// Cluster implements mgmt.ClusterBackend: without --cluster, this node
// alone.
func (b *Backend) Cluster(ctx context.Context, local bool) (*mgmt.Cluster, error) {
	if b.cv != nil {
		return b.cv.Cluster(ctx, local)
	}
	return &mgmt.Cluster{Nodes: []mgmt.Node{b.LocalNode()}}, nil
}

// LocalNode implements clusterview.Local: this node's counters and
// served versions, as "local" (the cluster view names it).
func (b *Backend) LocalNode() mgmt.Node {
	n := mgmt.Node{ID: "local", Self: true}
	var ex uint64
	for _, p := range b.engine.Versions() {
		ex += p.Stats.Exchanges
	}
	n.Versions = b.engine.VersionIDs() // as the membership publishes them
	n.Stats = b.counters.sample(ex)
	return n
}

// Timeline returns the events kept of instance id, oldest first: empty
// (not nil) when none is kept or there is no --timeline. The events
// leave out what the instance's detail already names (process, version,
// instance).
func (b *Backend) Timeline(id string) []events.Event {
	out := []events.Event{}
	if b.timeline == nil {
		return out
	}
	for _, ev := range b.timeline.Events(id) {
		ev.Process, ev.Version, ev.Instance = "", 0, ""
		out = append(out, ev)
	}
	return out
}

// Subscribe is the live event stream, for the API's and the console's
// GET /api/v1/events (not part of mgmt.Backend): every instance event
// from now on, until cancel is called. The channel is bounded: a
// subscriber that does not keep up has its channel closed (it may
// subscribe again), and it never slows the runtime. Without --timeline
// the channel is closed at once: Streaming says whether there is a
// stream.
func (b *Backend) Subscribe() (<-chan events.Event, func()) {
	if b.timeline == nil {
		ch := make(chan events.Event)
		close(ch)
		return ch, func() {}
	}
	return b.timeline.Subscribe()
}

// Streaming reports whether events are kept and streamed (--timeline).
func (b *Backend) Streaming() bool { return b.timeline != nil }

// counters samples this node's exchange count for its rate.
type counters struct {
	started time.Time
	gather  prometheus.Gatherer // nil: no in-flight gauge

	mu       sync.Mutex
	lastT    time.Time
	lastN    uint64
	lastRate float64
}

// sample returns this node's counters given its exchange total now.
func (c *counters) sample(exchanges uint64) *mgmt.NodeCounters {
	now := time.Now()
	nc := &mgmt.NodeCounters{Started: c.started, UptimeSeconds: now.Sub(c.started).Seconds(), Exchanges: exchanges, InFlight: -1}
	c.mu.Lock()
	if c.lastT.IsZero() {
		c.lastT, c.lastN = c.started, 0
	}
	if dt := now.Sub(c.lastT); dt >= time.Second && exchanges >= c.lastN {
		c.lastRate = float64(exchanges-c.lastN) / dt.Seconds()
		c.lastT, c.lastN = now, exchanges
	}
	nc.TxPerSec = c.lastRate
	c.mu.Unlock()
	if c.gather != nil {
		if mfs, err := c.gather.Gather(); err == nil {
			for _, mf := range mfs {
				if mf.GetName() == "orchd_inflight_exchanges" && len(mf.Metric) > 0 {
					nc.InFlight = int64(mf.Metric[0].GetGauge().GetValue())
				}
			}
		}
	}
	return nc
}
