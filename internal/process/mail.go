package process

import (
	"slices"

	"github.com/orchd/orchd/internal/process/interp"
)

// openMail lets the messages in's waiting threads wait for reach its run
// while it waits for partner answers (an in-memory instance whose
// branches call partners: one may call the process back before it
// answers). It reports whether any thread waits for a message.
func (e *Engine) openMail(in *interp.Instance) bool {
	keys := in.MailKeys()
	if len(keys) == 0 {
		return false
	}
	e.reg.mu.Lock()
	var mine []string
	for _, k := range keys {
		if e.reg.routes[k] == nil {
			e.reg.routes[k] = in
			mine = append(mine, k)
		}
	}
	if len(mine) > 0 {
		e.reg.mail[in] = mine
	}
	e.nameLocked(in)
	in.OpenMailbox()
	e.releaseHeldLocked(mine)
	e.reg.mu.Unlock()
	return true
}

// closeMail ends openMail: the first message posted meanwhile goes to
// the run, the others are delivered again.
func (e *Engine) closeMail(in *interp.Instance) {
	e.reg.mu.Lock()
	q := in.CloseMailbox()
	regd := e.reg.keys[in]
	for _, k := range e.reg.mail[in] {
		if e.reg.routes[k] == in && !slices.Contains(regd, k) {
			delete(e.reg.routes, k)
		}
	}
	delete(e.reg.mail, in)
	e.reg.mu.Unlock()
	if len(q) == 0 {
		return
	}
	in.TakeMail(q[0])
	for _, m := range q[1:] {
		go func() { m.Done <- e.deliver(m.Ctx, in.Version(), m.Ex, nil) }()
	}
}
