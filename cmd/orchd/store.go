package main

import (
	"flag"

	"github.com/orchd/orchd/internal/etcdstore"
	"github.com/orchd/orchd/internal/instancestore"
)

// storeFlags defines the flags selecting the instance store of
// persistent processes (its Dir is --data).
func storeFlags(fs *flag.FlagSet, c *instancestore.Config) {
	fs.StringVar(&c.Kind, "store", instancestore.Bbolt, "instance store of persistent processes: bbolt (the file "+instancestore.File+" in --data) or etcd (--etcd-endpoints)")
	fs.StringVar(&c.Endpoints, "etcd-endpoints", "", "with --store etcd: the etcd members' client addresses, host:port,...")
	fs.StringVar(&c.Prefix, "etcd-prefix", etcdstore.DefaultPrefix, "with --store etcd: the key prefix of this orchd cluster's instances")
	fs.DurationVar(&c.DialTimeout, "etcd-dial-timeout", etcdstore.DefaultDialTimeout, "with --store etcd: bound on connecting to etcd at start")
	fs.DurationVar(&c.RequestTimeout, "etcd-request-timeout", etcdstore.DefaultRequestTimeout, "with --store etcd: bound on one etcd request; an exchange whose commit exceeds it gets a Server fault")
}
