package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/process/migrate"
)

// Migration (internal/process/migrate decides what can move): the
// waiting instances of one version of a process move to another, one at
// a time, each under its lock as a timer's run would take it. A
// persistent instance is loaded, checked, rebound to the target and run
// at once with no message: its threads wait again, now on the target's
// activities, and the run's one checkpoint writes the record naming the
// target (its fingerprint), all its variables, and its routes and timer
// (the same keys: they name the process, not the version). Until that
// commit the store holds it on the source; after it, on the target; a
// crash in between loses nothing and doubles nothing. An in-memory
// instance is rebound in place and runs the same way.

// defaultMigrateMax is how many instances one migration moves when the
// request sets no Max.
const defaultMigrateMax = 100

// Migrate implements the engine's half of mgmt.Migrator.
func (e *Engine) Migrate(ctx context.Context, r mgmt.MigrateRequest) (*mgmt.MigrateResult, error) {
	if r.From == r.To || r.From < 1 || r.To < 1 {
		return nil, fmt.Errorf("migrate %s from version %d to %d: want two versions: %w", r.Process, r.From, r.To, mgmt.ErrInvalid)
	}
	if r.Query.State != "" && r.Query.State != mgmt.StateWaiting {
		return nil, fmt.Errorf("migrate: only waiting instances move (state %q): %w", r.Query.State, mgmt.ErrInvalid)
	}
	e.mu.RLock()
	from, _ := e.findLocked(r.Process, r.From)
	to, _ := e.findLocked(r.Process, r.To)
	e.mu.RUnlock()
	if from == nil {
		return nil, notFound(r.Process, r.From)
	}
	if to == nil {
		return nil, notFound(r.Process, r.To)
	}
	if from.InMemory != to.InMemory {
		return nil, fmt.Errorf("migrate %s: version %d is %s and version %d is not: %w", r.Process, r.From, kindOf(from), r.To, mgmt.ErrInvalid)
	}
	if !from.InMemory && e.store == nil {
		return nil, fmt.Errorf("migrate: no instance store: %w", mgmt.ErrUnavailable)
	}
	most := r.Max
	if most <= 0 {
		most = defaultMigrateMax
	}
	ids, truncated, err := e.waitingOf(ctx, r, from.InMemory, most)
	if err != nil {
		return nil, err
	}
	res := &mgmt.MigrateResult{Process: from.Name.Local, From: r.From, To: r.To, DryRun: r.DryRun,
		Matched: len(ids), Moved: []string{}, Truncated: truncated}
	pair := migrate.Compare(from.Plan, to.Plan, fmt.Sprintf("version %d", r.To), migrate.Mapping{Variables: r.Variables})
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return res, nil
		}
		var reasons []string
		var err error
		if from.InMemory {
			reasons, err = e.migrateMem(ctx, id, from, to, pair, r.DryRun)
		} else {
			reasons, err = e.migrateStored(ctx, id, from, to, pair, r.DryRun)
		}
		if err != nil {
			reasons = append(reasons, err.Error())
		}
		if len(reasons) > 0 {
			res.Refused = append(res.Refused, mgmt.MigrateRefusal{ID: id, Reasons: reasons})
			continue
		}
		res.Moved = append(res.Moved, id)
		if !r.DryRun {
			to.EmitLifecycle(id, events.InstanceMigrated, fmt.Sprintf("from version %d to version %d", from.Number, to.Number))
		}
	}
	if !r.DryRun && len(res.Moved) > 0 {
		e.log.Info("instances migrated", slog.String(logProcess, from.Name.String()), slog.Int("from", r.From), slog.Int("to", r.To),
			slog.Int("moved", len(res.Moved)), slog.Int("refused", len(res.Refused)))
	}
	return res, nil
}

func kindOf(p *interp.Version) string {
	if p.InMemory {
		return "in-memory"
	}
	return "persistent"
}

// waitingOf lists the ids of the waiting instances of version r.From
// that r.Query selects, at most most (truncated: more matched): those
// of this engine (in-memory: this node's).
func (e *Engine) waitingOf(ctx context.Context, r mgmt.MigrateRequest, inMemory bool, most int) ([]string, bool, error) {
	q := r.Query
	q.Process, q.Version, q.State, q.After, q.Scope = r.Process, r.From, mgmt.StateWaiting, "", ""
	if inMemory {
		q.Scope = mgmt.ScopeLocal
	}
	return mgmt.InstanceIDs(ctx, e.QueryInstances, q, most)
}

// migrateStored moves persistent instance id from version from to to
// (dry: only checks), under its lock; it returns why it cannot.
func (e *Engine) migrateStored(ctx context.Context, id string, from, to *interp.Version, pair *migrate.Pair, dry bool) ([]string, error) {
	m := e.stripes.of(id)
	if err := lockWithin(ctx, &m.Mutex); err != nil {
		m.unref()
		return nil, err
	}
	defer m.Unlock()
	release, fence, err := e.own(ctx, id)
	if err != nil {
		return nil, err
	}
	defer release()
	in, err := e.load(e.baseCtx, from, id, fence)
	if errors.Is(err, persist.ErrNotFound) {
		return []string{"it ended meanwhile"}, nil
	}
	if err != nil {
		return nil, err
	}
	mv, reasons := e.checkMove(in, from, pair)
	if reasons != nil || dry {
		e.unload(in)
		return reasons, nil
	}
	if err := in.Rebind(to, mv); err != nil {
		e.unload(in)
		return nil, err
	}
	out := in.Run(interp.Delivery{Fence: fence, LastCommit: lastCommit(fence)})
	err = e.settle(in, nil, out)
	if out.NotStored != nil {
		// The store still holds it on the source version.
		return []string{fmt.Sprintf("its checkpoint on version %d was not stored, it stays on version %d: %v", to.Number, from.Number, out.NotStored)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("its run on version %d: %w", to.Number, err)
	}
	return nil, nil
}

// migrateMem moves in-memory instance id (dry: only checks), under its
// lock; it returns why it cannot.
func (e *Engine) migrateMem(ctx context.Context, id string, from, to *interp.Version, pair *migrate.Pair, dry bool) ([]string, error) {
	in, unlock, err := e.takeMem(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	mv, reasons := e.checkMove(in, from, pair)
	if reasons != nil || dry {
		return reasons, nil
	}
	if !e.claim(in, func() bool { return e.reg.live[id] == in }) {
		return []string{"it moved on meanwhile"}, nil
	}
	if err := in.Rebind(to, mv); err != nil {
		// Waiting as it was: register it again.
		_ = e.drive(in, interp.Delivery{Ctx: e.baseCtx}, false)
		return nil, err
	}
	return nil, e.drive(in, interp.Delivery{Ctx: e.baseCtx}, false)
}

// checkMove checks a loaded or locked instance of version from.
func (e *Engine) checkMove(in *interp.Instance, from *interp.Version, pair *migrate.Pair) (*migrate.Move, []string) {
	if v := in.Version(); v != from {
		return nil, []string{fmt.Sprintf("it is on version %d now", v.Number)}
	}
	if in.IsSuspended() {
		return nil, []string{"it is suspended"}
	}
	return pair.Check(in.Where())
}
