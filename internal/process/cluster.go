package process

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// MemRoutes publishes the route keys of waiting in-memory instances
// beyond this engine (cluster.Routes, with cluster.Node.RegisterRoute),
// so that other orchd nodes forward the messages for them here. Add and
// Remove are called under the engine's registry lock and must not block;
// Wait blocks until the given keys are published, and is called before a
// reply leaves, so that a partner answering the reply finds the route
// from any node.
type MemRoutes interface {
	Add(key string)
	Remove(key string)
	Wait(ctx context.Context, keys []string) error
}

// addMemRoute publishes key (Options.MemRoutes). The caller holds e.reg.mu.
func (e *Engine) addMemRoute(key string) {
	if e.opts.MemRoutes != nil {
		e.opts.MemRoutes.Add(key)
	}
}

// removeMemRoute withdraws key (Options.MemRoutes). The caller holds
// e.reg.mu.
func (e *Engine) removeMemRoute(key string) {
	if e.opts.MemRoutes != nil {
		e.opts.MemRoutes.Remove(key)
	}
}

// waitMemRoutes waits until in's route keys are published, before a
// reply that lets its partner send the next message: one etcd round trip
// (batched with the other instances registering meanwhile). A failure is
// logged: the conversation still works through this node.
func (e *Engine) waitMemRoutes(in *interp.Instance) {
	mr := e.opts.MemRoutes
	if mr == nil {
		return
	}
	e.reg.mu.Lock()
	keys := e.reg.keys[in]
	e.reg.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	if err := mr.Wait(in.Context(), keys); err != nil {
		e.log.Warn("in-memory routes not published to the cluster", slog.String(logInstance, in.ID()), slog.Any("err", err))
	}
}

// VersionIDs returns the VersionID of every version this engine serves
// or keeps for its instances (active and retired).
func (e *Engine) VersionIDs() []string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	ids := make([]string, 0, len(e.processes)+len(e.retired))
	for _, p := range e.processes {
		ids = append(ids, p.VersionID())
	}
	for _, p := range e.retired {
		ids = append(ids, p.VersionID())
	}
	return ids
}

// versionsChanged tells Options.VersionsChanged. The caller holds e.mu.
func (e *Engine) versionsChanged() {
	if f := e.opts.VersionsChanged; f != nil {
		f()
	}
}

// EndpointProcess returns the process name ({ns}local) served at ep and
// whether it is in-memory; ok is false when ep is not served.
func (e *Engine) EndpointProcess(ep *exchange.Endpoint) (name string, inMemory, ok bool) {
	p := e.servedProcess(ep)
	if p == nil {
		return "", false, false
	}
	return p.Name.String(), p.InMemory, true
}

// Correlated reports whether a message at ep may be for a waiting
// instance: some operation of the process served there (or of a retired
// version of it) is correlated. An uncorrelated message always starts an
// instance, so a cluster node need not decode it to route it.
func (e *Engine) Correlated(ep *exchange.Endpoint) bool {
	p := e.servedProcess(ep)
	if p == nil {
		return false
	}
	if len(p.Routes) > 0 {
		return true
	}
	for _, v := range e.olderVersions(p) {
		if len(v.Routes) > 0 {
			return true
		}
	}
	return false
}

func (e *Engine) servedProcess(ep *exchange.Endpoint) *interp.Version {
	if m := e.served.Load(); m != nil {
		return (*m)[ep]
	}
	return nil
}

// routeKeys calls fn with each route key, by version of p's process
// (active first, then retired, newest first), under which Dispatch would
// look for the instance a message m for op waits in, until fn returns
// false.
func (e *Engine) routeKeys(p *interp.Version, op string, m *exchange.Message, fn func(v *interp.Version, key string) bool) {
	var tried []string
	for _, v := range append([]*interp.Version{p}, e.olderVersions(p)...) {
		for _, sh := range v.Routes[op] {
			vals, ok := shapeValues(m, sh, &tried)
			if !ok {
				continue
			}
			for _, mask := range sh.Masks {
				if !fn(v, interp.KeyRouteShape(sh, v, op, mask, vals)) {
					return
				}
			}
		}
	}
}

// RouteKeysFor returns the route keys under which Dispatch would look
// for the in-memory instance a message m for operation op at endpoint ep
// is for, computed before dispatch (cluster.Forwarder asks which node
// holds it); nil for a persistent process or an uncorrelated message.
func (e *Engine) RouteKeysFor(ep *exchange.Endpoint, op string, m *exchange.Message) []string {
	p := e.servedProcess(ep)
	if p == nil || !p.InMemory {
		return nil
	}
	var keys []string
	e.routeKeys(p, op, m, func(_ *interp.Version, k string) bool {
		keys = append(keys, k)
		return true
	})
	return keys
}

// InstanceVersionFor returns the VersionID of the stored instance a
// message m for operation op at endpoint ep would be delivered to, read
// from the store before dispatch (one route read and one instance read):
// in a cluster during a rolling upgrade, the node to run it on is one
// that has that version. ok is false when no stored instance waits for
// the message (or the process is in-memory).
func (e *Engine) InstanceVersionFor(ep *exchange.Endpoint, op string, m *exchange.Message) (version string, ok bool, err error) {
	p := e.servedProcess(ep)
	if p == nil || p.InMemory || e.store == nil {
		return "", false, nil
	}
	var id string
	e.routeKeys(p, op, m, func(_ *interp.Version, k string) bool {
		i, found, rerr := e.store.Route(k)
		if rerr != nil {
			err = rerr
			return false
		}
		if found {
			id = i
		}
		return !found
	})
	if err != nil || id == "" {
		return "", false, err
	}
	rec, _, err := e.store.Instance(id)
	if err != nil {
		return "", false, fmt.Errorf("instance %s: %w", id, err)
	}
	fp, _, tagged := interp.SplitFingerprint(rec.Frames)
	if !tagged {
		return "", false, nil // an older checkpoint: any version may be its own
	}
	return rec.Process + "#" + fp, true, nil
}

// errVersionMissing is the error of a run of a stored instance whose
// version this engine does not have.
func errVersionMissing(rec *persist.Instance, fp string) error {
	return fmt.Errorf("%w: instance %s runs on version %s#%s, which is not deployed here", ErrVersionNotDeployed, rec.ID, rec.Process, fp)
}
