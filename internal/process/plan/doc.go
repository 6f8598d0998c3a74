// Package plan is a compiled process as data: the Plan the compiler
// builds once per deploy and every instance (and every engine that deploys
// it) shares. Its node types are the activities (Sequence, If, Invoke,
// Scope, Flow, Pick, ... and the constructs the compiler adds, such as
// HandlerRun and Terminator), variables' initializers, partner links,
// fault and event handlers, correlation sets and route shapes, copy
// operations and the extension API's interfaces (ExtensionAction).
//
// It has no run-time behaviour: what an activity does when it runs is the
// interpreter's (internal/process/interp, stepActivity in dispatch.go),
// and nothing changes a Plan after compile. What changes while a version
// serves (its number, statistics, metrics, partner bindings) is in
// interp.Version, which embeds the Plan.
//
// It imports expr (compiled expressions and variables), xmldoc, deploy
// (failure policies, cleanup rules), wsdl, xsd, exchange, partnerallow
// and events; it must never import compile, interp, the engine
// (internal/process), soap, persist or cmd.
package plan
