// Package process owns the process model and its runtime: it loads a
// bundle (deploy.xml in Apache ODE's format, WSDL 1.1 with imports, the
// BPEL files), compiles each process once into an immutable plan (XPath
// compiled, variables resolved to slots, partner links bound), and runs
// instances.
//
// An instance is explicit data: its variables live in one etree tree whose
// root children are the variables' slots, and its control state is a set
// of threads (threads.go), each a stack of frames (activity, program
// counter, counters). The main activity runs on the first thread; a flow
// or a parallel forEach spawns one thread per branch and joins them. The
// Engine steps an instance's ready threads to quiescence in the goroutine
// that delivered the message; a partner call made while another thread can
// go on leaves on its own goroutine and its answer readies its thread.
// A scope with event handlers (events.go) runs its body on a child thread
// next to listener threads; each accepted event or alarm spawns a thread
// running a fresh handler scope with private variables, and the scope
// joins them once its body ended and its listeners closed. Faults
// (scope.go) go to the innermost scope running its body with a matching
// handler (or a default one that compensates), terminating that scope's
// other threads after running the termination handlers of the scopes
// they ran. A compensable scope that completes leaves a record, with a
// snapshot of its variables, in its enclosing scope's frame; compensate
// runs the records' handlers on threads whose private slots are the
// snapshots (compensate.go). Requests stay
// open until their reply runs (messaging.go). Nothing is stored for
// in-memory processes.
//
// Expressions and queries are XPath 1.0 (internal/xpath1 over the
// variable tree: xpath.go, navigator.go; the direct evaluators
// fastpath.go and fastexpr.go, equal to it by FuzzXPath1Fast) or, where declared,
// XPath 2.0 or XQuery 1.0 (xpath2.go: internal/xpath2 over the same
// variable tree, with the BPEL, ODE and saxon:parse functions of
// xpath2_ode.go; nodes an XQuery constructs are etree trees of their own,
// copied like any other source node). xpath1funcs.go refuses at deploy an
// XPath 1.0 call outside XPath 1.0's library; xpath1cli.go (EvalXPath1)
// runs the XPath 1.0 engine for "orchd xpath --version 1.0".
// bpel:doXslTransform runs a stylesheet of the bundle, compiled at
// deploy, with internal/xslt (xslt.go).
//
// Supported: see README's "What works". Anything else is rejected at
// deploy with "not supported yet: <element> at file:line".
//
// A persistent process's instances are checkpointed through the Store
// interface (persist.Store implements it) when they wait, when they end,
// and before a partner call that is not marked idempotent; concurrent
// checkpoints share one commit. A blocked in-memory instance stays in the
// engine's registry; a blocked persistent one lives only in the store and
// is loaded again by the message or timer that resumes it. Files: bundle,
// deploy and wsdl load; compile, compile_struct and correlate compile;
// instance, threads, scope, events (event handlers), compensate
// (compensation and termination handlers), flow, activities, assign,
// validate, epr (endpoint references), rest (ODE's bpel4restlight
// extension activities), extension (the extension bundle API:
// Options.Extensions, LoadOptions), messaging, waiting run; run drives a run and its
// aftermath;
// checkpoint, recover and outbox persist; instevents emits instance
// events to Options.Events (internal/events) when one is set;
// mgmt_instances lists, describes and acts on instances for the
// management API (internal/mgmt: suspend, resume, terminate, delete, and
// ODE's retry, fault and cancel for an instance suspended on a failed
// invoke).
//
// It imports exchange, events (instance events), bpel (positions), xpath1 (XPath 1.0), xpath2 (XPath 2.0), xslt (XSLT 1.0), xsd (schema validation, loaded
// only for bundles whose processes validate) and persist (the store's
// types);
// it must never import soap, server or cmd (its tests use soap as a real
// partner and front door).
package process
