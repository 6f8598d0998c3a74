package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/orchd/orchd/internal/bundlezip"
	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process"
)

// backend implements mgmt.Backend, what the management API and the
// console operate on, over the engine (processes, versions, instances),
// the deployer (bundles of --deploy) and the timeline (--timeline: the
// recent events of each instance and the live stream).
type backend struct {
	engine   *process.Engine
	deploy   *deployer
	timeline *events.Timeline // nil without --timeline
	cv       *clusterView     // nil without --cluster
	counters *counters
}

var _ mgmt.Backend = (*backend)(nil)

// newBackend returns the management backend of a running server;
// timeline may be nil (no --timeline).
func newBackend(engine *process.Engine, d *deployer, timeline *events.Timeline) *backend {
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
	return b.deploy.setActive(ctx, name, version, active)
}

// Bundles implements mgmt.Backend.
func (b *backend) Bundles(context.Context) ([]mgmt.Bundle, error) {
	return b.deploy.bundles()
}

// Deploy implements mgmt.Backend.
func (b *backend) Deploy(_ context.Context, name string, zip []byte) (*mgmt.Bundle, error) {
	return b.deploy.deployZip(name, zip)
}

// Undeploy implements mgmt.Backend.
func (b *backend) Undeploy(_ context.Context, name string) error {
	return b.deploy.undeployNamed(name)
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

// bundleNameRE is what a bundle name may be: a folder name of letters,
// digits, '-', '_' and '.', not starting with a dot.
var bundleNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// checkBundleName refuses a name that is not a plain folder name of the
// deploy directory (no path separator, no dot folder, no marker name).
func checkBundleName(name string) error {
	if len(name) > 200 || !bundleNameRE.MatchString(name) || strings.HasSuffix(name, markerSuffix) {
		return fmt.Errorf("bundle name %q: want letters, digits, '-', '_' and '.' (not first, not ending in %s): %w", name, markerSuffix, mgmt.ErrInvalid)
	}
	return nil
}

// deployZip unpacks the zip archive data as bundle name of the deploy
// directory, replacing the folder there, and deploys it at once. An
// archive that is not a bundle changes nothing; a bundle that fails to
// deploy stays in the folder as a failed bundle (as one copied there
// would), and the version serving stays.
func (d *deployer) deployZip(name string, data []byte) (*mgmt.Bundle, error) {
	if err := checkBundleName(name); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(d.dir, uploadPrefix)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", name, err)
	}
	defer os.RemoveAll(tmp)
	if err := bundlezip.Extract(data, tmp, bundlezip.Limits{}); err != nil {
		if errors.Is(err, bundlezip.ErrArchive) {
			return nil, fmt.Errorf("bundle %s: %w: %w", name, mgmt.ErrInvalid, err)
		}
		return nil, fmt.Errorf("bundle %s: %w", name, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	target := filepath.Join(d.dir, name)
	if _, err := os.Lstat(target); err == nil {
		old, err := os.MkdirTemp(d.dir, replacedPrefix)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", name, err)
		}
		defer os.RemoveAll(old)
		if err := os.Rename(target, filepath.Join(old, name)); err != nil {
			return nil, fmt.Errorf("bundle %s: move the old folder aside: %w", name, err)
		}
	}
	if err := os.Rename(tmp, target); err != nil {
		return nil, fmt.Errorf("bundle %s: %w", name, err)
	}
	err = d.deploy(name)
	b := d.bundleLocked(name, d.active())
	if err != nil {
		return &b, fmt.Errorf("bundle %s: %w: %w", name, mgmt.ErrInvalid, err)
	}
	return &b, nil
}

// Temporary folders of deployZip in the deploy directory: the archive
// being unpacked, and the folder it replaces.
const (
	uploadPrefix   = ".upload-"
	replacedPrefix = ".old-"
)

// removeLeftovers deletes the temporary folders a deployZip interrupted
// by a crash left behind.
func (d *deployer) removeLeftovers() {
	ents, _ := os.ReadDir(d.dir)
	for _, e := range ents {
		if n := e.Name(); e.IsDir() && (strings.HasPrefix(n, uploadPrefix) || strings.HasPrefix(n, replacedPrefix)) {
			if err := os.RemoveAll(filepath.Join(d.dir, n)); err != nil {
				d.log.Warn("leftover upload not removed", slog.String("folder", n), slog.Any("err", err))
			}
		}
	}
}

// undeployNamed removes bundle name's folder and marker and undeploys it.
func (d *deployer) undeployNamed(name string) error {
	if err := checkBundleName(name); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	target := filepath.Join(d.dir, name)
	_, serr := os.Stat(filepath.Join(target, "deploy.xml"))
	_, known := d.applied[name]
	if serr != nil && !known {
		return fmt.Errorf("bundle %s: %w", name, mgmt.ErrNotFound)
	}
	if err := os.RemoveAll(target); err != nil {
		return fmt.Errorf("bundle %s: %w", name, err)
	}
	d.undeploy(name)
	return nil
}

// setActive activates or retires a version (Engine.SetActive) and makes
// the front door serve what is active.
func (d *deployer) setActive(ctx context.Context, name string, version int, active bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	on, gone, err := d.engine.SetActive(ctx, name, version, active)
	if err != nil {
		return err
	}
	served := map[string]bool{}
	if on != nil {
		for _, ep := range on.Endpoints {
			served[ep.Path] = true
			if err := d.front.Replace(ep, d.engine); err != nil {
				return fmt.Errorf("process %s version %d: serve %s: %w", on.Name.Local, on.Version, ep.Path, err)
			}
		}
		d.log.Info("version activated", slog.String("process", on.Name.String()), slog.String("bundle", on.Bundle), slog.Int("version", on.Version))
	}
	d.unserve(gone, served)
	d.logRetired(gone)
	return nil
}

// active groups the engine's active processes by bundle.
func (d *deployer) active() map[string][]*process.Process {
	m := map[string][]*process.Process{}
	for _, p := range d.engine.Processes() {
		m[p.Bundle] = append(m[p.Bundle], p)
	}
	return m
}

// bundles lists the bundles of the deploy directory and those deployed
// from it, sorted by name.
func (d *deployer) bundles() ([]mgmt.Bundle, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	names := map[string]bool{}
	ents, err := os.ReadDir(d.dir)
	if err != nil {
		return nil, fmt.Errorf("deploy directory: %w", err)
	}
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			if _, err := os.Stat(filepath.Join(d.dir, e.Name(), "deploy.xml")); err == nil {
				names[e.Name()] = true
			}
		}
	}
	for n := range d.applied {
		names[n] = true
	}
	for n := range d.errors {
		names[n] = true
	}
	active := d.active()
	out := make([]mgmt.Bundle, 0, len(names))
	for n := range names {
		out = append(out, d.bundleLocked(n, active))
	}
	slices.SortFunc(out, func(a, b mgmt.Bundle) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// bundleLocked describes bundle name; active are the engine's active
// processes by bundle. The caller holds d.mu.
func (d *deployer) bundleLocked(name string, active map[string][]*process.Process) mgmt.Bundle {
	b := mgmt.Bundle{Name: name, State: "deployed"}
	for _, p := range active[name] {
		b.Processes = append(b.Processes, p.Name.String())
		if p.Version >= b.Version {
			b.Version, b.Deployed = p.Version, p.Deployed
		}
	}
	slices.Sort(b.Processes)
	applied, tried := d.applied[name]
	switch {
	case d.errors[name] != nil:
		b.State = "failed"
		b.Errors = problemLines(d.errors[name])
	case !tried || d.seen[name] != applied:
		b.State = "pending"
	}
	return b
}

// problemLines splits a deploy error into its problems, one a line
// (file:line: element: what is wrong).
func problemLines(err error) []string {
	var out []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
