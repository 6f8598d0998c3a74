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

// load reads persistent instance id of p (or of the version its record
// names) from the store, under the lock the caller holds (fence: its
// token), with the requests earlier runs left open.
func (e *Engine) load(ctx context.Context, p *interp.Version, id string, fence any) (*interp.Instance, error) {
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
	in.LoadTrace(vars)
	e.sampled.resume(in)
	e.reg.mu.Lock()
	if open := e.reg.open[id]; open != nil {
		delete(e.reg.open, id)
		in.Reopen(open)
	}
	e.reg.mu.Unlock()
	return in, nil
}

// unload keeps the open requests of a loaded instance whose run does not
// happen, for the run that will answer them.
func (e *Engine) unload(in *interp.Instance) {
	e.keepOpen(in.ID(), in.Unload())
}

// keepOpen keeps open requests of persistent instance id for its next
// run.
func (e *Engine) keepOpen(id string, open []*interp.OpenRequest) {
	if len(open) == 0 {
		return
	}
	e.reg.mu.Lock()
	e.reg.open[id] = append(e.reg.open[id], open...)
	e.reg.mu.Unlock()
}

// decode makes the instance a stored record describes, of the version
// its fingerprint names.
func (e *Engine) decode(ctx context.Context, p *interp.Version, rec *persist.Instance, vars map[int][]byte) (*interp.Instance, error) {
	frames := rec.Frames
	if fp, rest, ok := interp.SplitFingerprint(frames); ok {
		v := e.versionOf(p, fp)
		if v == nil {
			return nil, errVersionMissing(rec, fp)
		}
		p, frames = v, rest
	}
	return interp.Decode(e.host(), p, rec, frames, vars, ctx)
}
