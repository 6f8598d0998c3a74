// Package buildinfo says which orchd is running: its module version, the
// VCS revision it was built from and the Go version that built it, from
// the binary's build information (runtime/debug.ReadBuildInfo). orchd
// version and the management API's GET /api/v1/ both print it, so they
// agree. It imports nothing of orchd, and must not.
package buildinfo
