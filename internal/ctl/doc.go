// Package ctl is the `orchd ctl` command: the management API's command
// line (verbs for processes, versions, bundles, instances and bulk
// actions; tables, or the server's JSON with --json). cmd/orchd
// dispatches to Run; the tests call Run against a real API, no binary.
//
// It owns the verbs, their flags and the output formatting; it talks to
// the server only through internal/mgmtclient (and reads internal/mgmt's
// types, internal/admin's query encoding and internal/bundlezip's
// Marks, which tells the bundle folder it zips). It must not import the
// server side: internal/process, internal/mgmtbackend or orchd serve's
// wiring.
package ctl
