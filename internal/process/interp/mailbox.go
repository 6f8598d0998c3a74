package interp

import (
	"context"

	"github.com/orchd/orchd/internal/exchange"
)

// An in-memory instance's mailbox: while its run waits for the answers
// of partner calls (awaitAnswers), a message for one of its waiting
// threads is posted to the run instead of waiting for the run to end (a
// partner may call the process back before it answers). The host opens
// the mailbox (Host.OpenMail) after registering the keys MailKeys
// names, posts messages it routes there, and closes it; the mailbox's
// state is guarded by the host's lock that guards those routes.

// Mail is a message handed to an in-memory instance's run while it waits
// for partner answers: a branch waiting for a message takes it without
// waiting for the calls of the other branches to end. Done receives what
// the sender's Dispatch returns: nil, an error, or an AwaitReply.
type Mail struct {
	Ctx  context.Context
	Ex   *exchange.Exchange
	Done chan error
}

// MailKeys are the route keys of the messages the instance's waiting
// threads wait for, while its run waits for partner answers: none for a
// persistent instance or one with a message not yet taken.
func (in *Instance) MailKeys() []string {
	if !in.proc.InMemory || in.inbox != nil {
		return nil
	}
	var keys []string
	for _, t := range in.threads {
		if t.state != tWaiting {
			continue
		}
		for i := range t.waitKeys {
			if k := in.WaitRouteKey(t, i); k != "" {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// OpenMailbox opens the mailbox (under the host's lock).
func (in *Instance) OpenMailbox() { in.mailOpen = true }

// MailboxOpen reports whether messages can be posted to the run (under
// the host's lock).
func (in *Instance) MailboxOpen() bool { return in.mailOpen }

// Post hands ex to the run, whose mailbox is open (under the host's
// lock); the sender waits on the returned mail's Done.
func (in *Instance) Post(ctx context.Context, ex *exchange.Exchange) *Mail {
	m := &Mail{Ctx: ctx, Ex: ex, Done: make(chan error, 1)}
	in.mailQ = append(in.mailQ, m)
	select {
	case in.calls.Notify <- struct{}{}:
	default:
	}
	return m
}

// CloseMailbox closes the mailbox and returns what was posted (under the
// host's lock).
func (in *Instance) CloseMailbox() []*Mail {
	in.mailOpen = false
	q := in.mailQ
	in.mailQ = nil
	return q
}

// TakeMail delivers posted mail m to the run (the host delivers the rest
// again).
func (in *Instance) TakeMail(m *Mail) {
	in.inbox = m.Ex
	in.pendingMail = append(in.pendingMail, m)
	in.CheckAmbiguous()
	in.ReadyAll()
}

// settleMail tells the senders of the messages handed to the run what
// became of them.
func (in *Instance) settleMail() {
	for _, m := range in.pendingMail {
		if in.inbox == m.Ex {
			in.inbox = nil
			m.Done <- exchange.ClientError("instance of process %s is not waiting for %s now", in.proc.Name.Local, m.Ex.Operation.Name)
			continue
		}
		var err error
		if !m.Ex.Operation.OneWay() {
			for _, r := range in.reqs {
				if r.Ex == m.Ex && r.State.Load() == 0 {
					if r.Done == nil {
						r.Done = make(chan struct{})
					}
					err = &AwaitReply{Req: r, Timeout: in.host.ReplyTimeout(in.proc, m.Ex), Op: m.Ex.Operation.Name}
				}
			}
		}
		m.Done <- err
	}
	in.pendingMail = in.pendingMail[:0]
}
