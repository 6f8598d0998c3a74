package humantask

import "context"

// The names of the task operations Do runs: the WS-HT client API's, the
// management API's and the inbox's names for them are these.
const (
	OpClaim       = "claim"
	OpStart       = "start"
	OpStop        = "stop"
	OpRelease     = "release"
	OpComplete    = "complete"
	OpFail        = "fail"
	OpSkip        = "skip"
	OpDelegate    = "delegate"
	OpForward     = "forward"
	OpSuspend     = "suspend"
	OpResume      = "resume"
	OpSetPriority = "setPriority"
	OpAddComment  = "addComment"
)

// Action is one operation on a task, by name, with the arguments it
// takes; the other fields are ignored.
type Action struct {
	// Op is one of the Op constants.
	Op string
	// Output is complete's output (XML; "" for none).
	Output string
	// Fault is fail's fault.
	Fault Fault
	// User is the person delegate gives the task to.
	User string
	// To are the people forward gives the task to.
	To Entities
	// Priority is setPriority's priority (nil: missing, an
	// ErrArgument).
	Priority *int
	// Comment is addComment's text.
	Comment string
}

// Do runs a on task id for who: the one place the task clients (the
// WS-HT client API, the management API, the inbox) turn an operation's
// name into the engine's call. An unknown name is an ErrOperation.
func (e *Engine) Do(ctx context.Context, who Identity, id string, a Action) (Task, error) {
	switch a.Op {
	case OpClaim:
		return e.Claim(ctx, who, id)
	case OpStart:
		return e.Start(ctx, who, id)
	case OpStop:
		return e.Stop(ctx, who, id)
	case OpRelease:
		return e.Release(ctx, who, id)
	case OpComplete:
		return e.Complete(ctx, who, id, a.Output)
	case OpFail:
		return e.Fail(ctx, who, id, a.Fault)
	case OpSkip:
		return e.Skip(ctx, who, id)
	case OpDelegate:
		return e.Delegate(ctx, who, id, a.User)
	case OpForward:
		return e.Forward(ctx, who, id, a.To)
	case OpSuspend:
		return e.Suspend(ctx, who, id)
	case OpResume:
		return e.Resume(ctx, who, id)
	case OpSetPriority:
		if a.Priority == nil {
			return Task{}, opError(a.Op, id, ErrArgument, "a priority is needed")
		}
		return e.SetPriority(ctx, who, id, *a.Priority)
	case OpAddComment:
		return e.AddComment(ctx, who, id, a.Comment)
	}
	return Task{}, opError(a.Op, id, ErrOperation, "%q is not a task operation", a.Op)
}
