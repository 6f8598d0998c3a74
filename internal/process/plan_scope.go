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
