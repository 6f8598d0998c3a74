/*
Package etcdstore is the instance store of persistent processes on an etcd
cluster: a second implementation of process.Store beside internal/persist
(bbolt), with the same semantics, record formats and key layout, for orchd
nodes that share their instances.

# Layout

Every bbolt bucket of persist (see its doc.go, "Layout") is a key prefix
under the store's prefix (Options.Prefix, "/orchd/default/" by default);
keys and values after it are persist's bytes, encoded by persist's own
functions (persist.Prepare, persist.EncodeInstance, ...):

	key                                         value
	<prefix>meta/schema                         uint64 schema version, = persist.SchemaVersion
	<prefix>meta/outboxseq                      uint64, the last outbox sequence number handed out
	<prefix>instances/<id>                      instance record
	<prefix>vars/<id> 0x00 slot(uint32)         serialized variable
	<prefix>routes/<route key>                  id
	<prefix>timers/due(8) <id> 0x00 tag         empty
	<prefix>outbox/seq(uint64)                  outbox record
	<prefix>index/<id> 0x00 'r'|'t' key         empty

# Commit

A checkpoint is one etcd transaction (Txn) holding all its puts and
deletes. Concurrent Commit calls share one transaction (group commit): one
committer goroutine takes the calls queued while the previous transaction
was in flight and, when the previous group had more than one call (a
lone committer goes at once), waits up to Options.MaxBatchDelay after the
first call arrived for more; it stops collecting before etcd's request limits
(Options.MaxTxnOps, --max-txn-ops, and Options.MaxRequestBytes,
--max-request-bytes). A group is split into several transactions only
when it would exceed them; one Commit call is never split, and one that
alone exceeds them fails with persist.ErrInvalid.

A group costs a read round trip (the current value of the route keys it
binds or unbinds, the outbox counter, and for a deleted instance its
index and variable keys) and one write transaction. The write compares
the mod revisions of everything it read, so the route ownership check
("key bound to another instance", persist.ErrConflict) and the outbox
sequence hold inside the transaction even with several nodes: when a
comparison fails, the group is read and tried again. A call whose
checkpoint conflicts fails alone; the others go ahead without it.

A checkpoint may carry a Fence (persist.Checkpoint.Fence, a Fence here:
with orchd's --cluster the instance's lock, cluster.Lock): its
comparison joins the group's transaction, at no extra round trip. When
the transaction fails, its Else branch has told which fences failed (one
nested transaction per fenced call, holding only that call's
comparisons): those calls fail with ErrFenced and the group is tried
again without them (read again first if it reads anything). So a lost
lock costs its group one failed transaction, and fails only the
checkpoints it fenced.

Commit returns only after etcd acknowledged the transaction (a quorum
has it in its log). When etcd cannot be reached or has no quorum, Commit
fails after Options.RequestTimeout with an error wrapping ErrUnavailable
("instance store unavailable: ..."): nothing of it may be acknowledged.
A timed-out transaction may still have been applied (etcd's answer was
lost), as with any remote store; the instance then holds its new state
and the client saw a fault.

# Reads

Instance reads the record and the variables in one read transaction.
Instances, Timers and Outbox page through their prefix at one revision
(pages of 512 keys), so a listing is a consistent snapshot; ScanInstances
reads its bounded page newest first with a descending range.

Callbacks run outside any transaction: unlike persist, they may call
Commit.
*/
package etcdstore
