// Package process owns the process model and its runtime: it loads a
// bundle (deploy.xml in Apache ODE's format, WSDL 1.1 with imports, the
// BPEL files), compiles each process once into an immutable plan (XPath
// compiled, variables resolved to slots, partner links bound), and runs
// instances.
//
// An instance is explicit data: its variables live in one etree tree whose
// root children are the variables' slots, and its control state is a stack
// of frames (activity, program counter). The Engine runs an instance's
// frames to quiescence in the goroutine that delivered the message, calling
// partners inline. Nothing is stored for in-memory processes.
//
// Supported (WS-BPEL 2.0): process, import, partnerLinks, variables
// (messageType, element, type, inline from), sequence, receive
// (createInstance), reply (with faultName), invoke, assign/copy, empty, if,
// while, throw, exit, and process-level faultHandlers. Anything else is
// rejected at deploy with "not supported yet: <element> at file:line".
//
// It imports exchange (and bpel for positions); it must never import soap,
// persist's internals or cmd.
package process
