/*
Package cluster coordinates several orchd nodes that share persistent
instances through one etcd cluster, so that together they keep the
guarantees of one node: an instance runs on one node at a time, a timer
fires once, one node drains the outbox, and a message for an in-memory
conversation reaches the node that holds it.

It holds no instance data: the etcd instance store (checkpoints, routes,
timers, outbox) is a separate implementation of the engine's store. This
package only decides who may do what, with etcd leases, transactions and
watches. It imports the etcd client, internal/soap (for the fault a
forwarding node answers) and internal/exchange; it must never import
internal/process or cmd.

# Keys

All keys live under /orchd/<cluster>/:

	key                    value            lease      written by
	nodes/<node-id>        Member as JSON   node's     Join (Txn: only if absent), SetVersions
	locks/<instance-id>    node ID          node's     Acquire, TryAcquire (Txn: only if absent)
	elect/<name>/<lease>   node ID          node's     Lead (concurrency.Election)
	mem/<route-key>        node ID          node's     RegisterRoute
	nonces/<key>           empty            its own    Nonces.Add (Txn: only if absent)

Each node has one session (concurrency.Session: one lease, TTL
Options.TTL, kept alive in the background). Everything a node holds is
attached to that lease, so a node that dies, or that is cut off from etcd
for longer than its TTL, loses all of it at once when the lease expires;
Node.Done tells the node itself.

A membership value is a JSON object: {"url": SOAP base URL, "admin":
management API base URL, "versions": process versions served}. A plain
URL (an older node) reads as the URL alone. SetVersions rewrites it
under the same lease after every deploy, undeploy and retire, and the
membership watch hands the change to every node (Members, Member).

# Instance ownership: a lock held with the lease, fenced at commit

A run of a persistent instance takes its lock (Acquire), runs, commits
and releases. The commit transaction carries Lock.Fence, a comparison on
the lock key's create revision, so it succeeds only while this very lock
still exists.

The alternative was optimistic: no lock, and the checkpoint transaction
compares the instance record's mod revision read when the instance was
loaded; a concurrent run of the same instance on another node would then
fail at commit and be retried. It costs no extra round trip when there is
no contention, but a run is not only its commit: it calls partners
(BLOCKING and TRANSACTED invokes happen inside the run) and, for a
request-response operation whose reply waits, it holds a client's
connection. With optimistic checks two nodes can both call the partner
and one of them then throws its run away, so the partner sees a call the
instance never made; and the loser's client must be answered with a
retryable fault or re-run blindly. Messages for one instance arriving on
two nodes at once is not rare in orchd (correlated callbacks, a timer
firing while a message arrives), so conflicts would be paid in duplicate
partner calls. The lock prevents the second run before it starts, and
the waiting node simply waits (Acquire watches the lock key's deletion).

The lock alone is not enough: a node paused (GC, a network partition)
past its TTL still believes it holds the lock while another node has
taken the instance. Hence the fence at commit: the paused node's commit
compares a create revision that no longer exists and fails, so it cannot
overwrite the newer state. That is the revision check of the optimistic
design, applied to the lock instead of the record, at no extra cost (a
comparison in the commit's transaction). The lock's create revision is
also a fencing token that grows with every acquisition (Lock.Revision).

Cost: one Txn round trip to acquire and one to release per run, on top of
the commit. Within one node the engine already serialises runs of an
instance, so a node acquires at most once per instance at a time
(TryAcquire of a lock the node holds fails with ErrHeld, unless
Options.Reentrant, with which the engine lets a node take back a lock
that a failed Release left behind).

# Timers

Timers are partitioned, then locked. Each node scans the due timers but
fires only those of instances it is Responsible for: rendezvous hashing of
the instance ID over the live members, which moves only the departed
node's share when a member leaves. The membership comes from a watch on
nodes/, so a dead node drops out when its lease expires and its timers
are fired by the others on their next scan. FireTimer then takes the
instance lock without waiting and the firing commits, fenced, the
removal of the timer. During a membership change two nodes may both
think they are responsible; the lock lets one run, and the other finds
the timer gone. Hashing instead of a claim per timer keeps the common
case to the lock round trips a run pays anyway.

# Outbox

Lead runs a function while the node leads an election (for the outbox:
"outbox"); when the leader dies its election key goes with its lease and
the next candidate's function starts. Sending from the outbox is
at-least-once (a leader may die after sending and before AckOutbox), as
on one node.

# In-memory conversations

In-memory instances are never written to etcd; a node that keeps one
waiting registers its route keys with RegisterRoute (RegisterRoutes for
a batch). Routes does it for the engine: Add and Remove do not block,
one goroutine writes the keys added meanwhile in one transaction, and
removes keys after a grace period (a key removed and added again at once
costs nothing); Wait lets a reply wait for its keys. Forwarder, in front
of the SOAP handler, proxies a request whose route key (Routing.Keys)
belongs to another node to that node's URL (marked with
ForwardedHeader, never forwarded twice), and answers a SOAP Server fault
naming the node when the owner is gone or does not answer. When the
owner's lease has expired, its routes are gone too and the message is
handled locally like any message that matches no instance.

# Process versions (rolling upgrades)

Each node publishes the process versions it serves (Options.Versions,
SetVersions). A request whose instance runs on a version this node does
not serve (Routing.Version) is proxied by the Forwarder to a live member
that serves it, or answered with a Server fault naming the version.
ResponsibleFor is Responsible among the members serving a version, so
that the timers of a departed node go to nodes that can run them;
SameVersions tells whether an upgrade is under way at all.

# Caveats

A node cut off from etcd (no quorum, or a partition) gets ErrUnavailable
from its calls after Options.OpTimeout; its session survives an outage
shorter than its TTL. Past the TTL the client gives the lease up, Done is
closed and every lock is gone. With Options.Rejoin the node then joins
again by itself (a new session and lease, its node key registered again;
Acquire fails at once with ErrLost meanwhile); without, it must be
closed and Join called again (the old node key lingers until its lease
expires on the server).

Lease expiry is measured by the etcd leader; a new leader extends every
lease by its TTL, so a leader election delays takeovers by up to one TTL.
*/
package cluster
