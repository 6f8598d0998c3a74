package humantask

import "github.com/orchd/orchd/internal/events"

// The task events the engine emits (Options.Events).
const (
	TaskCreatedEvent   = events.TaskCreated
	TaskClaimedEvent   = events.TaskClaimed
	TaskEndedEvent     = events.TaskEnded
	TaskEscalatedEvent = events.TaskEscalated
)

// emit sends a task event: Task is the task id, Instance the process
// instance that created the task (so its timeline shows the task), Name
// the definition's local name, Detail its state (or the escalation that
// fired), Variable who acted.
func (e *Engine) emit(k events.Kind, t *Task, detail string) {
	if e.opts.Events == nil {
		return
	}
	ev := events.Event{Kind: k, Time: e.clock.Now(), Process: t.Process, Version: t.Version, Instance: t.Instance, Task: t.ID,
		Name: t.Name.Local, Detail: string(t.State)}
	switch k {
	case events.TaskEscalated:
		ev.Detail = detail
	default:
		ev.Variable = detail
	}
	e.opts.Events.Emit(ev)
}
