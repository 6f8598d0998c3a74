package process

// scope is a <scope> (the process itself is compiled as one, with
// isProcess set): local variables and correlation sets, reset each time
// the scope starts, and fault handlers that catch what its body throws.
type scope struct {
	base
	vars     []*variable
	plinks   []*partnerLink // its own, fresh each time it starts
	corrSets []string
	body     activity
	handlers *faultHandlers
	// events are the scope's event handlers (events.go), or nil.
	events   *eventHandlers
	isolated bool
	// isProcess marks the process's own scope: its handler is the
	// process-level one (the run ends "handled").
	isProcess bool
	// sources are the links whose source is inside the body: when the
	// scope catches a fault, those not yet decided are dead.
	sources []*link
	// comp and term are its compensation and termination handlers (nil:
	// the default ones); the rest is decided at compile time
	// (compensate.go).
	comp, term activity
	scopeComp
}

// rethrow throws again the fault its enclosing fault handler caught.
type rethrow struct{ base }

// scopeComp is what the compiler decides about a scope's compensation
// and termination.
type scopeComp struct {
	// compensable: a completion is recorded (an explicit compensation
	// handler, or compensable children for the default one).
	compensable bool
	// hasCompKids: a child scope is compensable.
	hasCompKids bool
	// termNeeded: terminating a running instance runs a handler (an
	// explicit one, or the default one with children to compensate).
	termNeeded bool
	// subTerm: a scope inside may need its termination handler run when
	// a fault handler of this scope takes over.
	subTerm bool
	// defaultFH: a fault this scope has no handler for runs the default
	// one (compensate, then rethrow) rather than passing straight on.
	defaultFH bool
	// children are the scopes directly enclosed by the body (targets of
	// compensateScope in its handlers).
	children []*scope
	// snapVars are the variables copied into a record: the scope's own
	// and, for the scope of a forEach, the counter.
	snapVars []*variable
	// compAct and termAct run its compensation and termination handlers
	// (the bottom frame of the handler's thread).
	compAct, termAct *handlerRun
}
