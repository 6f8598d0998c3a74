package process

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// Versions (ODE's process versions, for hot redeploy). Each deploy of a
// process is a version: Redeploy makes the new one active (its endpoints
// are served, new instances start on it) and retires the one it replaces.
// A retired version serves nothing but is kept while instances that
// started on it live: an in-memory instance holds its version; a
// persistent instance's checkpoint carries its version's fingerprint (the
// hash of the BPEL file, written first in the frames), and a load finds
// the version by it (versionOf). A message for a running instance comes
// in through the active version's endpoint; routing keys name the process
// QName, not the version, so the active version's correlation shapes and
// then the retired versions' find the instance (deliver), and the
// exchange is retargeted to the instance's version's endpoint
// (retarget). DropUnused forgets the retired versions no instance uses.

// versionOf returns the version of p's process whose fingerprint is fp:
// p itself, or a retired version; nil when none is deployed.
func (e *Engine) versionOf(p *interp.Version, fp string) *interp.Version {
	if fp == p.Fingerprint {
		return p
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, q := range e.processes {
		if q.Name == p.Name && q.Fingerprint == fp {
			return q
		}
	}
	for _, q := range slices.Backward(e.retired) {
		if q.Name == p.Name && q.Fingerprint == fp {
			return q
		}
	}
	return nil
}

// olderVersions returns the retired versions of p's process, newest
// first (nil, with one atomic load, when nothing is retired).
func (e *Engine) olderVersions(p *interp.Version) []*interp.Version {
	m := e.older.Load()
	if m == nil {
		return nil
	}
	return (*m)[p.Name]
}

// endpointOp is ep's operation called name, or nil.
func endpointOp(ep *exchange.Endpoint, name string) *exchange.Operation {
	for _, o := range ep.Operations {
		if o.Name == name {
			return o
		}
	}
	return nil
}

// retarget points ex, which came in through an endpoint of another
// version of in's process, at in's version's endpoint served at the same
// path, so the instance's activities recognize it.
func retarget(in *interp.Instance, ex *exchange.Exchange) {
	if ex == nil || slices.Contains(in.Version().Endpoints, ex.Endpoint) {
		return
	}
	for _, ep := range in.Version().Endpoints {
		if ep.Path != ex.Endpoint.Path {
			continue
		}
		if op := endpointOp(ep, ex.Operation.Name); op != nil {
			ex.Endpoint, ex.Operation = ep, op
		}
		return
	}
}

// servedAt returns the endpoint now served at ep's path: ep itself, or
// the endpoint of the version that replaced it (ep when none serves it).
func (e *Engine) servedAt(ep *exchange.Endpoint) *exchange.Endpoint {
	m := e.served.Load()
	if m == nil {
		return ep
	}
	if _, ok := (*m)[ep]; ok {
		return ep
	}
	for cur := range *m {
		if cur.Path == ep.Path {
			return cur
		}
	}
	return ep
}

// Redeploy deploys procs as the new active versions and retires the
// active processes of every bundle retire selects (the bundle being
// redeployed, and with ODE's name-N naming its older names): their
// endpoints are served by procs from now on, or by nothing. It is all or
// nothing: when a process of procs cannot be deployed (a persistent one
// without a store, an extension the engine lacks, a path another bundle
// serves), nothing changes and the error says why. It returns the
// versions it retired.
func (e *Engine) Redeploy(retire func(bundle string) bool, procs ...*interp.Version) ([]*interp.Version, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var keep, gone []*interp.Version
	for _, p := range e.processes {
		if retire(p.Bundle) {
			gone = append(gone, p)
		} else {
			keep = append(keep, p)
		}
	}
	paths := map[string]*interp.Version{}
	for _, p := range keep {
		for _, ep := range p.Endpoints {
			paths[ep.Path] = p
		}
	}
	var errs []error
	for _, p := range procs {
		if err := e.deployable(p); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, ep := range p.Endpoints {
			if q, dup := paths[ep.Path]; dup {
				errs = append(errs, fmt.Errorf("process %s: endpoint path %s is already served by %s", p, ep.Path, q))
				continue
			}
			paths[ep.Path] = p
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	e.retireLocked(gone)
	e.processes = append(keep, procs...)
	for _, p := range procs {
		for _, ep := range p.Endpoints {
			e.byEndpoint[ep] = p
		}
		e.deployed(p)
		p.DeployedNow()
	}
	e.publishLocked()
	// Only the new versions are bound: rebinding a running version's
	// partner links would race with its instances (an in-process partner
	// redeployed later is found by path at each call: servedAt).
	for _, p := range procs {
		e.bindLocked(p)
	}
	return gone, nil
}

// deployable says why p cannot be deployed on this engine, or nil.
func (e *Engine) deployable(p *interp.Version) error {
	if !p.InMemory && e.store == nil {
		return fmt.Errorf("process %s is persistent (deploy.xml <in-memory> absent or false) but orchd has no data store", p)
	}
	return nil
}

// Undeploy retires the active processes of bundle: their endpoints are
// no longer served. Their instances are not deleted: in-memory ones that
// run go on until they end or wait for a message that can no longer come;
// persistent ones stay stored (timers still fire) and take messages
// again if a version of the process is deployed again. It returns the
// versions it retired.
func (e *Engine) Undeploy(bundle string) []*interp.Version {
	e.mu.Lock()
	defer e.mu.Unlock()
	var keep, gone []*interp.Version
	for _, p := range e.processes {
		if p.Bundle == bundle {
			gone = append(gone, p)
		} else {
			keep = append(keep, p)
		}
	}
	e.processes = keep
	e.retireLocked(gone)
	e.publishLocked()
	return gone
}

// AddRetired adds versions that serve nothing but that stored instances
// may have started on (at start, the versions kept from before a
// restart). Add them before Recover.
func (e *Engine) AddRetired(procs ...*interp.Version) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	var ok []*interp.Version
	for _, p := range procs {
		if err := e.deployable(p); err != nil {
			errs = append(errs, err)
			continue
		}
		e.deployed(p)
		p.DeployedNow()
		e.bindLocked(p)
		ok = append(ok, p)
	}
	e.retireLocked(ok)
	return errors.Join(errs...)
}

// retireLocked moves gone (no longer in e.processes) to the retired
// versions. The caller holds e.mu.
func (e *Engine) retireLocked(gone []*interp.Version) {
	now := time.Now()
	for _, p := range gone {
		p.RetiredAt = now
		for _, ep := range p.Endpoints {
			if e.byEndpoint[ep] == p {
				delete(e.byEndpoint, ep)
			}
		}
	}
	e.retired = append(e.retired, gone...)
	e.indexRetiredLocked()
}

// indexRetiredLocked rebuilds the index olderVersions reads.
func (e *Engine) indexRetiredLocked() {
	defer e.versionsChanged()
	if len(e.retired) == 0 {
		e.older.Store(nil)
		return
	}
	m := map[exchange.QName][]*interp.Version{}
	for _, p := range slices.Backward(e.retired) {
		m[p.Name] = append(m[p.Name], p)
	}
	e.older.Store(&m)
}

// Retired returns the retired versions still kept, oldest first.
func (e *Engine) Retired() []*interp.Version {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return append([]*interp.Version(nil), e.retired...)
}

// DropUnused forgets the retired versions, retired at least grace ago,
// that no instance uses (no in-memory instance of the engine's registry,
// no stored instance, no persistent instance being created) and returns
// them. The grace covers a request that found its version just before
// it was retired. In-memory instances running straight through hold
// their version themselves and are not counted.
func (e *Engine) DropUnused(grace time.Duration) ([]*interp.Version, error) {
	used := map[*interp.Version]bool{}
	e.reg.mu.Lock()
	for _, in := range e.reg.live {
		used[in.Version()] = true
	}
	e.reg.mu.Unlock()
	e.mu.RLock()
	retired := append([]*interp.Version(nil), e.retired...)
	e.mu.RUnlock()
	if len(retired) == 0 {
		return nil, nil
	}
	if e.store != nil {
		fps := map[string]bool{}
		err := e.store.Instances(func(rec *persist.Instance) bool {
			if rec.State != persist.Waiting && rec.State != persist.Running && rec.State != persist.Suspended {
				return true
			}
			if fp, _, ok := interp.SplitFingerprint(rec.Frames); ok {
				fps[rec.Process+"#"+fp] = true
			} else {
				// Untagged frames: any version of the process may be
				// the one; keep them all.
				fps[rec.Process+"#*"] = true
			}
			return true
		})
		if err != nil {
			return nil, fmt.Errorf("versions in use: %w", err)
		}
		for _, p := range retired {
			k := p.Name.String()
			if !p.InMemory && (fps[k+"#"+p.Fingerprint] || fps[k+"#*"]) {
				used[p] = true
			}
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var keep, dropped []*interp.Version
	for _, p := range e.retired {
		if used[p] || p.Starting.Load() > 0 || time.Since(p.RetiredAt) < grace {
			keep = append(keep, p)
		} else {
			dropped = append(dropped, p)
		}
	}
	e.retired = keep
	e.indexRetiredLocked()
	for _, p := range dropped {
		e.metrics.dropped(p)
	}
	return dropped, nil
}

// resumeOlder delivers ex to an instance of retired version v that its
// correlation values find, skipping the keys already tried.
func (e *Engine) resumeOlder(ctx context.Context, v *interp.Version, ex *exchange.Exchange, tried, keys *[]string) (bool, error) {
	op := ex.Operation.Name
	for _, sh := range v.Routes[op] {
		vals, ok := shapeValues(ex.Input, sh, tried)
		if !ok {
			continue
		}
		for _, m := range sh.Masks {
			key := interp.KeyRouteShape(sh, v, op, m, vals)
			if slices.Contains(*keys, key) {
				continue
			}
			found, err := e.resume(ctx, v, key, ex)
			if found || err != nil {
				return found, err
			}
			*keys = append(*keys, key)
		}
	}
	return false, nil
}

// redeployed finds the process now serving the path of ex's endpoint
// when that endpoint is no longer served (a request that came in through
// the front door just as its process was redeployed) and retargets ex to
// it; nil when nothing serves the path.
func (e *Engine) redeployed(ex *exchange.Exchange) *interp.Version {
	m := e.served.Load()
	if m == nil {
		return nil
	}
	cur := e.servedAt(ex.Endpoint)
	op := endpointOp(cur, ex.Operation.Name)
	if cur == ex.Endpoint || op == nil {
		return nil
	}
	ex.Endpoint, ex.Operation = cur, op
	return (*m)[cur]
}
