package humantask

import (
	"context"
	"log/slog"
	"slices"
	"time"
)

// Deadlines are durable timers: each task's pending deadlines are part of
// its record (PendingDeadline: when it is due, whether it fired or was
// met), and the engine keeps one Clock timer per pending deadline of the
// tasks it knows. Recover schedules them again after a restart, and one
// that fell due while orchd was down fires at once. Firing is an update
// of the task like any operation (one store transaction): on a cluster
// every node may schedule the same deadline, and the first to fire it
// marks it fired, so it escalates once.

// deadlineDue is when dl falls due for a task created at now.
func deadlineDue(dl Deadline, now time.Time, data *exprData, ns map[string]string) (time.Time, error) {
	if dl.Until != "" {
		return evalUntil(dl.Until, data, ns)
	}
	d, err := evalDuration(dl.For, data, ns)
	if err != nil {
		return time.Time{}, err
	}
	return d.AddTo(now), nil
}

func timerKey(id, name string) string { return id + "\x00" + name }

// schedule sets a timer for each pending deadline of t.
func (e *Engine) schedule(t *Task) {
	if t.State.Final() {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	for _, d := range t.Deadlines {
		if d.Fired || d.Met {
			continue
		}
		k := timerKey(t.ID, d.Name)
		if old := e.timers[k]; old != nil {
			old.Stop()
		}
		id, name := t.ID, d.Name
		e.timers[k] = e.clock.AfterFunc(d.Due.Sub(e.clock.Now()), func() { e.fire(id, name) })
	}
}

// unschedule stops the timers of task id.
func (e *Engine) unschedule(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, tm := range e.timers {
		if len(k) > len(id) && k[:len(id)] == id && k[len(id)] == 0 {
			tm.Stop()
			delete(e.timers, k)
		}
	}
}

// unscheduleMet stops the timers of t's deadlines that were met.
func (e *Engine) unscheduleMet(t *Task) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, d := range t.Deadlines {
		if d.Met {
			if tm := e.timers[timerKey(t.ID, d.Name)]; tm != nil {
				tm.Stop()
				delete(e.timers, timerKey(t.ID, d.Name))
			}
		}
	}
}

// fire runs deadline name of task id: unless the task met it, each of
// its escalations whose condition holds reassigns the task and/or
// notifies people.
func (e *Engine) fire(id, name string) {
	e.mu.Lock()
	delete(e.timers, timerKey(id, name))
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return
	}
	var notify []CreateRequest
	var fired []string
	t, err := e.update("escalate", System(), id, func(t *Task, _ roleSet) error {
		notify, fired = nil, nil
		var pd *PendingDeadline
		for i := range t.Deadlines {
			if t.Deadlines[i].Name == name {
				pd = &t.Deadlines[i]
			}
		}
		if pd == nil || pd.Fired || pd.Met || t.State.Final() {
			return errNothing
		}
		pd.Fired = true
		def, ok := e.definitionAt(t.Bundle, t.Version, t.Name)
		if !ok {
			e.log.Warn("deadline fell due, but the task's definition is no longer deployed", slog.String("task", t.ID), slog.String("deadline", name))
			return nil
		}
		var dl *Deadline
		for i := range def.Deadlines {
			if def.Deadlines[i].Name == name {
				dl = &def.Deadlines[i]
			}
		}
		if dl == nil {
			return nil
		}
		input, _ := ParseXML(t.Input)
		data := &exprData{input: input, priority: t.Priority}
		for _, x := range dl.Escalations {
			if x.Condition != "" {
				ok, err := evalBool(x.Condition, data, def.Namespaces)
				if err != nil {
					e.log.Warn("escalation condition failed; the escalation is not taken", slog.String("task", t.ID), slog.String("escalation", x.Name), slog.Any("err", err))
					continue
				}
				if !ok {
					continue
				}
			}
			if x.Reassign != nil {
				po, err := resolve(x.Reassign, input, def.Namespaces)
				if err != nil {
					e.log.Warn("escalation's reassignment failed", slog.String("task", t.ID), slog.String("escalation", x.Name), slog.Any("err", err))
					continue
				}
				t.People[PotentialOwners] = po
				switch t.State {
				case Suspended:
					t.SuspendedIn = Ready
				default:
					t.State = Ready
				}
				t.ActualOwner, t.Claimed = "", time.Time{}
			}
			if x.Notify != nil && x.Notify.Interface.Operation != "" {
				notify = append(notify, CreateRequest{Def: x.Notify, Bundle: t.Bundle, Version: t.Version, Input: t.Input,
					Process: t.Process, Instance: t.Instance})
			}
			t.Escalations = append(t.Escalations, x.Name)
			fired = append(fired, x.Name)
		}
		return nil
	})
	if err != nil {
		if err != errNothing {
			e.log.Warn("deadline not run; it is tried again at the next start", slog.String("task", id), slog.String("deadline", name), slog.Any("err", err))
		}
		return
	}
	for _, x := range fired {
		e.metrics.escalated.Inc()
		e.emit(TaskEscalatedEvent, &t, x)
	}
	for _, r := range notify {
		if _, err := e.Create(context.Background(), r); err != nil {
			e.log.Warn("escalation's notification not created", slog.String("task", id), slog.Any("err", err))
		}
	}
	e.schedule(&t)
}

// Reschedule reads the stored tasks and schedules every pending deadline
// of the open ones, as Recover does at start. On a cluster a deadline is
// scheduled by the node that created the task (and by every node that
// started since); when a member leaves, the survivors call Reschedule so
// that the deadlines of the tasks the departed node created fall due on
// them: each survivor fires them, the first marks them, they escalate
// once. A deadline already scheduled here is set again for the same
// time.
func (e *Engine) Reschedule() {
	n := 0
	err := e.eachTask(func(t *Task) bool {
		if !t.State.Final() && slices.ContainsFunc(t.Deadlines, func(d PendingDeadline) bool { return !d.Fired && !d.Met }) {
			e.schedule(t)
			n++
		}
		return true
	})
	if err != nil {
		e.log.Warn("task deadlines not rescheduled", slog.Any("err", err))
		return
	}
	if n > 0 {
		e.log.Info("task deadlines rescheduled", slog.Int("tasks", n))
	}
}
