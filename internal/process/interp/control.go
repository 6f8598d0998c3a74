package interp

import (
	"fmt"

	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/persist"
)

// An operator's actions on an instance (the management API's
// mgmt.Action): the interpreter changes the instance; the engine finds,
// locks and runs it (Run, Terminate) and stores what the actions on a
// stored record alone change.

// OpSuspendReason is the stored fault of an instance an operator
// suspended.
const OpSuspendReason = "suspended by an operator"

// failed finds the frame the instance is suspended on, if any.
func (in *Instance) failed() (*thread, *frame) {
	for _, t := range in.threads {
		if t.state != tDone && len(t.stack) > 0 && failedFrame(t.Top()) {
			return t, t.Top()
		}
	}
	return nil, nil
}

// OperatorSuspend suspends a waiting in-memory instance: it takes no
// message or timer until resumed. The caller holds the host's lock that
// guards what routes a message to it.
func (in *Instance) OperatorSuspend() error {
	if in.suspended {
		return fmt.Errorf("already suspended: %w", mgmt.ErrConflict)
	}
	in.suspended = true
	in.proc.Stats.Suspended.Add(1)
	return nil
}

// OperatorResume lets an in-memory instance an operator suspended go on;
// the host then runs it (Run, for the timer it may have missed).
func (in *Instance) OperatorResume() error {
	if !in.suspended {
		return fmt.Errorf("not suspended: %w", mgmt.ErrConflict)
	}
	in.suspended = false
	return nil
}

// ClearSuspended forgets an operator's suspension of an instance that is
// being terminated.
func (in *Instance) ClearSuspended() { in.suspended = false }

// Resolve applies an operator's action a (resume, retry, fault, cancel)
// to a loaded persistent instance that is suspended, readying it for the
// run the host makes next: resume for an instance suspended without a
// failed activity; retry (the activity again), fault (it throws
// activityFailure) or cancel (it completes without effect) for one
// suspended on a failed activity.
func (in *Instance) Resolve(a mgmt.Action) error {
	if in.state != persist.Suspended {
		return fmt.Errorf("the instance is %s, not suspended: %w", in.state, mgmt.ErrConflict)
	}
	_, f := in.failed()
	switch {
	case a == mgmt.Resume && f != nil:
		return fmt.Errorf("it is suspended on a failed activity (%s): use retry, fault or cancel: %w", in.suspendReason, mgmt.ErrConflict)
	case a != mgmt.Resume && f == nil:
		return fmt.Errorf("it is not suspended on a failed activity: use resume: %w", mgmt.ErrConflict)
	}
	switch a {
	case mgmt.Resume:
		in.suspendReason = ""
	case mgmt.Retry:
		f.k, f.pc, f.due = 0, 0, 0
		f.i++ // counts the operator's retries (the failure's attempts)
	case mgmt.Fault:
		f.k = kFault
	case mgmt.Cancel:
		f.k = kCancel
	}
	in.state = persist.Running
	return nil
}
