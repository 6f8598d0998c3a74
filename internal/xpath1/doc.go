// Package xpath1 is orchd's XPath 1.0: one parser and one evaluator with
// the semantics of the XPath 1.0 recommendation, whichever caller runs an
// expression.
//
// Compile parses an expression (the whole grammar of section 3, the
// lexical rules of 3.7) into an AST with byte offsets (ast.go), resolving
// namespace prefixes, variables and functions against Options; an
// *Error names the offset of what it refuses. The compiled *Expr is
// immutable and may be evaluated concurrently with Eval, over a Tree: the
// etree elements an expression reads, with a Boundary hook saying which
// elements stand for document nodes (tree.go), so that a caller whose
// documents are parts of one etree tree (orchd's BPEL variables) gets
// XPath's document nodes without copying.
//
// The evaluator (eval.go, axes.go) has all 13 axes, name tests matched by
// namespace URI (an unprefixed name test matches only names in no
// namespace, section 2.3), predicates with proximity positions in axis
// order, unions and paths in document order, and the 27 core functions of
// section 4 (funcs.go). Values (value.go) are float64, string, bool and
// NodeSet; conversions follow sections 4.2-4.4: Number reads only
// XPath's Number syntax (no exponent, no '+', no "Infinity"), and
// FormatNumber writes numbers as string() does (NaN, Infinity, no
// exponent). Comparisons follow section 3.4.
//
// Callers extend it through Options: Variables binds $name, Functions
// binds calls outside the core library (orchd binds lower-case and
// ends-with, as ODE's Jaxen had).
//
// xpath1 imports only the standard library and github.com/beevik/etree;
// it must never import internal/process or any other orchd package.
package xpath1
