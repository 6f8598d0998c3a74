/*
Package persist stores the state of persistent process instances in one
bbolt file: instance checkpoints, their variables, the correlation routes of
waiting instances, durable timers, and the outbox of reliable invocations.

It knows nothing of BPEL, XML or exchanges: frames, variable values, route
keys, timer tags and outbox payloads are opaque bytes encoded by the runtime
(internal/process). It imports only the standard library and bbolt, and no
bbolt type appears in its API. In-memory processes never touch it.

# Basics

Open the data file once per process; a second Open of the same file, from
this or another process, fails with ErrLocked after Options.LockTimeout:

	st, err := persist.Open(filepath.Join(dataDir, "orchd.db"), persist.Options{})
	if err != nil {
		return err // ErrLocked, ErrSchemaTooNew, ErrCorrupt or an OS error
	}
	defer st.Close()

At each point where an instance must survive a crash (it waits, it ends, it
is about to call a non-idempotent partner) the runtime builds one Checkpoint
and calls Commit. Commit returns once the data is on disk; only then may the
reply describing that state reach the client. Concurrent Commit calls share
one bbolt write transaction and one fsync (group commit, bbolt's DB.Batch),
and each call stays all-or-nothing. A Checkpoint carries only the variables
that changed since the previous one; the instance record itself (state,
frames, correlation values) is small and rewritten whole.

At start, recovery reads back what it needs: Instances for the instances to
resume, Route to find the instance a message belongs to, Timers in due order,
Outbox for requests to (re)send, and AckOutbox once one has been sent. Stats
returns cumulative counters (commits, checkpoints, bytes, time in Commit) for
a metrics collector; the package registers no metrics itself.

For management listings, ScanInstances reads one bounded page of instances
newest first (IDs sort by creation time, so a creation-time bound is an ID
range: IDPrefix), decoding each record's header in place and stopping
after a number of matches or of records read, with a cursor for the next
page; InstanceTimers reads one instance's timers from its index.

Verify (or Check, on a closed file) runs bbolt's own page check and
cross-checks the buckets: every route, timer, index entry and variable
belongs to an instance that exists and, for routes and timers, waits. The
crash tests run it after every kill -9.

# Layout

The file holds eight top-level buckets (tasks since 2026-12-05: a file
without it gets it when it is opened for writing). Integers in keys are big-endian so
that keys sort numerically. An instance ID never contains a 0x00 byte, which
therefore ends the ID inside composite keys.

	bucket     key                                      value
	meta       "schema"                                 uint64 schema version (8 bytes, big-endian), = SchemaVersion
	instances  id                                       instance record (below)
	vars       id 0x00 slot(uint32)                     serialized variable, opaque
	routes     route key                                id
	timers     due(8) id 0x00 tag                       empty
	outbox     seq(uint64)                              outbox record (below)
	index      id 0x00 'r' route key                    empty
	index      id 0x00 't' timer key (as in timers)     empty
	tasks      task id                                  task record, opaque (internal/humantask's)

due is the timer's time in Unix nanoseconds as a uint64 with the sign bit
flipped (so times before 1970 sort too). seq comes from the outbox bucket's
sequence (bbolt NextSequence), so it increases and is never reused.

The index bucket is the per-instance index: it lists each instance's routes
and timers, so deleting an instance, or removing one of its routes or
timers, touches only that instance's keys (a prefix seek on id 0x00) and
never scans the routes or timers buckets. The vars bucket is seeked the same
way.

Instance record, version 1 (uvarint and varint are encoding/binary's; a
"string" is a uvarint length followed by that many bytes):

	byte     format (1)
	byte     state (Running=1 ... Suspended=6)
	varint   created, Unix nanoseconds
	varint   updated, Unix nanoseconds
	string   process QName, {ns}local
	string   fault
	string   frames (opaque)
	uvarint  number of correlation sets, then for each, sorted by name:
	string     set name
	string     key (opaque)

Outbox record, version 1:

	byte     format (1)
	string   instance ID
	string   partner
	string   operation
	rest     payload (opaque, to the end of the value)

A reader rejects an unknown format byte, truncated fields and trailing bytes
as corruption. A new field means a new format byte; a change of buckets or
keys means a new SchemaVersion, and an older orchd then refuses the file with
ErrSchemaTooNew instead of misreading it.

# Caveats

Commit calls its transaction function more than once when a group member
fails (bbolt reruns the group without it, then the failed call alone), so
everything done inside the transaction is a pure function of the checkpoint
and the file; outbox sequence numbers are handed back only after success.

A Commit that finds no other write in flight does not wait for the
group-commit window; one that does waits up to Options.MaxBatchDelay (10ms
by default) for others to join. Latency under light concurrency is therefore
about MaxBatchDelay plus one fsync; lower it if that matters more than
throughput.

A failed Commit (full disk, I/O error) leaves the file as it was before the
call: bbolt writes new pages first and the meta page last. Values handed to
Commit must not be modified until it returns.

Open reads every record once (Options.NoVerify skips that) so that a damaged
file is reported as ErrCorrupt at start rather than later. An instance record
that bbolt reads but that does not decode (a broken instance) does not stop
Open: Instances passes it with Instance.Err set, Instance fails with
ErrCorrupt, and the runtime shows that one instance as broken. bbolt panics, or
faults on its memory map, when it meets a damaged page; the store recovers
from both and returns ErrCorrupt naming the file, and never passes such a
panic to the caller. A panic in a caller's callback (Instances, Timers, ...)
is passed on unchanged.

Callbacks run inside a read transaction. Keep them short, and never call
Commit or AckOutbox from one: a write that grows the file waits for every
open read transaction, including the one running the callback (deadlock).
*/
package persist
