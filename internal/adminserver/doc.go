// Package adminserver serves orchd serve's management API and console:
// the token files read and checked (--admin-token-file,
// --admin-read-token-file: one word of at least 16 bytes), the API on the
// main listener or on its own (--admin-listen, https when the main one
// is), and its event streams ended before a graceful shutdown.
//
// It owns the listener and the lifecycle; the routes are internal/admin's
// and what they act on is an internal/mgmt Backend. It must not import
// internal/process, internal/soap or the management backend.
package adminserver
