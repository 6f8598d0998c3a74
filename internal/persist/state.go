package persist

import (
	"fmt"
	"time"
)

// State is the life-cycle state of a persistent instance. The zero value is
// not a valid state; Commit rejects it.
type State uint8

// Instance states. The numeric values are stored on disk: never renumber.
const (
	Running    State = iota + 1 // executing, or interrupted while executing
	Waiting                     // quiescent, waiting for a message or a timer
	Completed                   // ended normally
	Faulted                     // ended with an uncaught fault
	Terminated                  // ended by exit or by an operator
	Suspended                   // stopped for an operator (e.g. failure policy)
)

// String returns the lower-case name of s ("running", "waiting", ...), or
// "state(N)" for an invalid value.
func (s State) String() string {
	switch s {
	case Running:
		return "running"
	case Waiting:
		return "waiting"
	case Completed:
		return "completed"
	case Faulted:
		return "faulted"
	case Terminated:
		return "terminated"
	case Suspended:
		return "suspended"
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

func (s State) valid() bool { return s >= Running && s <= Suspended }

// ParseState is the inverse of State.String.
func ParseState(name string) (State, error) {
	for s := Running; s <= Suspended; s++ {
		if s.String() == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("persist: unknown instance state %q", name)
}

// Instance is the stored record of one persistent process instance. The store
// treats Frames and the correlation keys as opaque bytes; the runtime encodes
// them.
type Instance struct {
	ID               string            // assigned by the runtime, see NewID; no NUL byte, at most MaxIDLen bytes
	Process          string            // process QName in Clark notation {ns}local
	State            State             // life-cycle state
	Created, Updated time.Time         // a zero value is replaced by the commit time; stored with nanosecond precision, read back in time.Local
	Frames           []byte            // opaque control state, encoded by the runtime
	Correlations     map[string]string // correlation set name -> opaque key
	Fault            string            // why it faulted or was suspended, if it did
	// Err is set by Instances, never by Commit, when the stored record
	// cannot be decoded: only ID is then valid, and Err (wrapping
	// ErrCorrupt) says what failed. Commit ignores it.
	Err error
}

// Route binds an opaque key (built by the runtime from a correlation set, an
// operation and a partner link) to the instance waiting for it.
type Route struct {
	Key        string
	InstanceID string // empty means the checkpoint's instance
}

// Timer is a durable alarm of an instance. Timers are returned in Due order.
type Timer struct {
	Due        time.Time
	InstanceID string // empty means the checkpoint's instance
	Tag        string // opaque: which activity the timer belongs to
}

// OutboxMessage is a request recorded in a checkpoint and sent after the
// commit (RELIABLE invocation). The store assigns Seq.
type OutboxMessage struct {
	Seq        uint64 // assigned by Commit (written back into the checkpoint on success)
	InstanceID string // empty means the checkpoint's instance
	Partner    string
	Operation  string
	Payload    []byte
	// Err is set, by Store.Outbox, on a stored record that cannot be
	// decoded (a damaged file; it wraps ErrCorrupt): the message cannot
	// be sent, and only Seq may be known. Outbox reports such a record
	// and goes on, so that one damaged record does not keep the others
	// from being sent.
	Err error
}

// Checkpoint is everything one logical transaction changed for one instance.
//
// Vars holds only the variables changed since the previous checkpoint: a
// non-nil value replaces the slot, a nil value deletes it, slots not
// mentioned keep their stored value. The Instance record is always rewritten
// whole (it is small: the variables live elsewhere).
//
// When Delete is set, the instance, all its variables, routes and timers are
// removed and Vars, AddRoutes, RemoveRoutes, AddTimers and RemoveTimers are
// ignored; Outbox messages are still recorded (they outlive the instance).
//
// Byte slices in a Checkpoint must not be modified until Commit returns.
type Checkpoint struct {
	Instance                Instance
	Vars                    map[int][]byte
	AddRoutes, RemoveRoutes []Route
	AddTimers, RemoveTimers []Timer
	Outbox                  []OutboxMessage
	Delete                  bool
	// Fence, when not nil, is a precondition of this checkpoint that a
	// store shared by several processes checks inside the commit's
	// transaction: the token of the lock under which the instance ran
	// (process.InstanceOwners), so that a process that lost the lock
	// cannot write over the state another process stored since. Its type
	// is the shared store's (etcdstore.Fence); this bbolt store, used by
	// one process, ignores it.
	Fence any
}

// Stats are cumulative counters of a Store, safe to read concurrently with
// any other use. A metrics collector turns them into counters.
type Stats struct {
	Commits      uint64 // write transactions committed (a group commit counts once)
	Checkpoints  uint64 // checkpoints committed
	BytesWritten uint64 // encoded key and value bytes put by committed checkpoints
	CommitNanos  uint64 // total wall time spent in Commit, including failed calls
	CommitErrors uint64 // Commit calls that returned an error
}
