package mgmtbackend

import (
	"context"
	"errors"
	"fmt"

	"github.com/orchd/orchd/internal/humantask"
	"github.com/orchd/orchd/internal/mgmt"
)

// errNoTasks is the answer of the task routes of a server without a task
// engine.
var errNoTasks = fmt.Errorf("this orchd serves no human tasks: %w", mgmt.ErrUnavailable)

// TaskUser implements mgmt.TaskBackend.
func (b *Backend) TaskUser(ctx context.Context, user, password string) (mgmt.TaskUser, error) {
	if b.tasks == nil {
		return mgmt.TaskUser{}, errNoTasks
	}
	id, err := b.tasks.Authenticate(user, password)
	if errors.Is(err, humantask.ErrAuthBusy) {
		return mgmt.TaskUser{}, fmt.Errorf("%w: %w", mgmt.ErrUnavailable, err)
	}
	if err != nil {
		return mgmt.TaskUser{}, fmt.Errorf("%w: unknown user or wrong password", mgmt.ErrUnauthorized)
	}
	return mgmt.TaskUser{Name: id.User, Groups: id.Groups}, nil
}

// who is the identity of an authenticated person.
func who(u mgmt.TaskUser) humantask.Identity {
	return humantask.Identity{User: u.Name, Groups: u.Groups}
}

// Tasks implements mgmt.TaskBackend.
func (b *Backend) Tasks(ctx context.Context, u mgmt.TaskUser, q mgmt.TaskQuery) ([]mgmt.Task, error) {
	if b.tasks == nil {
		return nil, errNoTasks
	}
	f := humantask.Filter{Name: q.Name, Role: humantask.Role(q.Role), Limit: q.Limit}
	for _, s := range q.States {
		st, ok := humantask.ParseState(s)
		if !ok {
			return nil, fmt.Errorf("%w: state %q: want one of READY, RESERVED, IN_PROGRESS, SUSPENDED, COMPLETED, FAILED, ERROR, EXITED, OBSOLETE", mgmt.ErrInvalid, s)
		}
		f.States = append(f.States, st)
	}
	ts, err := b.tasks.List(ctx, who(u), f)
	if err != nil {
		return nil, taskErr(err)
	}
	out := make([]mgmt.Task, len(ts))
	for i := range ts {
		out[i] = taskOf(&ts[i])
	}
	return out, nil
}

// Task implements mgmt.TaskBackend.
func (b *Backend) Task(ctx context.Context, u mgmt.TaskUser, id string) (*mgmt.Task, error) {
	if b.tasks == nil {
		return nil, errNoTasks
	}
	t, err := b.tasks.Get(ctx, who(u), id)
	if err != nil {
		return nil, taskErr(err)
	}
	mt := taskOf(&t)
	return &mt, nil
}

// ActOnTask implements mgmt.TaskBackend.
func (b *Backend) ActOnTask(ctx context.Context, u mgmt.TaskUser, id string, a mgmt.TaskAction) (*mgmt.Task, error) {
	if b.tasks == nil {
		return nil, errNoTasks
	}
	t, err := b.tasks.Do(ctx, who(u), id, humantask.Action{Op: a.Op, Output: a.Output, Fault: humantask.Fault{Name: a.FaultName, Detail: a.FaultDetail},
		User: a.User, To: humantask.Entities{Users: a.Users, Groups: a.Groups}, Priority: a.Priority, Comment: a.Comment})
	if err != nil {
		return nil, taskErr(err)
	}
	mt := taskOf(&t)
	return &mt, nil
}

// taskErr maps the task engine's errors to the API's sentinels.
func taskErr(err error) error {
	switch {
	case errors.Is(err, humantask.ErrNotFound):
		return fmt.Errorf("%w: %w", mgmt.ErrNotFound, err)
	case errors.Is(err, humantask.ErrForbidden):
		return fmt.Errorf("%w: %w", mgmt.ErrForbidden, err)
	case errors.Is(err, humantask.ErrState):
		return fmt.Errorf("%w: %w", mgmt.ErrConflict, err)
	case errors.Is(err, humantask.ErrArgument), errors.Is(err, humantask.ErrOperation):
		return fmt.Errorf("%w: %w", mgmt.ErrInvalid, err)
	case errors.Is(err, humantask.ErrAuth):
		return fmt.Errorf("%w: %w", mgmt.ErrUnauthorized, err)
	}
	return err
}

// taskOf is the API's shape of t.
func taskOf(t *humantask.Task) mgmt.Task {
	mt := mgmt.Task{ID: t.ID, Name: t.Name.Local, Namespace: t.Name.Space, Bundle: t.Bundle, Version: t.Version,
		Notification: t.Notification, State: string(t.State), Priority: t.Priority, Skipable: t.Skipable,
		Subject: t.Subject, Description: t.Description, Parameters: t.Parameters, Input: t.Input, Output: t.Output,
		ActualOwner: t.ActualOwner, Created: t.Created, Updated: t.Updated, Escalations: t.Escalations}
	if t.Fault != nil {
		mt.FaultName = t.Fault.Name
	}
	if !t.Ended.IsZero() {
		end := t.Ended
		mt.Ended = &end
	}
	if len(t.People) > 0 {
		mt.People = map[string]mgmt.TaskPeople{}
		for r, e := range t.People {
			mt.People[string(r)] = mgmt.TaskPeople{Users: e.Users, Groups: e.Groups}
		}
	}
	for _, d := range t.Deadlines {
		mt.Deadlines = append(mt.Deadlines, mgmt.TaskDeadline{Name: d.Name, Kind: string(d.Kind), Due: d.Due, Fired: d.Fired, Met: d.Met})
	}
	for _, c := range t.Comments {
		mt.Comments = append(mt.Comments, mgmt.TaskComment{By: c.By, At: c.At, Text: c.Text})
	}
	return mt
}
