// Package insertpath carries out Apache ODE's insertMissingToData at
// run time: the compiler lowers the copy's <to> path into a
// plan.InsertPath, and the interpreter calls Create when that path
// selected nothing.
//
// ODE's <copy insertMissingToData="yes"> (also
// written ext:insertMissingToData with ODE's extension namespace, the one
// of its XPath functions) creates the missing steps of the <to> path
// before copying, instead of failing with selectionFailure.
//
// What orchd creates: a relative location path below the variable or part
// (the $var[.part]/path and <query> forms) whose steps are child elements
// (name or prefix:name, child:: allowed), optionally one positional
// predicate ([2], or [$i] with a numeric simple-typed $i), and, last, an
// attribute (@name, attribute::name) or text(). When the path selects
// nothing, orchd walks it from the variable: a step that selects an
// existing element is followed; the first one that does not is created,
// with every step after it. A step without a predicate is created when no
// element matches it (several matches: selectionFailure, the target is
// ambiguous). A step a[k] is created when k is the next position (k-1
// elements a exist); it goes right after the last existing a, or last in
// its parent when there is none. Any other k is a selectionFailure, and
// so is a later step a[k] with k > 1 (a new element has no siblings).
// Nothing is created unless the whole path can be. A created name uses
// the prefix the BPEL document wrote when that prefix is free, and
// declares it on the new element; an attribute's value, an element's
// content, is then set by the copy as usual. An uninitialized element
// variable or part first gets its root element from its declaration, as
// any <to> query does.
//
// Refused at deploy, naming file, line and the construct: an absolute
// path, //, . and .., other axes, wildcards, unions, function calls, any
// predicate that is not a position, and <to property> (the property's
// alias path is not the author's to create).
//
// It owns only this tree surgery: no instance state, no faults (an
// *Error is the reason the interpreter raises selectionFailure with). It
// imports exchange, expr and plan, and must not import the interpreter
// or the engine.
package insertpath
