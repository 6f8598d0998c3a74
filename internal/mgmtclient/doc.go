// Package mgmtclient is the one client of orchd's management API
// (/api/v1, internal/admin): `orchd ctl` calls a server with it, and the
// cluster view (internal/clusterview) asks the other nodes of a cluster
// with it. It owns the request (base URL, bearer token or the caller's
// Authorization, body limit) and the mapping of the API's error answers
// back to internal/mgmt's sentinels (Error), the inverse of the status
// codes internal/admin writes.
//
// It imports internal/mgmt for the sentinels and the types it decodes;
// it must not import internal/admin (the server), internal/process or
// anything of orchd serve's wiring.
package mgmtclient
