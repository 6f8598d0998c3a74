// Package compile is the compiler stage of the engine: it turns a bundle
// folder (deploy.xml in Apache ODE's format, WSDL 1.1 with imports, the
// BPEL files) into one plan.Plan per process: XPath compiled by the
// expression stage, variables resolved to slots, partner links and
// endpoints resolved, every activity a plan node. It lowers the BPEL
// syntax tree (internal/process/ast) to the plan; what it returns is data
// the runtime interprets and never changes.
//
// bundle.go loads a bundle (LoadBundle, LoadDirWith) through xmldoc, wsdl
// and deploy, and parses each process's syntax tree once (ast.Parse), for
// static analysis (check.CheckTree, bundle_check.go) and for the
// lowering. compile.go lowers the process and switches on the tree's node
// types (compileActivity), with a file per concern beside it (struct.go
// for the structured activities, assign.go for copies and their from-
// and to-specs, messaging.go for reply and invoke, events.go for event
// handlers, compensate.go, correlate.go, epr.go, rest.go for ODE's
// bpel4restlight, waiting.go, validate.go, insertmissing.go, xpath2.go,
// xpath2_ode.go and xslt.go for the expression languages). It reads a
// node's source XML element (ast.Element.Src) only for what is XML
// itself: a literal's content, an extension element, the namespace
// context an expression or QName is resolved in. extension_api.go is the
// compile-time half of the extension bundle API (Extensions,
// LoadOptions): an extension compiles its elements into a
// plan.ExtensionAction the runtime runs. Every problem is reported with
// its file, element and line (xmldoc.Errors), all of a bundle's at once.
// lint.go is `orchd lint`: it loads bundles as a deploy would and prints
// their problems as text or JSON. What it compiles is listed in
// docs/bpel.md; any other construct is refused as xmldoc.ErrNotSupported.
//
// It imports the stages below it (xmldoc, ast, check, wsdl, deploy, expr,
// plan) and the languages (xpath2, xsd, xslt); it must never import the
// runtime (the interpreter, internal/process/interp, and the engine,
// internal/process), soap, persist or cmd, and the runtime never
// imports it: whoever deploys (orchd serve, hot deploy, the tests)
// compiles with it and hands the plans to interp.NewVersions. The rule
// is a test: internal/importrules.
package compile
