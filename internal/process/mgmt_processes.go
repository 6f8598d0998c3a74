package process

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process/interp"
)

// Processes and versions for the management API (mgmt.Backend): what is
// deployed, each version's counters, and its activity outline with the
// time spent per activity.
//
// The counters cost an exchange a few atomic adds on the version's own
// procStats, reached from the *Process it already holds: no lookup, no
// lock. Activity timing is sampled (sampling.go): the first SampleFirst
// instances of a version and then one in Options.SampleEvery get a
// sampler, and only such an instance reads the clock per activity; the
// others pay one nil check per step.

// DefaultSampleEvery is how often an instance is timed per activity when
// Options.SampleEvery is zero: one instance in 64.
const DefaultSampleEvery = 64

// sampleEvery is the engine's sampling period; 0 when sampling is off.
func (e *Engine) sampleEvery() uint64 {
	switch n := e.opts.SampleEvery; {
	case n == 0:
		return DefaultSampleEvery
	case n < 0:
		return 0
	default:
		return uint64(n)
	}
}

// Versions lists every version the engine keeps (active and retired),
// processes sorted by name, newest version first within a process. The
// listing has no outline.
func (e *Engine) Versions() []mgmt.Process {
	e.mu.RLock()
	out := make([]mgmt.Process, 0, len(e.processes)+len(e.retired))
	for _, p := range e.processes {
		out = append(out, describe(p, true, e.sampleEvery(), e.sampleFirst()))
	}
	for _, p := range e.retired {
		out = append(out, describe(p, false, e.sampleEvery(), e.sampleFirst()))
	}
	e.mu.RUnlock()
	slices.SortFunc(out, func(a, b mgmt.Process) int {
		if c := cmp.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Compare(b.Version, a.Version)
	})
	return out
}

// Version describes one version of the process called name (local name
// or {ns}local) with its outline; version 0 is the active one, else the
// newest. An unknown process or version wraps mgmt.ErrNotFound.
func (e *Engine) Version(name string, version int) (*mgmt.Process, error) {
	e.mu.RLock()
	p, active := e.findLocked(name, version)
	var d mgmt.Process
	if p != nil {
		d = describe(p, active, e.sampleEvery(), e.sampleFirst())
	}
	e.mu.RUnlock()
	if p == nil {
		return nil, notFound(name, version)
	}
	d.Outline = outline(p)
	return &d, nil
}

func notFound(name string, version int) error {
	if version == 0 {
		return fmt.Errorf("process %s: %w", name, mgmt.ErrNotFound)
	}
	return fmt.Errorf("process %s version %d: %w", name, version, mgmt.ErrNotFound)
}

// nameIs reports whether p is called name: its local name or {ns}local.
func nameIs(p *interp.Version, name string) bool {
	if strings.HasPrefix(name, "{") {
		return p.Name.String() == name
	}
	return p.Name.Local == name
}

// findLocked finds version of the process called name (0: the active
// version, else the newest retired one) and says whether it is active.
// The caller holds e.mu.
func (e *Engine) findLocked(name string, version int) (p *interp.Version, active bool) {
	for _, q := range e.processes {
		if nameIs(q, name) && (version == 0 || q.Number == version) {
			return q, true
		}
	}
	for _, q := range slices.Backward(e.retired) {
		if !nameIs(q, name) || (version != 0 && q.Number != version) {
			continue
		}
		if p == nil || q.Number > p.Number {
			p = q
		}
		if version != 0 {
			break
		}
	}
	return p, false
}

// describe is p as the management API shows it (without outline).
func describe(p *interp.Version, active bool, every, first uint64) mgmt.Process {
	d := mgmt.Process{Name: p.Name.String(), Local: p.Name.Local, Version: p.Number, Bundle: p.Bundle, File: p.File,
		State: "retired", InMemory: p.InMemory, Deployed: p.Deployed, Endpoints: []mgmt.Endpoint{},
		Warnings: p.Warnings, Stats: p.Stats.Snapshot(), SampleEvery: int(every), Fingerprint: p.Fingerprint}
	if every > 0 {
		d.SampleFirst = int(first)
	}
	if active {
		d.State = "active"
	}
	for _, ep := range p.Endpoints {
		me := mgmt.Endpoint{Path: ep.Path, Service: ep.Service.String(), Port: ep.Port, SOAP: "1.1", Operations: []string{}}
		if ep.Version == exchange.SOAP12 {
			me.SOAP = "1.2"
		}
		for _, o := range ep.Operations {
			me.Operations = append(me.Operations, o.Name)
		}
		d.Endpoints = append(d.Endpoints, me)
	}
	return d
}

