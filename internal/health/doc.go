// Package health owns orchd's probes: GET /healthz (the process is
// alive and serving HTTP) and GET /readyz (it should be sent traffic:
// its bundles are deployed, its instance store is open where a
// persistent process needs one, its cluster session is held), each
// answered in JSON that names the failing check, and the drain at
// shutdown, when /readyz turns 503 before the listener closes.
//
// It reads the engine, the store and the cluster node; it serves no
// other route and changes nothing. It may import process,
// instancestore and cluster; nothing imports it but cmd.
package health
