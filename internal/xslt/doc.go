// Package xslt is orchd's XSLT 1.0 processor, for WS-BPEL's
// bpel:doXslTransform. No Go library implements XSLT and orchd must build
// with Go alone (one static binary, no cgo), so this one is ours: it works
// over github.com/beevik/etree trees and evaluates every expression with
// internal/xpath2, the project's XPath engine.
//
// Compile parses a stylesheet once into an immutable *Stylesheet (all
// expressions, patterns and attribute value templates compiled); an
// element or attribute it does not support is refused there with
// "file:line: <xsl:name>: ...". Transform may then run any number of
// times, concurrently: each run has its own state.
//
// Supported: xsl:stylesheet/transform; template rules (match patterns with
// default and explicit priorities, modes), named templates, apply-templates
// (select, mode, with-param, sort), call-template, the built-in rules;
// value-of, copy-of, copy, for-each (with sort), if, choose; variable and
// param, global and local, with select or content (a result tree
// fragment); element, attribute, text, comment, processing-instruction,
// literal result elements with attribute value templates and
// exclude-result-prefixes; xsl:output (method xml), key and key(),
// current(), generate-id(), system-property(), xsl:number (level single
// or any, value, formats 1 01 a A i I), xsl:message (terminate="yes" is an
// error), strip-space/preserve-space. Refused: xsl:import, xsl:include,
// xsl:attribute-set, xsl:namespace-alias, xsl:decimal-format,
// xsl:apply-imports, output methods other than xml, and document().
//
// XPath 1.0 under an XPath 2.0 engine. Stylesheets are XSLT 1.0, whose
// expressions are XPath 1.0; xpath2 evaluates them with XPath 2.0
// semantics, and this package bridges where XSLT observes the difference:
//   - string conversions (value-of, attribute value templates, sort keys,
//     xsl:param values read as text) take the first item of a sequence, as
//     XPath 1.0's string() of a node-set takes the first node, and write
//     doubles the XPath 1.0 way (no exponent: 1e20 is
//     "100000000000000000000", NaN, Infinity);
//   - a result tree fragment is a document node, usable as a node-set
//     (as with exsl:node-set in XSLT 1.0 processors).
//
// Left to XPath 2.0 (internal/xpath2 has no XPath 1.0 compatibility
// mode): inside an expression, a function that takes one string or number
// (string(), concat(), contains(), substring-before(), ...) given several
// nodes is a type error (XPTY0004) where XPath 1.0 takes the first node;
// comparing a string with a number ("1" = 1) or doing arithmetic on a
// string literal is a type error rather than a conversion; comparisons of
// nodes (untyped) with numbers or strings behave as in XPath 1.0. Integer
// arithmetic is exact (xs:integer), and 1 div 0 is an error for integers
// (FOAR0001) where XPath 1.0 gives Infinity. In exchange a stylesheet may
// use XPath 2.0 (if/for/some, fn:matches, dates), as stylesheets written
// for ODE's Saxon often do. key() scans the document on each call (no
// index is built).
//
// Checked against the corpus's stylesheet (ODE's TestXslTransform, in
// testdata as ode-hello.xsl) and, by hand, against a few XSLT 1.0 cases of
// the public W3C XSLT test suite (xsl:number level="any" from="...",
// conflict resolution between default priorities); none of that suite is
// copied here.
//
// Files: compile (stylesheet to instructions), pattern (match patterns),
// exec (the instructions), output (building the result tree), functions
// (the XSLT functions added to the XPath library).
package xslt
