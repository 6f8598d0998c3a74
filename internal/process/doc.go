// Package process is the runtime stage of the engine: it runs instances
// of the plans the compiler (internal/process/compile) made, each plan
// deployed as a version (Process: the plan plus its number, counters,
// metrics and partner bindings). It never imports the compiler.
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
// Expressions and queries are compiled by the expression stage
// (internal/process/expr: XPath 1.0 through internal/xpath1 with its direct
// evaluators, XPath 2.0 through internal/xpath2, ODE's functions and
// bpel:doXslTransform); this package supplies what only an instance
// knows: $ode:pid, the event time, link status (xpath2.go).
//
// A persistent process's instances are checkpointed through the Store
// interface (persist.Store implements it) when they wait, when they end,
// and before a partner call that is not marked idempotent; concurrent
// checkpoints share one commit. A blocked in-memory instance stays in the
// engine's registry; a blocked persistent one lives only in the store and
// is loaded again by the message or timer that resumes it.
//
// Files: engine and versions (a Process is a version), model.go, instance,
// threads and dispatch.go (the one switch that steps an activity), scope,
// events, compensate, flow, activities, assign, validate, epr, rest (ODE's
// bpel4restlight), extension (the run-time half of the extension bundle
// API), messaging, waiting; run drives a run and its aftermath;
// checkpoint, recover and outbox persist; instevents emits instance
// events to Options.Events; mgmt_instances and mgmt_processes answer the
// management API (internal/mgmt), the one instance listing;
// mgmt_details lists with details over it, for orchd instances on a
// store no engine serves (StoreInstances).
//
// It imports exchange, events, mgmt, persist (the store's types), the
// stages below it (bpel, wsdl, deploy, expr, plan) and the languages
// (xpath1, xpath2, xsd); it must never import the compiler, soap, server
// or cmd (its tests use the compiler to make plans, and soap as a real
// partner and front door). The rule is a
// test: internal/importrules.
package process
