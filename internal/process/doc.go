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
// (messageType, element, type, inline from), correlationSets, sequence,
// receive (starting an instance or into a running one, correlated), reply
// (with faultName), invoke, pick (onMessage, onAlarm), wait, assign/copy,
// empty, if, while, throw, exit, and process-level faultHandlers. Anything
// else is rejected at deploy with "not supported yet: <element> at
// file:line".
//
// A persistent process's instances are checkpointed through the Store
// interface (persist.Store implements it) when they wait, when they end,
// and before a partner call that is not marked idempotent; concurrent
// checkpoints share one commit. A blocked in-memory instance stays in the
// engine's registry; a blocked persistent one lives only in the store and
// is loaded again by the message or timer that resumes it. Files: bundle,
// deploy and wsdl load; compile and correlate compile; instance,
// activities, assign, waiting run; run drives a run and its aftermath;
// checkpoint, recover and outbox persist.
//
// It imports exchange, bpel (positions) and persist (the store's types);
// it must never import soap, server or cmd.
package process
