// Package clusternode runs this orchd as a member of a cluster of nodes
// sharing the etcd store (docs/cluster.md): it joins (Join), makes the
// instance locks the engine's owners (Owners), takes over what a
// departed node leaves (AdoptTimers: its timers and interrupted runs;
// LeadOutbox: the outbox, by the elected node), keeps this node's
// process versions in its membership (PublishVersions), and decides
// which SOAP requests are forwarded to another node (Forwarder: a
// correlated message for an in-memory conversation held elsewhere, or
// for a persistent instance whose version only another node serves).
//
// It owns these policies, not the mechanisms: membership, locks,
// elections, routes and the forwarding itself are internal/cluster's,
// the runs are internal/process's. It must not import internal/soap (the
// front door is its Front interface), internal/admin or the management
// packages.
package clusternode
