package main

import (
	"context"
	"time"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/hotdeploy"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process"
)

// backend implements mgmt.Backend, what the management API and the
// console operate on, over the engine (processes, versions, instances),
// the deployer (bundles of --deploy) and the timeline (--timeline: the
// recent events of each instance and the live stream).
type backend struct {
	engine   *process.Engine
	deploy   *hotdeploy.Deployer
	timeline *events.Timeline // nil without --timeline
	cv       *clusterView     // nil without --cluster
	counters *counters
}

var _ mgmt.Backend = (*backend)(nil)

// newBackend returns the management backend of a running server;
// timeline may be nil (no --timeline).
func newBackend(engine *process.Engine, d *hotdeploy.Deployer, timeline *events.Timeline) *backend {
	return &backend{engine: engine, deploy: d, timeline: timeline, counters: &counters{started: time.Now()}}
}

// Processes implements mgmt.Backend.
// In a cluster it sums every node's versions (clusterProcesses).
func (b *backend) Processes(ctx context.Context) ([]mgmt.Process, error) {
	if b.cv != nil {
		return b.clusterProcesses(ctx)
	}
	return b.engine.Versions(), nil
}

// LocalProcesses implements mgmt.ClusterBackend: this node's versions.
func (b *backend) LocalProcesses(context.Context) ([]mgmt.Process, error) {
	return b.engine.Versions(), nil
}

// Process implements mgmt.Backend.
func (b *backend) Process(_ context.Context, name string, version int) (*mgmt.Process, error) {
	return b.engine.Version(name, version)
}

// SetActive implements mgmt.Backend.
func (b *backend) SetActive(ctx context.Context, name string, version int, active bool) error {
	return b.deploy.SetActive(ctx, name, version, active)
}

// Bundles implements mgmt.Backend.
func (b *backend) Bundles(context.Context) ([]mgmt.Bundle, error) {
	return b.deploy.Bundles()
}

// Deploy implements mgmt.Backend.
func (b *backend) Deploy(_ context.Context, name string, zip []byte) (*mgmt.Bundle, error) {
	return b.deploy.DeployZip(name, zip)
}

// Undeploy implements mgmt.Backend.
func (b *backend) Undeploy(_ context.Context, name string) error {
	return b.deploy.Undeploy(name)
}

// Instances implements mgmt.Backend.
func (b *backend) Instances(ctx context.Context, q mgmt.Query) (*mgmt.Page, error) {
	if b.cv != nil {
		return b.clusterInstances(ctx, q)
	}
	return b.engine.QueryInstances(ctx, q)
}

// Instance implements mgmt.Backend: the engine's description, with the
// instance's recent events from the timeline.
func (b *backend) Instance(ctx context.Context, id string) (*mgmt.InstanceDetail, error) {
	if b.cv != nil {
		return b.clusterInstance(ctx, id)
	}
	return b.localInstance(ctx, id)
}

// localInstance describes an instance this node's engine knows.
func (b *backend) localInstance(ctx context.Context, id string) (*mgmt.InstanceDetail, error) {
	d, err := b.engine.InstanceDetail(ctx, id)
	if err != nil {
		return nil, err
	}
	d.Timeline = b.Timeline(id)
	return d, nil
}

// Act implements mgmt.Backend.
func (b *backend) Act(ctx context.Context, id string, a mgmt.Action) error {
	if b.cv != nil {
		return b.clusterAct(ctx, id, a)
	}
	return b.engine.Act(ctx, id, a)
}

// Timeline returns the events kept of instance id, oldest first: empty
// (not nil) when none is kept or there is no --timeline.
func (b *backend) Timeline(id string) []mgmt.Event {
	out := []mgmt.Event{}
	if b.timeline == nil {
		return out
	}
	for _, ev := range b.timeline.Events(id) {
		out = append(out, timelineEvent(ev))
	}
	return out
}

// timelineEvent is ev as an instance's timeline shows it.
func timelineEvent(ev events.Event) mgmt.Event {
	return mgmt.Event{Kind: ev.Kind.String(), Time: ev.Time, Activity: ev.Activity, Name: ev.Name, Position: ev.Position,
		Variable: ev.Variable, CorrelationSet: ev.CorrelationSet, Value: ev.Value, Partner: ev.Partner, Operation: ev.Operation, Fault: ev.Fault, Detail: ev.Detail, Duration: ev.Duration}
}

// Subscribe is the live event stream, for the API's and the console's
// GET /api/v1/events (not part of mgmt.Backend): every instance event
// from now on, until cancel is called. The channel is bounded: a
// subscriber that does not keep up has its channel closed (it may
// subscribe again), and it never slows the runtime. Without --timeline
// the channel is closed at once: Streaming says whether there is a
// stream.
func (b *backend) Subscribe() (<-chan events.Event, func()) {
	if b.timeline == nil {
		ch := make(chan events.Event)
		close(ch)
		return ch, func() {}
	}
	return b.timeline.Subscribe()
}

// Streaming reports whether events are kept and streamed (--timeline).
func (b *backend) Streaming() bool { return b.timeline != nil }
