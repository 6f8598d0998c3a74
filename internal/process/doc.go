// package process is the engine: it deploys the versions of the plans
// the compiler (internal/process/compile) made (interp.Version), routes
// each exchange to the instance it belongs to or creates one, and keeps
// what lies between the runs of instances, which the interpreter
// (internal/process/interp) steps. It never imports the compiler.
//
// Dispatch (run.go) finds the version an exchange's endpoint serves,
// routes a message by its correlation values to a waiting instance (in
// memory, in the registry; persistent, through the store's routes),
// holds a message that came before its instance waits (held.go), and
// has the instance run (interp's Run, Begin, Terminate) in the caller's
// goroutine under the instance's lock. The interpreter ends the run
// itself (answers, the end-of-run checkpoint, metrics) and returns an
// interp.Outcome; settle (run.go) does what it names: registers the
// routes and the timer a blocked instance waits for, keeps its open
// requests, forgets an ended one. The engine reads an instance through
// its accessors and its Snapshot and never writes its state; the
// interpreter reaches the engine only through interp.Host, which
// engineHost (enginehost.go) implements.
//
// A persistent process's instances are checkpointed through the Store
// interface (persist.Store implements it); concurrent checkpoints share
// one commit. A blocked in-memory instance stays in the registry; a
// blocked persistent one lives only in the store and is loaded again
// (load.go) by the message or timer that resumes it. recover.go and
// adopt.go resume stored work at start and take over another node's;
// outbox.go sends RELIABLE one-way invokes after their checkpoint;
// cluster.go is what the engine shares with other nodes (InstanceOwners,
// MemRoutes, the versions it serves). versions.go deploys, redeploys and
// retires versions; mgmt_instances, mgmt_processes and mgmt_details
// answer the management API (internal/mgmt), the one instance listing;
// metrics.go the engine's Prometheus series, tracerun.go an outbox send's
// span.
//
// It imports exchange, events, mgmt, partnerallow, persist (the store's
// types), plan and interp; it must never import the compiler, the
// stages below the plan, soap, server or cmd (its tests use the compiler
// to make plans, and soap as a real partner and front door). The rule is
// a test: internal/importrules.
package process
