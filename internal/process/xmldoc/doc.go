// Package xmldoc reads XML documents of a deployment bundle (BPEL processes,
// deploy.xml, WSDL) into etree trees that remember where each element
// started, so every compile error can name file, element and line, and
// collects those errors: CompileError is one problem with its position,
// Errors all of a bundle's, so one deploy reports them all
// (compile_errors.go); ErrNotSupported marks a construct orchd does not
// run yet.
//
// It owns parsing and positions only: it knows no BPEL semantics, and it
// must never import the runtime (process), soap, persist or cmd. It is a
// fuzz target: no input may make it panic.
package xmldoc
