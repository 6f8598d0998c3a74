// Package mgmtbackend implements internal/mgmt's Backend (and
// ClusterBackend), what the management API and the console operate on,
// over a running server's parts: the engine (processes, versions,
// instances, actions), the hot deployer (bundles, uploads, version
// switches), the timeline (recent events and the live stream) and this
// node's counters. In a cluster it answers through internal/clusterview,
// for which it is the Local part.
//
// It owns no state but the counters' rate sample. It must not import
// internal/admin (the HTTP side) or internal/soap itself, nor orchd
// serve's wiring (internal/importrules checks the direct imports).
package mgmtbackend
