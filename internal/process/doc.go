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
// drives the run: the instance's threads step in the caller's goroutine
// until it waits, ends or fails, then finish answers the client, stores
// what the guarantees need and registers what the instance waits for
// (its routes and its timer). The interpreter reaches the engine only
// through interp.Host, which engineHost (enginehost.go) implements.
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
// metrics.go the engine's Prometheus series, tracerun.go a run's span.
//
// It imports exchange, events, mgmt, partnerallow, persist (the store's
// types), plan and interp; it must never import the compiler, the
// stages below the plan, soap, server or cmd (its tests use the compiler
// to make plans, and soap as a real partner and front door). The rule is
// a test: internal/importrules.
package process
