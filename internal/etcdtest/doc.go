// Package etcdtest starts embedded etcd clusters for tests.
//
// A Cluster of 1 or 3 members runs in the test process
// (go.etcd.io/etcd/server/v3/embed) on loopback with free ports and
// data directories under t.TempDir(). Members can be stopped and
// restarted (same ports, same data) to test loss of quorum and
// recovery. Startup is bounded: a member that is not ready within the
// timeout fails the test with a clear error. The cluster is stopped
// by t.Cleanup.
package etcdtest
