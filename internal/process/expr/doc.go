// Package expr is the expression stage of the engine: it compiles the
// XPath 1.0 and XPath 2.0 expressions and queries of a process against
// its variables, and evaluates them over an instance's variable tree.
//
// A variable is a name resolved to a slot of the tree (Var, var.go); a
// DocTree is the tree with its variables, which internal/xpath1's
// general evaluator reads through the Tree hook (navigator.go). An Expr
// (xpath.go) holds an expression compiled once: the general form, and
// where the expression fits them, the direct evaluators of fastpath.go
// (paths) and fastexpr.go (values) that are proven equal to it by the
// differential fuzz target FuzzXPath1Fast. XPath 2.0 expressions keep
// their compiled internal/xpath2 form (Xp2Expr); their BPEL and ODE
// functions are bound by the runtime. Rewrite turns BPEL's $var.part
// references into paths over the tree, through a Resolver the compiler
// implements; CheckXPath1Functions refuses at deploy a call outside
// XPath 1.0's library.
//
// It imports internal/xpath1, internal/xpath2, bpel and exchange; it
// must never import process (the compiler and runtime), soap, persist or
// cmd.
package expr
