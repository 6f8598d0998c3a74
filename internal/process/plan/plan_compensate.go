package plan

// CompSupport holds the activities a process with compensation uses.
type CompSupport struct {
	// CompAll is the default compensation and termination handler:
	// compensate every completed child.
	CompAll Activity
	// DefaultFH is the default fault handler: compAll, then rethrow.
	DefaultFH Activity
	// Terminator runs the termination handlers of terminated scopes.
	Terminator Activity
}

// HandlerRun is the bottom frame of a thread running a scope instance's
// compensation handler (term false) or termination handler; its frame's
// rec is that instance's record.
type HandlerRun struct {
	Base
	Sc   *Scope
	Term bool
}

// Compensate is <compensate/> (target nil: every completed child) or
// <compensateScope target="..."/>.
type Compensate struct {
	Base
	Target *Scope
}

// Terminator runs, one after another, the termination handlers its
// frame's rec lists (the last first).
type Terminator struct{ Base }
