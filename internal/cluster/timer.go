package cluster

import (
	"context"
	"errors"
	"fmt"
)

// FireTimer runs fire for a due timer of instance id, once across the
// cluster: only if this node is Responsible for id under the current
// membership and can take the instance's lock without waiting. fire gets
// the lock and must commit the instance's new state in one etcd
// transaction that carries lock.Fence() and removes the timer record (so a
// node that takes the instance over later finds the timer gone); FireTimer
// releases the lock afterwards. It reports whether fire ran; a timer that
// is not this node's, or whose instance another node is running, is
// skipped (false, nil) and left to its owner.
//
// Why once: two nodes can both believe they are responsible while a
// membership change propagates, but the instance lock lets only one of
// them run, and the fenced commit that removes the timer lets the other,
// which may get the lock next, see that it is gone. When the responsible
// node dies, its lease ends, the membership watch of the others drops it,
// and the next node by rendezvous hashing fires its timers on its next
// scan.
func (n *Node) FireTimer(ctx context.Context, id string, fire func(context.Context, *Lock) error) (bool, error) {
	if !n.Responsible(id) {
		return false, nil
	}
	l, err := n.TryAcquire(ctx, id)
	if errors.Is(err, ErrHeld) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ferr := fire(ctx, l)
	rerr := l.Release(context.WithoutCancel(ctx))
	if ferr != nil {
		return true, fmt.Errorf("cluster: fire timer of %s: %w", id, ferr)
	}
	return true, rerr
}
