// Package corrval owns correlation values as data: reading a
// correlation set's properties from a message (Values, through the
// compiled property aliases), the listed form of stored values that
// management shows (Listed), and the names a process's variables are
// listed by (VarNames). It holds no instance state.
//
// It was moved out of internal/process/interp, which the interpreter's
// callers and the engine both call for these; it imports only
// internal/exchange, internal/process/expr and internal/process/plan,
// and never the interpreter or the engine.
package corrval
