// Command etcdmember runs one embedded etcd member
// (go.etcd.io/etcd/server/v3/embed, configured by
// etcdtest.MemberConfig: loopback, WAL fsync on) as its own OS process,
// so that a measurement can read each member's CPU time from
// /proc/<pid>/stat apart from the harness and from orchd. It is built
// only by the cluster measurement (cmd/orchd's TestMeasureCluster,
// `make cluster-bench`), never by orchd itself.
//
//	etcdmember --name m0 --dir DIR --peer http://127.0.0.1:P0 \
//	    --client http://127.0.0.1:C0 --initial-cluster m0=http://...,m1=...
//
// It prints "ready" on stdout once the member serves (which, in a
// cluster, needs a quorum of members started), and stops cleanly on
// SIGTERM or SIGINT.
package main
