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
// their compiled internal/xpath2 form (Xp2Expr) and run over XNode, the
// xpath2.Node adapter of the variable tree (xp2node.go), which is
// xpath1's node (kinds, names, string values, document boundaries) read
// through DocTree, so both XPaths see one tree; the functions
// bpel:doXslTransform (xslt.go) and Apache ODE's extension functions
// (xpath2_ode.go) are here too, and ActiveBPEL's (abx.go, in XPath 1.0
// and 2.0, reading the instance through DocTree.Inst), while the few
// values only an instance knows ($ode:pid, the event time, link status)
// are the runtime's.
// EvalXPath1 (xpath1cli.go) serves `orchd xpath`. The tree helpers of
// treecopy.go copy elements in few allocations and declare the namespaces
// a copy needs; they also rename an element (RenameTo) and replace an
// element's content with a copy of another's (ReplaceContent, WS-BPEL
// 8.4.2). NeedsContext (nocontext.go) finds what an XPath 1.0 condition
// reads of the context node it does not have. Rewrite turns BPEL's $var.part
// references into paths over the tree, through a Resolver the compiler
// implements; CheckXPath1Functions refuses at deploy a call outside
// XPath 1.0's library.
//
// It imports internal/xpath1, internal/xpath2, internal/xslt, xmldoc and
// exchange; it
// must never import process (the compiler and runtime), soap, persist or
// cmd.
package expr
