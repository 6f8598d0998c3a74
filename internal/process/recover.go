package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// Recovered counts what Recover found.
type Recovered struct {
	// Waiting instances keep waiting; their routes are in the store.
	Waiting int
	// Timers were scheduled again (one due while orchd was down fires now).
	Timers int
	// Resumed instances were interrupted in the middle of a run and
	// resume from their last checkpoint.
	Resumed int
	// Suspended instances wait for an operator.
	Suspended int
	// Orphans belong to no deployed process, or to a version of it
	// this engine does not have (ErrVersionNotDeployed: in a cluster
	// during a rolling upgrade, a node with that version runs them), and
	// are left alone.
	Orphans int
	// Outbox messages not yet acknowledged are sent again.
	Outbox int
	// DamagedOutbox records cannot be decoded: each is logged and kept
	// (not sent, not deleted) for an operator; the others are sent.
	DamagedOutbox int
	// Broken instances have a stored record or control state that cannot
	// be decoded: each is logged once and left alone (listed as broken,
	// messages routed to it get a Server fault, an operator can delete
	// it). A variable that cannot be decoded is found when the instance
	// is next loaded.
	Broken int
}

// Recover restores the persistent instances after a start: timers are
// scheduled again, and instances interrupted mid-run resume from their last
// checkpoint in the background (their next step follows its failure
// policy, so a call that may have happened is not repeated blindly).
// Call it once, after Deploy.
func (e *Engine) Recover(ctx context.Context) (Recovered, error) {
	var r Recovered
	if e.store == nil {
		return r, nil
	}
	e.baseCtx = ctx
	procs := e.persistentByName()
	owner := map[string]*interp.Version{}
	var resume []*persist.Instance
	err := e.store.Instances(func(rec *persist.Instance) bool {
		if rec.Err != nil {
			_ = e.markBroken(rec.ID, rec.Err)
			r.Broken++
			return true
		}
		p := procs[rec.Process]
		if p == nil {
			r.Orphans++
			return true
		}
		if rec.State == persist.Waiting || rec.State == persist.Running || rec.State == persist.Suspended {
			_, err := e.decode(ctx, p, rec, nil)
			if err != nil && isCorrupt(err) {
				_ = e.markBroken(rec.ID, err)
				r.Broken++
				return true
			}
			if errors.Is(err, ErrVersionNotDeployed) {
				r.Orphans++
				return true
			}
		}
		owner[rec.ID] = p
		switch rec.State {
		case persist.Waiting:
			r.Waiting++
		case persist.Running:
			resume = append(resume, rec)
		case persist.Suspended:
			r.Suspended++
		}
		return true
	})
	if err != nil {
		return r, fmt.Errorf("recover: list instances: %w", err)
	}
	err = e.store.Timers(func(t persist.Timer) bool {
		if p := owner[t.InstanceID]; p != nil {
			e.schedule(p, t.InstanceID, t.Due.UnixNano())
			r.Timers++
		}
		return true
	})
	if err != nil {
		return r, fmt.Errorf("recover: list timers: %w", err)
	}
	var pending []persist.OutboxMessage
	if err := e.store.Outbox(func(m persist.OutboxMessage) bool { pending = append(pending, m); return true }); err != nil {
		return r, fmt.Errorf("recover: list outbox: %w", err)
	}
	for _, m := range pending {
		if e.damagedOutbox(m) {
			r.DamagedOutbox++
			continue
		}
		e.sendOutbox(m)
		r.Outbox++
	}
	for _, rec := range resume {
		p := owner[rec.ID]
		r.Resumed++
		go e.resumeInterrupted(p, rec.ID)
	}
	return r, nil
}

// persistentByName maps each persistent process's name to a version of
// it, retired versions too (an undeployed process's stored instances);
// the active version wins, and a load finds each instance's version.
func (e *Engine) persistentByName() map[string]*interp.Version {
	procs := map[string]*interp.Version{}
	for _, p := range append(e.Retired(), e.Processes()...) {
		if !p.InMemory {
			procs[p.Name.String()] = p
		}
	}
	return procs
}

func (e *Engine) resumeInterrupted(p *interp.Version, id string) {
	m := e.stripes.lock(id)
	defer m.Unlock()
	release, fence, err := e.own(e.baseCtx, id)
	if err != nil {
		e.log.Error("recovery: cannot take instance", slog.String(logInstance, id), slog.Any("err", err))
		return
	}
	defer release()
	in, err := e.load(e.baseCtx, p, id, fence)
	if errors.Is(err, persist.ErrNotFound) || errors.Is(err, ErrBroken) {
		return // an operator deleted it meanwhile, or it is broken (logged once when found)
	}
	if err != nil {
		e.log.Error("recovery: cannot load instance", slog.String(logInstance, id), slog.Any("err", err))
		return
	}
	if !in.MarkRecovered() {
		// An operator terminated or deleted it meanwhile.
		e.unload(in)
		return
	}
	if err := e.drive(in, interp.Delivery{Fence: fence, LastCommit: lastCommit(fence)}, false); err != nil {
		e.log.Warn("recovered instance ended with an error", slog.String(logInstance, id), slog.Any("err", err))
	}
}
