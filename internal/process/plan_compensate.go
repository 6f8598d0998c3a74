package process

// compSupport holds the activities a process with compensation uses.
type compSupport struct {
	// compAll is the default compensation and termination handler:
	// compensate every completed child.
	compAll activity
	// defaultFH is the default fault handler: compAll, then rethrow.
	defaultFH activity
	// terminator runs the termination handlers of terminated scopes.
	terminator activity
}

// handlerRun is the bottom frame of a thread running a scope instance's
// compensation handler (term false) or termination handler; its frame's
// rec is that instance's record.
type handlerRun struct {
	base
	sc   *scope
	term bool
}

// compensate is <compensate/> (target nil: every completed child) or
// <compensateScope target="..."/>.
type compensate struct {
	base
	target *scope
}

// terminator runs, one after another, the termination handlers its
// frame's rec lists (the last first).
type terminator struct{ base }
