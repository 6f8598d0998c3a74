// Package etcdtest starts embedded etcd clusters for tests.
//
// A Cluster of 1 or 3 members runs in the test process
// (go.etcd.io/etcd/server/v3/embed) on loopback, with data directories
// under t.TempDir(). Each member advertises the addresses of two relays
// (peer, client) that the Cluster holds open for its whole life and that
// forward to the ports the member's listeners take at each start (port
// 0): no port is freed and picked again, so no other process can take a
// member's address between a stop and a restart. Members can be stopped
// and restarted (same addresses, same data) to test loss of quorum and
// recovery. Startup is bounded: a member that is not ready within the
// timeout fails the test with a clear error. The cluster is stopped
// by t.Cleanup.
package etcdtest
