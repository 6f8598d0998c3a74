// Package xpath2 is orchd's XPath 2.0 evaluator. No Go library implements
// XPath 2.0, so this one is ours.
//
// Compile parses an expression once into an immutable AST, resolving
// namespace prefixes, function names and variable names against a
// StaticContext; the resulting *Expr may be evaluated any number of times,
// concurrently, with Expr.Evaluate and a DynamicContext (context item,
// variable values, implicit timezone, current dateTime). There is no
// global mutable state: the function library is a value the caller builds
// (NewFunctionLibrary gives the standard fn: functions) and may extend, so
// orchd can add bpel:getVariableProperty or ode:* functions.
//
// The evaluator works over the Node interface (node.go); NewDocument and
// WrapElement adapt github.com/beevik/etree trees, the project's XML tree.
// Values are Sequences of Items: Nodes and atomic values (values.go) with
// their XML Schema types (types.go): arbitrary-precision xs:integer and
// xs:decimal, xs:double/xs:float, dates, times, durations, QNames, binary
// and the g* types. Errors are *Error values carrying the W3C error code
// (XPST0003, XPTY0004, FORG0001, FOAR0001, ...).
//
// CompileXQuery compiles XQuery 1.0's expression language on the same
// machinery: FLWOR, typeswitch, direct and computed node constructors and
// a small prolog (declare namespace, declare default element namespace,
// declare variable ... external); no modules or function declarations.
// Constructed nodes are etree trees (EtreeToken returns a node's token),
// so callers can copy them into their own documents.
//
// Files: lexer and parser build the AST (ast.go); eval evaluates it;
// xquery_lex, xquery and xquery_eval scan, parse and evaluate the XQuery
// additions;
// types, values and cast hold the type system; arith and compare the
// operators; datetime the calendar; regex translates XPath regular
// expressions to Go's regexp; functions is the fn: library; cli is what
// "orchd xpath" runs (Query, and FormatItem/WriteResult printing items as
// TYPE<TAB>VALUE lines).
//
// The W3C QT3 XPath 2.0 cases in testdata/xpath2-cases are run
// by TestW3C (conformance_test.go) through Query and FormatItem, with two
// implicit timezones; the cases that pass are listed in
// testdata/passing.txt and must keep passing.
//
// It imports internal/xsd only for xsd:duration's lexical form
// (xsd.ParseDuration); it must never import internal/process.
package xpath2
