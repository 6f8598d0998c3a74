// Package instancestore opens the instance store of persistent
// processes that orchd serve is configured with: the bbolt file in the
// data directory (the default) or an etcd cluster. Lazy defers the open
// until the first persistent process is deployed (at start, by hot
// deploy or by upload), so that an orchd started with in-memory bundles
// only creates no data file, and one dropped into it later serves
// without a restart.
//
// It owns the choice of store and the open; the stores themselves are
// internal/persist's and internal/etcdstore's. It must not import
// internal/process beyond its Store interface, nor the front door,
// the management or the cluster packages.
package instancestore
