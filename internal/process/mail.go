package process

import (
	"context"
	"slices"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/interp"
)

// post queues ex for the run. The caller holds e.reg.mu and has seen
// in.mailOpen.
func post(in *interp.Instance, ctx context.Context, ex *exchange.Exchange) *interp.Mail {
	m := &interp.Mail{Ctx: ctx, Ex: ex, Done: make(chan error, 1)}
	in.MailQ = append(in.MailQ, m)
	select {
	case in.Calls.Notify <- struct{}{}:
	default:
	}
	return m
}

// openMail makes the running instance findable by the messages its
// waiting threads wait for, while the run waits for partner answers.
func (e *Engine) openMail(in *interp.Instance) bool {
	if !in.Proc.InMemory || in.Inbox != nil {
		return false
	}
	opened := false
	e.reg.mu.Lock()
	for _, t := range in.Threads {
		if t.State != interp.TWaiting {
			continue
		}
		for i := range t.WaitKeys {
			k := in.WaitRouteKey(t, i)
			if k == "" {
				continue
			}
			opened = true
			if e.reg.routes[k] == nil {
				e.reg.routes[k] = in
				in.MailRoutes = append(in.MailRoutes, k)
			}
		}
	}
	if opened {
		e.nameLocked(in)
		in.MailOpen = true
		e.releaseHeldLocked(in.MailRoutes)
	}
	e.reg.mu.Unlock()
	return opened
}

// closeMail ends what openMail began and gives the first message that
// came to the run's threads; any others are delivered again.
func (e *Engine) closeMail(in *interp.Instance) {
	e.reg.mu.Lock()
	in.MailOpen = false
	for _, k := range in.MailRoutes {
		if e.reg.routes[k] == in && !slices.Contains(in.RegRoutes, k) {
			delete(e.reg.routes, k)
		}
	}
	in.MailRoutes = in.MailRoutes[:0]
	q := in.MailQ
	in.MailQ = nil
	e.reg.mu.Unlock()
	if len(q) == 0 {
		return
	}
	in.Inbox = q[0].Ex
	in.PendingMail = append(in.PendingMail, q[0])
	in.CheckAmbiguous()
	in.ReadyAll()
	for _, m := range q[1:] {
		go func() { m.Done <- e.deliver(m.Ctx, in.Proc, m.Ex, nil) }()
	}
}

// settleMail tells the senders of the messages handed to the run what
// became of them: not taken (a Client error), taken one-way (nil), or
// taken request-response (an awaitReply unless already answered).
func (e *Engine) settleMail(in *interp.Instance) {
	for _, m := range in.PendingMail {
		if in.Inbox == m.Ex {
			in.Inbox = nil
			m.Done <- exchange.ClientError("instance of process %s is not waiting for %s now", in.Proc.Name.Local, m.Ex.Operation.Name)
			continue
		}
		var err error
		if !m.Ex.Operation.OneWay() {
			for _, r := range in.Reqs {
				if r.Ex == m.Ex && r.State.Load() == 0 {
					if r.Done == nil {
						r.Done = make(chan struct{})
					}
					err = &interp.AwaitReply{Req: r, Timeout: e.replyTimeout(in.Proc, m.Ex), Op: m.Ex.Operation.Name}
				}
			}
		}
		m.Done <- err
	}
	in.PendingMail = in.PendingMail[:0]
}
