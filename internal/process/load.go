package process

import (
	"context"
	"fmt"

	"github.com/orchd/orchd/internal/persist"
)

// ownNew owns a new instance across processes: by Claim when the owners
// can, else as own.
func (e *Engine) ownNew(ctx context.Context, id string) (release func(), fence any, err error) {
	if c, ok := e.opts.Owners.(InstanceClaimer); ok {
		release, fence, err = c.Claim(ctx, id)
		if err != nil {
			return nil, nil, fmt.Errorf("instance %s: %w", id, err)
		}
		return release, fence, nil
	}
	return e.own(ctx, id)
}

// own takes instance id across processes (Options.Owners). The caller
// holds the instance's stripe; it gives fence to the checkpoints of the
// run (load, instance.fence).
func (e *Engine) own(ctx context.Context, id string) (release func(), fence any, err error) {
	if e.opts.Owners == nil {
		return func() {}, nil, nil
	}
	release, fence, err = e.opts.Owners.Acquire(ctx, id)
	if err != nil {
		return nil, nil, fmt.Errorf("instance %s: %w", id, err)
	}
	return release, fence, nil
}

// load rebuilds a persistent instance from the store, with the open
// requests its clients wait on (unload gives them back when the instance
// is not run after all), for a run whose checkpoints carry fence (own).
// The caller holds the instance's stripe.
func (e *Engine) load(ctx context.Context, p *Process, id string, fence any) (*instance, error) {
	rec, vars, err := e.store.Instance(id)
	if err != nil {
		if isCorrupt(err) {
			return nil, e.markBroken(id, err)
		}
		return nil, fmt.Errorf("load instance %s: %w", id, err)
	}
	in, err := e.decode(ctx, p, rec, vars)
	if err != nil {
		if isCorrupt(err) {
			return nil, e.markBroken(id, err)
		}
		return nil, err
	}
	e.loadTrace(in, vars)
	in.fence = fence
	e.reg.mu.Lock()
	if open := e.reg.open[id]; open != nil {
		delete(e.reg.open, id)
		for _, r := range open {
			if r.state.Load() == 0 {
				in.reqs = append(in.reqs, r)
			}
		}
	}
	e.reg.mu.Unlock()
	return in, nil
}

// unload gives the open requests load took back to the registry, for an
// instance loaded and not run (suspended, or no longer waiting for the
// timer that loaded it).
func (e *Engine) unload(in *instance) {
	if len(in.reqs) == 0 {
		return
	}
	e.reg.mu.Lock()
	e.reg.open[in.id] = append(e.reg.open[in.id], in.reqs...)
	e.reg.mu.Unlock()
	in.reqs = nil
}

// decode rebuilds an instance from its stored record and variables,
// touching nothing else of the engine.
func (e *Engine) decode(ctx context.Context, p *Process, rec *persist.Instance, vars map[int][]byte) (*instance, error) {
	id := rec.ID
	frames := rec.Frames
	if fp, rest, ok := splitFingerprint(frames); ok {
		v := e.versionOf(p, fp)
		if v == nil {
			return nil, errVersionMissing(rec, fp)
		}
		p, frames = v, rest
	}
	in := newInstance(e.host(), p, ctx)
	in.id, in.started, in.state, in.corr = rec.ID, rec.Created, rec.State, rec.Correlations
	in.stored = true
	r := &reader{b: frames}
	if len(r.b) == 0 || r.b[0] < framesVersion || r.b[0] > framesVersionComp {
		return nil, fmt.Errorf("instance %s: %w (version)", id, errBadFrames)
	}
	withEPRs, withRecs := r.b[0] >= framesVersionEPRs, r.b[0] == framesVersionComp
	r.b = r.b[1:]
	if err := in.decodeThreads(r, withRecs); err != nil {
		return nil, fmt.Errorf("instance %s: %w", id, err)
	}
	if fp := r.string(); r.err == nil && fp != p.Fingerprint {
		return nil, fmt.Errorf("instance %s was checkpointed by a version of process %s (fingerprint %s) that is no longer deployed", id, p.Name.Local, fp)
	}
	if f := r.string(); f != "" {
		in.inHandler = &faultValue{name: parseClark(f)}
	}
	rn := r.uvarint()
	for i := uint64(0); i < rn && r.err == nil; i++ {
		in.regRoutes = append(in.regRoutes, r.string())
	}
	in.regTimer = r.varint()
	if withEPRs && r.err == nil {
		if err := in.readEPRs(r); err != nil {
			return nil, fmt.Errorf("instance %s: %w", id, err)
		}
	}
	if r.err != nil {
		return nil, fmt.Errorf("instance %s: %w", id, r.err)
	}
	in.wake = in.regTimer
	if rec.State == persist.Suspended {
		in.suspendReason = rec.Fault
	}
	for slot, data := range vars {
		if slot < 1 || slot > len(p.Vars) || data == nil {
			continue
		}
		el, err := parseStored(data)
		if err != nil {
			return nil, fmt.Errorf("instance %s: %w %s: %v", id, errBadVariable, p.Vars[slot-1].Name, err)
		}
		in.root.RemoveChildAt(slot - 1)
		in.root.InsertChildAt(slot-1, el)
	}
	return in, nil
}
