package cluster

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Routes keeps this node's in-memory route registrations (RegisterRoute)
// in step with a set its caller changes without waiting: the engine adds
// a route key when an in-memory instance starts waiting under it and
// removes it when the instance moves on, under its own registry lock.
// One goroutine writes the changes: the additions queued meanwhile in
// one transaction (so registrations cost one round trip per batch, not
// per instance), the removals after a grace period, so that a key removed
// and added again at once (an instance that takes a message and waits
// again under the same key) costs nothing. Wait lets a reply wait until
// the keys its partner will use are registered.
type Routes struct {
	n     *Node
	grace time.Duration
	log   *slog.Logger

	mu      sync.Mutex
	want    map[string]bool      // keys the engine has registered
	have    map[string]bool      // keys registered in etcd
	pending map[string]*regBatch // keys queued for registration
	next    *regBatch            // the batch being filled
	gone    map[string]time.Time // keys to unregister, since when
	kick    chan struct{}

	stop context.CancelFunc
	done chan struct{}
}

// regBatch is one transaction of registrations; done is closed when it
// has been tried, err says how it went.
type regBatch struct {
	keys []string
	done chan struct{}
	err  error
}

// NewRoutes starts the writer of n's in-memory routes. grace delays
// removals (zero means 1s). Close stops it.
func NewRoutes(n *Node, grace time.Duration) *Routes {
	if grace <= 0 {
		grace = time.Second
	}
	ctx, stop := context.WithCancel(context.Background())
	rs := &Routes{n: n, grace: grace, log: n.log, want: map[string]bool{}, have: map[string]bool{},
		pending: map[string]*regBatch{}, gone: map[string]time.Time{}, kick: make(chan struct{}, 1),
		stop: stop, done: make(chan struct{})}
	go rs.run(ctx)
	return rs
}

// Close stops the writer. Registered keys stay until the node's lease
// ends (Node.Close revokes it).
func (rs *Routes) Close() {
	rs.stop()
	<-rs.done
}

// Add registers key for this node, in the background. It does not block.
func (rs *Routes) Add(key string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.want[key] = true
	delete(rs.gone, key)
	if rs.have[key] || rs.pending[key] != nil {
		return
	}
	if rs.next == nil {
		rs.next = &regBatch{done: make(chan struct{})}
	}
	rs.next.keys = append(rs.next.keys, key)
	rs.pending[key] = rs.next
	rs.poke()
}

// Remove unregisters key, in the background after the grace period
// unless it is added again meanwhile. It does not block.
func (rs *Routes) Remove(key string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.want, key)
	if rs.have[key] {
		rs.gone[key] = time.Now()
		rs.poke()
	}
}

// Wait returns when every one of keys that is wanted is registered, or
// the registration that should have done it failed (its error), or ctx
// ends.
func (rs *Routes) Wait(ctx context.Context, keys []string) error {
	var bs []*regBatch
	rs.mu.Lock()
	for _, k := range keys {
		if b := rs.pending[k]; b != nil && !slices.Contains(bs, b) {
			bs = append(bs, b)
		}
	}
	rs.mu.Unlock()
	for _, b := range bs {
		select {
		case <-b.done:
			if b.err != nil {
				return b.err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// poke wakes the writer. The caller holds rs.mu.
func (rs *Routes) poke() {
	select {
	case rs.kick <- struct{}{}:
	default:
	}
}

func (rs *Routes) run(ctx context.Context) {
	defer close(rs.done)
	var tick <-chan time.Time
	// lost is the session's end; joined, once it has ended, the rejoin
	// (Options.Rejoin): the keys went with the old lease.
	lost, joined := rs.n.Done(), (<-chan struct{})(nil)
	for {
		select {
		case <-ctx.Done():
			return
		case <-rs.kick:
		case <-tick:
		case <-lost:
			lost, joined = nil, rs.n.Joined()
			continue
		case <-joined:
			d := rs.n.Done()
			select {
			case <-d:
				// Ended for good (no Options.Rejoin, or closed).
				joined = nil
				continue
			default:
			}
			lost, joined = d, nil
			rs.again()
		}
		rs.register(ctx)
		if rs.unregister(ctx) {
			tick = time.After(rs.grace / 2)
		} else {
			tick = nil
		}
	}
}

// again queues every wanted key for registration, after a rejoin.
func (rs *Routes) again() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	clear(rs.have)
	clear(rs.gone)
	for k := range rs.want {
		if rs.pending[k] != nil {
			continue
		}
		if rs.next == nil {
			rs.next = &regBatch{done: make(chan struct{})}
		}
		rs.next.keys = append(rs.next.keys, k)
		rs.pending[k] = rs.next
	}
}

// register writes the batch filled since the last one.
func (rs *Routes) register(ctx context.Context) {
	rs.mu.Lock()
	b := rs.next
	rs.next = nil
	rs.mu.Unlock()
	if b == nil {
		return
	}
	err := rs.n.RegisterRoutes(ctx, b.keys)
	if err != nil {
		rs.log.Warn("cluster: in-memory routes not registered; other nodes will not forward their messages here",
			slog.Int("routes", len(b.keys)), slog.Any("err", err))
	}
	rs.mu.Lock()
	for _, k := range b.keys {
		delete(rs.pending, k)
		if err != nil {
			continue
		}
		rs.have[k] = true
		if !rs.want[k] {
			rs.gone[k] = time.Now()
		}
	}
	b.err = err
	close(b.done)
	rs.mu.Unlock()
}

// unregister removes the keys gone for longer than the grace period; it
// reports whether some are still waiting for theirs to end.
func (rs *Routes) unregister(ctx context.Context) bool {
	now := time.Now()
	var due []string
	rs.mu.Lock()
	for k, since := range rs.gone {
		if now.Sub(since) >= rs.grace {
			due = append(due, k)
			delete(rs.gone, k)
		}
	}
	rs.mu.Unlock()
	for _, k := range due {
		err := rs.n.UnregisterRoute(ctx, k)
		rs.mu.Lock()
		switch {
		case rs.want[k]:
			// Added again while it was being removed: register anew.
			if err == nil {
				delete(rs.have, k)
				rs.mu.Unlock()
				rs.Add(k)
				continue
			}
		case err == nil:
			delete(rs.have, k)
		default:
			// Left registered: a stale route only makes another node
			// forward to this one, which answers as for no instance.
			rs.log.Debug("cluster: in-memory route not unregistered", slog.Any("err", err))
			delete(rs.have, k)
		}
		rs.mu.Unlock()
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.gone) > 0
}
