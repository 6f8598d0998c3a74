package plan

import (
	"github.com/orchd/orchd/internal/process/expr"
)

// Scope is a <scope> (the process itself is compiled as one, with
// isProcess set): local variables and correlation sets, reset each time
// the scope starts, and fault handlers that catch what its body throws.
type Scope struct {
	Base
	Vars []*expr.Var
	// Inits are the initializers of Vars that have one, in declaration
	// order, run each time the scope starts.
	Inits    []*CopyOp
	Plinks   []*PartnerLink // its own, fresh each time it starts
	CorrSets []string
	Body     Activity
	Handlers *FaultHandlers
	// Events are the scope's event handlers (events.go), or nil.
	Events   *EventHandlers
	Isolated bool
	// IsProcess marks the process's own scope: its handler is the
	// process-level one (the run ends "handled").
	IsProcess bool
	// Sources are the links whose source is inside the body: when the
	// scope catches a fault, those not yet decided are dead.
	Sources []*Link
	// Comp and term are its compensation and termination handlers (nil:
	// the default ones); the rest is decided at compile time
	// (compensate.go).
	Comp, Term Activity
	scopeComp
}

// Rethrow throws again the fault its enclosing fault handler caught.
type Rethrow struct{ Base }

// scopeComp is what the compiler decides about a scope's compensation
// and termination.
type scopeComp struct {
	// Compensable: a completion is recorded (an explicit compensation
	// handler, or compensable children for the default one).
	Compensable bool
	// HasCompKids: a child scope is compensable.
	HasCompKids bool
	// TermNeeded: terminating a running instance runs a handler (an
	// explicit one, or the default one with children to compensate).
	TermNeeded bool
	// SubTerm: a scope inside may need its termination handler run when
	// a fault handler of this scope takes over.
	SubTerm bool
	// DefaultFH: a fault this scope has no handler for runs the default
	// one (compensate, then rethrow) rather than passing straight on.
	DefaultFH bool
	// Children are the scopes directly enclosed by the body (targets of
	// compensateScope in its handlers).
	Children []*Scope
	// SnapVars are the variables copied into a record: the scope's own
	// and, for the scope of a forEach, the counter.
	SnapVars []*expr.Var
	// CompAct and termAct run its compensation and termination handlers
	// (the bottom frame of the handler's thread).
	CompAct, TermAct *HandlerRun
}
