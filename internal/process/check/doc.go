// Package check is the static analysis stage of a bundle: WS-BPEL 2.0's
// static analysis requirements (Appendix B of the specification, SA00001
// to SA00095), run over the syntax tree of a process (ast.Process, which
// Check parses from a xmldoc.Document and CheckTree takes as the compiler
// has it) and the WSDL definitions it imports (wsdl.Set) after parsing
// and before compiling. It reads the process through the tree only: which
// elements are activities, and what each construct holds, is the tree's.
// Rules() is the one table of the rules checked here: per rule its id, the
// section of the specification that states it, and the function that
// checks it. Check reports every violation, each a *Finding with the
// rule, the file, the line, the element and what to change.
// docs/static-analysis.md says, for each of the 95 rule numbers, where it
// is checked or why it is not.
//
// The compiler runs it before compiling; `orchd lint` is the compiler's
// (compile.LintRunner), so a bundle passes lint exactly when it would
// deploy.
//
// It owns no run-time behaviour. It may import ast, xmldoc (positions,
// namespaces), wsdl, deploy and exchange, nothing else of orchd, and not
// etree: it never walks the process's raw XML. The documents a process
// imports it reads as plain XML trees (encoding/xml, rules_imports.go)
// for what the wsdl.Set does not keep: every definition of a component
// (SA00014), schema elements and types (SA00010, SA00045). It must
// never import the runtime (internal/process, interp), the compiler,
// soap, persist or cmd.
// FuzzCheck runs it over arbitrary processes: no input may make it panic,
// and every finding has a line.
package check
