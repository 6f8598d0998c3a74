// Package membudget owns the byte budget of an instance's variables: the
// size of each variable, kept as values enter it rather than measured by
// serializing it, and the bytes one run assigns into variables, against
// the bounds serve --max-variable-bytes and --max-run-bytes set (deploy.xml's
// orchd:maxVariableBytes and orchd:maxRunBytes override them per process).
//
// It measures etree subtrees and keeps counts; it must not import the
// interpreter, the engine, the compiler or anything of a process's
// documents (it knows variables by slot index and name only).
package membudget