// outline is p's activity tree with the timing of sampled instances: the
// process's own node (kind "process") is the root; constructs the
// compiler made (no element) are left out, their children taking their
// place.
func outline(p *interp.Version) *mgmt.Activity {
	if p.Root == nil || len(p.ActParent) != len(p.Acts) {
		return nil
	}
	kids := make([][]int, len(p.Acts))
	for i, par := range p.ActParent {
		if par >= 0 {
			kids[par] = append(kids[par], i)
		}
	}
	rootID := p.Root.ID()
	root := activityNode(p, rootID)
	root.Kind, root.Name = "process", p.Name.Local
	var add func(parent *mgmt.Activity, id int)
	add = func(parent *mgmt.Activity, id int) {
		for _, k := range kids[id] {
			var tag string
			if tg, ok := p.Acts[k].(interp.EvTagger); ok {
				tag, _, _ = tg.EvTag()
			}
			if tag == "" {
				add(parent, k)
				continue
			}
			n := activityNode(p, k)
			parent.Children = append(parent.Children, n)
			add(n, k)
		}
	}
	add(root, rootID)
	return root
}

// activityNode is one activity of p's outline, without children.
func activityNode(p *interp.Version, id int) *mgmt.Activity {
	a := p.Acts[id]
	n := &mgmt.Activity{ID: id, Position: a.Where().String()}
	if t, ok := a.(interp.EvTagger); ok {
		n.Kind, n.Name, _ = t.EvTag()
	}
	if id < len(p.ActStats) {
		st := &p.ActStats[id]
		n.Count, n.Nanos, n.P99Nanos, n.Faults = st.Count.Load(), st.Nanos.Load(), st.Quantile(0.99), st.Faults.Load()
	}
	return n
}

// SetActive activates (active) or retires one version of the process
// called name (version 0: the active one). Activating a retired version
// retires the active version of the process, and the activated one
// serves its endpoints from now on (new instances start on it); retiring
// the active version leaves its endpoints unserved (its instances
// finish). It returns the version it activated (nil when retiring) and
// the versions it retired; the caller updates the front door: serve
// activated's endpoints, stop serving those of retired that no active
// process serves. Doing what is already done changes nothing; a version
// that cannot serve (a path another process serves) wraps
// mgmt.ErrConflict.
func (e *Engine) SetActive(_ context.Context, name string, version int, active bool) (activated *interp.Version, retired []*interp.Version, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, isActive := e.findLocked(name, version)
	if p == nil {
		return nil, nil, notFound(name, version)
	}
	if !active {
		if !isActive {
			return nil, nil, nil
		}
		e.processes = slices.DeleteFunc(e.processes, func(q *interp.Version) bool { return q == p })
		e.retireLocked([]*interp.Version{p})
		e.publishLocked()
		return nil, []*interp.Version{p}, nil
	}
	if isActive {
		return p, nil, nil
	}
	var keep, gone []*interp.Version
	for _, q := range e.processes {
		if q.Name == p.Name {
			gone = append(gone, q)
		} else {
			keep = append(keep, q)
		}
	}
	if err := e.deployable(p); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", mgmt.ErrConflict, err)
	}
	for _, q := range keep {
		for _, ep := range q.Endpoints {
			if slices.ContainsFunc(p.Endpoints, func(x *exchange.Endpoint) bool { return x.Path == ep.Path }) {
				return nil, nil, fmt.Errorf("process %s version %d: endpoint path %s is served by %s: %w", p.Name.Local, p.Number, ep.Path, q, mgmt.ErrConflict)
			}
		}
	}
	e.retired = slices.DeleteFunc(e.retired, func(q *interp.Version) bool { return q == p })
	e.retireLocked(gone)
	p.RetiredAt = time.Time{}
	e.processes = append(keep, p)
	for _, ep := range p.Endpoints {
		e.byEndpoint[ep] = p
	}
	e.publishLocked()
	return p, gone, nil
}
