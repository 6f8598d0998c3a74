package humantask

import (
	"errors"
	"fmt"
)

// The errors of task operations. An operation's error wraps one of them
// (errors.Is), with the task, the operation and the reason in its text;
// the management API maps them to HTTP statuses and the WS-HT SOAP
// operations to WS-HT faults (illegalArgument, illegalState,
// illegalAccess, illegalOperation).
var (
	// ErrNotFound: no task has that id, or the caller may not see it
	// (the two are one answer, so an id tells nobody it exists).
	ErrNotFound = errors.New("no such task")
	// ErrForbidden: the caller sees the task but its roles do not allow
	// the operation (WS-HT illegalAccess).
	ErrForbidden = errors.New("not allowed")
	// ErrState: the operation does not apply in the task's state
	// (WS-HT illegalState).
	ErrState = errors.New("illegal state")
	// ErrArgument: an argument is malformed (WS-HT illegalArgument).
	ErrArgument = errors.New("illegal argument")
	// ErrOperation: the task does not support the operation (skip of a
	// task that is not skipable; WS-HT illegalOperation).
	ErrOperation = errors.New("illegal operation")
	// ErrAuth: the user is unknown or the password wrong (one answer for
	// both, given in the same time).
	ErrAuth = errors.New("authentication failed")
	// ErrAuthBusy: every password check slot (Options.MaxAuthChecks) is
	// taken; the caller answers "busy" (HTTP 503) and the client tries
	// again. A check costs tens of milliseconds of CPU and needs no
	// valid user, so they are bounded as WS-Security's are.
	ErrAuthBusy = errors.New("too many password checks running; try again")
	// ErrNoDefinition: no deployed task definition publishes the service
	// a process called.
	ErrNoDefinition = errors.New("no task definition")
)

// opError is the error of operation op on task id.
func opError(op, id string, kind error, format string, args ...any) error {
	return fmt.Errorf("%s task %s: %w: %s", op, id, kind, fmt.Sprintf(format, args...))
}

// errNothing ends an update that has nothing to change (a deadline met
// or fired already): nothing is written and nothing follows.
var errNothing = errors.New("nothing to do")
