// Package mgmt is the contract between orchd's runtime and the tools that
// operate it: the management API (internal/admin), its CLI (orchd ctl) and
// the web console (internal/console). It holds the JSON shapes those tools
// exchange and the Backend interface the server implements over the
// engine (internal/process) and the deployer (cmd/orchd). It imports
// only internal/events (an instance's timeline is of events.Event, the
// one shape of an event), which imports nothing of orchd, so every side
// can be built and tested on its own.
package mgmt

// # The HTTP API (internal/admin)
//
// JSON over HTTP under /api/v1/. Errors are {"error": "..."} with status
// 400 (bad request), 401 (no or wrong token), 403 (read-only API), 404
// (ErrNotFound), 409 (ErrConflict), 422 (ErrInvalid bundle), 503
// (ErrUnavailable).
//
//	GET    /api/v1/                                     {"readOnly": bool, "version": "..."}
//	GET    /api/v1/cluster?scope=local                  Cluster (scope=local: this node alone)
//	GET    /api/v1/processes?scope=local                []Process (no Outline; in a cluster Nodes and
//	                                                    NodeStats per version; scope=local: this node's)
//	GET    /api/v1/processes/{name}?version=N           Process with Outline
//	GET    /api/v1/processes/{name}/diagram?version=N&instance=ID
//	                                                    image/svg+xml: the version's diagram with its
//	                                                    statistics, or the instance's path (Diagrammer)
//	POST   /api/v1/processes/{name}/versions/{v}/retire
//	POST   /api/v1/processes/{name}/versions/{v}/activate
//	GET    /api/v1/bundles                              []Bundle
//	PUT    /api/v1/bundles/{name}                       body: zip; Bundle (201, or 422 with its errors)
//	DELETE /api/v1/bundles/{name}
//	GET    /api/v1/instances?process=&version=&state=&startedAfter=&startedBefore=
//	                  &activeAfter=&activeBefore=&correlation=&correlationSet=&limit=&after=&scope=
//	                                                    Page (times RFC 3339; scope=local: this node's
//	                                                    in-memory instances only)
//	GET    /api/v1/instances/{id}                       InstanceDetail
//	POST   /api/v1/instances/{id}/{action}              {"id": ..., "state": ...} after the action
//	POST   /api/v1/instances/bulk/{action}?<the list's filters>&max=N
//	                                                    BulkResult (at most max instances, default 100, cap 10000)
//	GET    /api/v1/events                               text/event-stream: "event: instance" with an
//	                                                    events.Event (with its "process" and "instance"), as they happen
//	                                                    (needs --timeline); "event: stats" with []Process every second
//
// In a cluster (orchd serve --cluster) any node answers for the whole
// cluster: persistent instances come from the shared store, the other
// nodes' in-memory instances, counters and version lists from their APIs
// (GET ...?scope=local, the caller's token forwarded), and an action on
// an in-memory instance of another node ("m12@node-b") is forwarded to
// it. A node that does not answer is named in the answer's "partial".
// These parts (Cluster, Node, NodeCounters, NodeStats, ClusterBackend,
// Query.Scope, Page.Partial, Instance.Node, Process.Nodes and NodeStats)
// were added to the contract without changing what was there.
//
// Every method but GET needs "Authorization: Bearer <token>" with the
// token of orchd serve --admin-token-file; without that flag the API is
// read-only (403) on a loopback listener and off (403) on any other.
// --admin-listen serves the API and the console on their
// own address instead of the SOAP listener's.
