package process

import (
	"context"
	"fmt"

	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
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
func (e *Engine) load(ctx context.Context, p *interp.Process, id string, fence any) (*interp.Instance, error) {
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
	in.Fence = fence
	e.reg.mu.Lock()
	if open := e.reg.open[id]; open != nil {
		delete(e.reg.open, id)
		for _, r := range open {
			if r.State.Load() == 0 {
				in.Reqs = append(in.Reqs, r)
			}
		}
	}
	e.reg.mu.Unlock()
	return in, nil
}

// unload gives the open requests load took back to the registry, for an
// instance loaded and not run (suspended, or no longer waiting for the
// timer that loaded it).
func (e *Engine) unload(in *interp.Instance) {
	if len(in.Reqs) == 0 {
		return
	}
	e.reg.mu.Lock()
	e.reg.open[in.ID] = append(e.reg.open[in.ID], in.Reqs...)
	e.reg.mu.Unlock()
	in.Reqs = nil
}

// decode rebuilds an instance from its stored record and variables,
// touching nothing else of the engine.
func (e *Engine) decode(ctx context.Context, p *interp.Process, rec *persist.Instance, vars map[int][]byte) (*interp.Instance, error) {
	id := rec.ID
	frames := rec.Frames
	if fp, rest, ok := interp.SplitFingerprint(frames); ok {
		v := e.versionOf(p, fp)
		if v == nil {
			return nil, errVersionMissing(rec, fp)
		}
		p, frames = v, rest
	}
	in := interp.NewInstance(e.host(), p, ctx)
	in.ID, in.Started, in.State, in.Corr = rec.ID, rec.Created, rec.State, rec.Correlations
	in.Stored = true
	r := interp.NewReader(frames)
	if len(r.B) == 0 {
		return nil, fmt.Errorf("instance %s: %w (version)", id, interp.ErrBadFrames)
	}
	ver, withSession := interp.FramesVersionOf(r.B[0])
	if ver < interp.FramesVersion || ver > interp.FramesVersionComp || (withSession && ver == interp.FramesVersion) {
		return nil, fmt.Errorf("instance %s: %w (version)", id, interp.ErrBadFrames)
	}
	withEPRs, withRecs := ver >= interp.FramesVersionEPRs, ver == interp.FramesVersionComp
	r.B = r.B[1:]
	if err := in.DecodeThreads(r, withRecs); err != nil {
		return nil, fmt.Errorf("instance %s: %w", id, err)
	}
	if fp := r.String(); r.Err == nil && fp != p.Fingerprint {
		return nil, fmt.Errorf("instance %s was checkpointed by a version of process %s (fingerprint %s) that is no longer deployed", id, p.Name.Local, fp)
	}
	if f := r.String(); f != "" {
		in.InHandler = &interp.FaultValue{Name: interp.ParseClark(f)}
	}
	rn := r.Uvarint()
	for i := uint64(0); i < rn && r.Err == nil; i++ {
		in.RegRoutes = append(in.RegRoutes, r.String())
	}
	in.RegTimer = r.Varint()
	if withEPRs && r.Err == nil {
		if err := in.ReadEPRs(r); err != nil {
			return nil, fmt.Errorf("instance %s: %w", id, err)
		}
	}
	if withSession && r.Err == nil {
		s := r.String()
		if r.Err == nil && s == "" {
			return nil, fmt.Errorf("instance %s: %w (empty session)", id, interp.ErrBadFrames)
		}
		in.SetSession(s)
	} else if !withSession {
		in.AdoptLegacySession()
	}
	if r.Err != nil {
		return nil, fmt.Errorf("instance %s: %w", id, r.Err)
	}
	in.Wake = in.RegTimer
	if rec.State == persist.Suspended {
		in.SuspendReason = rec.Fault
	}
	for slot, data := range vars {
		if slot < 1 || slot > len(p.Vars) || data == nil {
			continue
		}
		el, err := interp.ParseStored(data)
		if err != nil {
			return nil, fmt.Errorf("instance %s: %w %s: %v", id, interp.ErrBadVariable, p.Vars[slot-1].Name, err)
		}
		in.Root.RemoveChildAt(slot - 1)
		in.Root.InsertChildAt(slot-1, el)
	}
	return in, nil
}
