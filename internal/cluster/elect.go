package cluster

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/client/v3/concurrency"
)

// Lead runs fn while this node leads the election name (for example
// "outbox": one node drains the outbox of RELIABLE sends at a time). It
// campaigns (concurrency.Election on the node's session), calls fn with a
// context that ends when ctx ends or the node's session is lost, resigns
// when fn returns, and campaigns again: when the leader dies, its lease
// expires, its election key goes with it, and the next candidate's fn
// starts. Lead returns when ctx ends (nil) or the session is lost
// (ErrLost).
//
// fn must stop promptly when its context ends; a leader cut off from etcd
// learns of it only when its lease runs out, so fn's work must be safe to
// repeat by the next leader (the outbox is at-least-once by design).
func (n *Node) Lead(ctx context.Context, name string, fn func(context.Context)) error {
	sess := n.session()
	if sess == nil {
		return fmt.Errorf("cluster: lead %s: %w; rejoining", name, ErrLost)
	}
	el := concurrency.NewElection(sess, n.pfx+"elect/"+name)
	for {
		if err := el.Campaign(ctx, n.opts.ID); err != nil {
			select {
			case <-sess.Done():
				return fmt.Errorf("cluster: lead %s: %w", name, ErrLost)
			default:
			}
			if ctx.Err() != nil {
				return nil
			}
			return unavailable("cluster: campaign "+name, err)
		}
		n.log.Info("cluster leader", "election", name)
		lctx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-sess.Done():
			case <-lctx.Done():
			}
			cancel()
		}()
		fn(lctx)
		cancel()
		rctx, rcancel := n.opCtx(context.WithoutCancel(ctx))
		err := el.Resign(rctx)
		rcancel()
		select {
		case <-sess.Done():
			return fmt.Errorf("cluster: lead %s: %w", name, ErrLost)
		default:
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return unavailable("cluster: resign "+name, err)
		}
	}
}

// Leader returns the ID of the node leading election name, or "" if none.
func (n *Node) Leader(ctx context.Context, name string) (string, error) {
	sess := n.session()
	if sess == nil {
		return "", fmt.Errorf("cluster: leader %s: %w; rejoining", name, ErrLost)
	}
	ctx, cancel := n.opCtx(ctx)
	defer cancel()
	el := concurrency.NewElection(sess, n.pfx+"elect/"+name)
	resp, err := el.Leader(ctx)
	if err == concurrency.ErrElectionNoLeader {
		return "", nil
	}
	if err != nil {
		return "", unavailable("cluster: leader "+name, err)
	}
	return string(resp.Kvs[0].Value), nil
}
