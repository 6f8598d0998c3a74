package process

import (
	"context"
	"slices"

	"github.com/orchd/orchd/internal/exchange"
)

// post queues ex for the run. The caller holds e.reg.mu and has seen
// in.mailOpen.
func post(in *instance, ctx context.Context, ex *exchange.Exchange) *mail {
	m := &mail{ctx: ctx, ex: ex, done: make(chan error, 1)}
	in.mailQ = append(in.mailQ, m)
	select {
	case in.calls.notify <- struct{}{}:
	default:
	}
	return m
}

// openMail makes the running instance findable by the messages its
// waiting threads wait for, while the run waits for partner answers.
func (e *Engine) openMail(in *instance) bool {
	if !in.p.InMemory || in.inbox != nil {
		return false
	}
	opened := false
	e.reg.mu.Lock()
	for _, t := range in.threads {
		if t.state != tWaiting {
			continue
		}
		for _, k := range t.waitKeys {
			if k == "" {
				continue
			}
			opened = true
			if e.reg.routes[k] == nil {
				e.reg.routes[k] = in
				in.mailRoutes = append(in.mailRoutes, k)
			}
		}
	}
	if opened {
		e.nameLocked(in)
		in.mailOpen = true
		e.releaseHeldLocked(in.mailRoutes)
	}
	e.reg.mu.Unlock()
	return opened
}

// closeMail ends what openMail began and gives the first message that
// came to the run's threads; any others are delivered again.
func (e *Engine) closeMail(in *instance) {
	e.reg.mu.Lock()
	in.mailOpen = false
	for _, k := range in.mailRoutes {
		if e.reg.routes[k] == in && !slices.Contains(in.regRoutes, k) {
			delete(e.reg.routes, k)
		}
	}
	in.mailRoutes = in.mailRoutes[:0]
	q := in.mailQ
	in.mailQ = nil
	e.reg.mu.Unlock()
	if len(q) == 0 {
		return
	}
	in.inbox = q[0].ex
	in.pendingMail = append(in.pendingMail, q[0])
	in.checkAmbiguous()
	in.readyAll()
	for _, m := range q[1:] {
		go func() { m.done <- e.deliver(m.ctx, in.p, m.ex, nil) }()
	}
}

// settleMail tells the senders of the messages handed to the run what
// became of them: not taken (a Client error), taken one-way (nil), or
// taken request-response (an awaitReply unless already answered).
func (e *Engine) settleMail(in *instance) {
	for _, m := range in.pendingMail {
		if in.inbox == m.ex {
			in.inbox = nil
			m.done <- exchange.ClientError("instance of process %s is not waiting for %s now", in.p.Name.Local, m.ex.Operation.Name)
			continue
		}
		var err error
		if !m.ex.Operation.OneWay() {
			for _, r := range in.reqs {
				if r.ex == m.ex && r.state.Load() == 0 {
					if r.done == nil {
						r.done = make(chan struct{})
					}
					err = &awaitReply{req: r, timeout: e.replyTimeout(in.p, m.ex), op: m.ex.Operation.Name}
				}
			}
		}
		m.done <- err
	}
	in.pendingMail = in.pendingMail[:0]
}
