// Package clusterview answers the management API for a whole cluster of
// orchd nodes from any one of them: the process versions and counters
// summed over the nodes, every node's in-memory instances (paged across
// nodes) beside the shared store's, details of and actions on another
// node's in-memory instance forwarded to it, and the live nodes with
// their counters (docs/cluster.md, "The cluster view").
//
// It owns the fan-out to the other nodes (through internal/mgmtclient,
// with the caller's Authorization, each bounded by a timeout, a node
// that fails named in the answer's Partial) and the cursor format of a
// listing across nodes. This node's own part comes through the Local
// interface (internal/mgmtbackend implements it); it must not import
// internal/process, internal/soap, internal/mgmtbackend or orchd serve's
// wiring (internal/importrules checks the direct imports).
package clusterview
