// Package interp is the interpreter: a deployed version of a compiled
// plan (Version: the plan plus its number, counters, metrics and partner
// bindings) and the runs of its instances. The engine
// (internal/process) finds, locks, stores and schedules instances; this
// package owns them: it steps them, decides what the end of a run means
// and says what the engine must do about it. It reaches the engine only
// through Host (the clock and settings, the store's commit, the registry
// hooks that make a running instance findable, run-time partner
// bindings, the tracer); its events go to the version's sink
// (Version.Sink, set at deploy).
//
// One run, one outcome (run.go): the engine hands an instance a
// Delivery (the message, or nil for a timer or a recovery; the lock's
// fence) through Begin (a new instance), Run or Terminate, and gets back
// an Outcome. The run has then answered what it could (an uncaught fault
// every open request, a request the process ended without answering
// bpel:missingReply), taken the end-of-run checkpoint the guarantees
// call for (docs/architecture.md), delivered the replies held for it and
// counted the end; the Outcome names what is left to the engine: the
// routes and the timer a blocked instance waits for, the open requests
// it keeps for a later run, a run that could not be stored, the answer
// its client gets. An Instance has no exported fields: the engine reads
// its ID, Version, Context, Correlations, lock and suspension through
// methods (access.go), and every reader takes its Snapshot.
//
// The exported API, by who uses it:
//   - deploying: NewVersion, NewVersions, Version (and its
//     BindPartnerMetrics, EmitLifecycle), ProcMetrics, PartnerMetrics;
//   - running: NewInstance, Decode, Delivery, Outcome, Result, the
//     Instance's Begin, Run, Terminate, Reopen, Unload, LoadTrace,
//     MarkRecovered, LockTaken, WaitForReply, AwaitReply, OpenRequest,
//     StoreFailure, Host;
//   - routing: RouteKey, KeyRouteShape, InstanceKeyRouteShape,
//     SessionOf, SessionKey, SplitFingerprint,
//     FramesFingerprinted, and the in-memory mailbox (MailKeys,
//     OpenMailbox, MailboxOpen, Post, CloseMailbox, TakeMail, Mail);
//   - operating: Snapshot, Summary and their types (ThreadSnap, Await,
//     ActivitySnap, ActStatus, FailureSnap, VariableSnap, RequestSnap,
//     ThreadState, ActRef), Resolve, OperatorSuspend, OperatorResume,
//     ClearSuspended, OpSuspendReason, VariableText, ErrBadFrames,
//     ErrBadVariable (correlation values and variable names for
//     listings are internal/process/corrval's);
//   - the outbox and partners (the outbox's payload is outboxmsg's, an
//     endpoint reference's XML epr's): CopyMessage, AssignedEPR,
//     CallSpanKey, TraceSlot,
//     the span attributes (AttrProcess, AttrInstance), BpelFault,
//     ActivityFailure, RestFault, EvTagger.
//
// An instance is explicit data: its variables live in one etree tree
// whose root children are the variables' slots, and its control state is
// a set of threads (threads.go), each a stack of frames (activity,
// program counter, counters). dispatch.go is the one switch that steps
// an activity. The main activity runs on the first thread; a flow or a
// parallel forEach spawns one thread per branch and joins them. The
// engine has the instance step its ready threads to quiescence in the
// goroutine that delivered the message; a partner call made while
// another thread can go on leaves on its own goroutine and its answer
// readies its thread. A scope with event handlers (events.go) runs its
// body on a child thread next to listener threads; each accepted event
// or alarm spawns a thread running a fresh handler scope with private
// variables. Faults (scope.go, catch.go) go to the innermost scope
// running its body with a matching handler (or a default one that
// compensates), terminating that scope's other threads after running the
// termination handlers of the scopes they ran. A compensable scope that
// completes leaves a record, with a snapshot of its variables, in its
// enclosing scope's frame; compensate runs the records' handlers on
// threads whose private slots are the snapshots (compensate.go).
// Requests stay open until their reply runs (messaging.go).
//
// Readers of an instance take its Snapshot (snapshot.go; Summary for a
// listing) under the instance's lock rather than its fields: plain data
// saying where each thread stands and what it waits for, the failure it
// is suspended on, its variables, open requests, correlation values and
// alarm, and the status of every activity of the plan indexed by
// activity id (completed, running, waiting, failed, not reached,
// skipped, faulted, compensated, unknown). The statuses are derived from
// the frames, the link statuses and the scope frames handling a fault
// when the snapshot is taken (snapstatus.go), so the run records nothing
// for them; what that state cannot tell (a loop's earlier iterations,
// the branch a completed if took) is unknown.
//
// Expressions are compiled by the expression stage (internal/process/expr);
// this package supplies what only an instance knows: $ode:pid, the event
// time, link status (xpath2.go). checkpoint.go encodes an instance's
// control state for the store and load.go decodes it (Decode: the engine
// reads records and hands them here), and checkpoint.go holds the invoke activity, whose
// guarded calls checkpoint first; partnerfail.go is the failure policy
// of partner calls; epr.go, epr_params.go and session.go are endpoint
// references and ODE's WS-Addressing sessions; rest.go is ODE's
// bpel4restlight; extension.go the run-time half of the extension API.
//
// It imports exchange, events, mgmt's data types, persist's types and the
// stages below it (xmldoc, deploy, expr, plan) and the languages (xpath1,
// xpath2, xsd); it must never import the engine (internal/process), the
// compiler, soap, server or cmd. The rule is a test: internal/importrules.
package interp
