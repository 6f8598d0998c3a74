package process

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"

	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// ErrBroken marks an instance whose stored state (its record, its control
// state or a variable) cannot be decoded. Such an instance takes no
// message and runs no timer; an operator can only delete it. Nothing else
// is disturbed.
var ErrBroken = errors.New("instance is broken")

// brokenSet remembers the persistent instances found broken since start,
// with what failed to decode, so listings show them and each is logged
// once.
type brokenSet struct {
	mu sync.Mutex
	m  map[string]string
}

// isCorrupt reports whether err says stored state cannot be decoded (as
// opposed to a store that cannot be read at all, or a version that is no
// longer deployed).
func isCorrupt(err error) bool {
	return errors.Is(err, interp.ErrBadFrames) || errors.Is(err, interp.ErrBadVariable) || errors.Is(err, persist.ErrCorrupt)
}

// markBroken records that instance id cannot be decoded because of cause:
// the first time, it logs the id and the cause and counts it. It returns
// the error a message routed to the instance gets.
func (e *Engine) markBroken(id string, cause error) error {
	e.broken.mu.Lock()
	_, seen := e.broken.m[id]
	if !seen {
		if e.broken.m == nil {
			e.broken.m = map[string]string{}
		}
		e.broken.m[id] = cause.Error()
	}
	e.broken.mu.Unlock()
	if !seen {
		e.metrics.broken.Inc()
		e.log.Error("instance is broken: its stored state cannot be decoded; it takes no message until an operator deletes it",
			slog.String(logInstance, id), slog.Any("err", cause))
	}
	return brokenError(id, cause.Error())
}

func brokenError(id, cause string) error {
	return fmt.Errorf("instance %s: %w: its stored state cannot be decoded (%s); an operator can delete it", id, ErrBroken, cause)
}

// forgetBroken drops id from the broken set (it was deleted).
func (e *Engine) forgetBroken(id string) {
	e.broken.mu.Lock()
	delete(e.broken.m, id)
	e.broken.mu.Unlock()
}

// brokenSnapshot copies the broken set, nil when it is empty (the usual
// case costs a listing nothing).
func (e *Engine) brokenSnapshot() map[string]string {
	e.broken.mu.Lock()
	defer e.broken.mu.Unlock()
	if len(e.broken.m) == 0 {
		return nil
	}
	return maps.Clone(e.broken.m)
}

// deleteBroken removes a broken instance with everything stored under its
// ID (variables, routes, timers), without decoding it. The caller holds
// the instance's stripe and its lock across processes, whose fence the
// commit carries (own).
func (e *Engine) deleteBroken(id string, fence any) error {
	if err := e.store.Commit(&persist.Checkpoint{Instance: persist.Instance{ID: id}, Delete: true, Fence: fence}); err != nil {
		return err
	}
	e.forgetBroken(id)
	return nil
}
