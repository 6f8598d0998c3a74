// Package migrate decides whether an instance of one version of a
// process can move to another version of the same process, and how:
// every activity the instance's threads stand in (the frames of each
// thread, outermost first) must be at the same activity path in the
// target, with the same kind, the same children and, for a receive or
// pick, the same messages; every variable must be in the target under
// the same name (or the one the operator's mapping gives) with the same
// type; every correlation set the instance initiated must be in the
// target with the same properties. Check says, for each instance that
// cannot move, why, naming the activity, variable or set that differs;
// for one that can, its Move: the target's activity for each of its
// frames and the target's slot for each of its variables.
//
// The engine (internal/process) finds the instances and the versions;
// the interpreter (internal/process/interp) reports where an instance
// stands (Instance.Where) and rebinds it (Instance.Rebind). This package
// reads plans only: it must not import the interpreter, the engine, the
// compiler or a store.
package migrate
