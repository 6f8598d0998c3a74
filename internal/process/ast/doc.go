// Package ast is the syntax tree of a WS-BPEL 2.0 process: one Go type
// per activity and construct of the language (Process, Scope, Sequence,
// Flow, If, ..., Copy, From, To, Catch, OnEvent, Sources, Targets), each
// with its position (file, line) in the bundle. Parse builds it once from
// the positioned XML document of a .bpel file (xmldoc.Document); static
// analysis (internal/process/check) and the compiler
// (internal/process/compile) both read it, so the list of activities and
// the shape of each lives here only.
//
// The node types, the one switch from tag to type (newNode) and how each
// type reads its fields are in nodes.go; the generic element every node
// embeds (tag, attributes, parent, children, position, namespace
// context) in element.go; Parse in parse.go; the one walk, Inspect, in
// walk.go. Visitors live with their users (check's rules, compile's
// lowering), as in text/template/parse. A node keeps its source element
// (Element.Src) for what needs the XML itself: the content of a
// <literal>, an extension activity's element, the namespace context of
// XPath expressions and QNames.
//
// It knows the language's syntax only: no WSDL, no types, no rules (check
// owns those), no plan. It may import the positioned XML documents
// (internal/process/xmldoc) and nothing else of orchd; it must never import
// check, compile, the runtime, soap, persist or cmd. It is a fuzz target
// (FuzzParse): no document may make Parse panic.
package ast
