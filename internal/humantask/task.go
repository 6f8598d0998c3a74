package humantask

import (
	"encoding/xml"
	"time"
)

// NS is the WS-HumanTask 1.1 namespace of task definitions (htd).
const NS = "http://docs.oasis-open.org/ns/bpel4people/ws-humantask/200803"

// State is a task's state in the WS-HumanTask 1.1 lifecycle (section
// 4.10). Its string is the spec's name, as WS-HT clients see it.
type State string

// The states. Ready, Reserved and InProgress are the open states a person
// works in; Completed, Failed, Error, Exited and Obsolete are final.
const (
	Created    State = "CREATED"
	Ready      State = "READY"
	Reserved   State = "RESERVED"
	InProgress State = "IN_PROGRESS"
	Suspended  State = "SUSPENDED"
	Completed  State = "COMPLETED"
	Failed     State = "FAILED"
	Error      State = "ERROR"
	Exited     State = "EXITED"
	Obsolete   State = "OBSOLETE"
)

// Final reports whether no operation changes a task in state s any more.
func (s State) Final() bool {
	switch s {
	case Completed, Failed, Error, Exited, Obsolete:
		return true
	}
	return false
}

// States are all the states, in lifecycle order (for filters and
// metrics).
var States = []State{Created, Ready, Reserved, InProgress, Suspended, Completed, Failed, Error, Exited, Obsolete}

// ParseState reads a state by its name, case-insensitively; "" and false
// for an unknown one.
func ParseState(s string) (State, bool) {
	for _, st := range States {
		if equalFoldASCII(string(st), s) {
			return st, true
		}
	}
	return "", false
}

// Role is a generic human role of WS-HumanTask 1.1 (section 3.1), named
// as the peopleAssignments element of a definition names it.
type Role string

// The roles. ActualOwner is the one user who owns a reserved or started
// task; the others are assigned by the definition (and escalations,
// delegation and forwarding).
const (
	PotentialOwners        Role = "potentialOwners"
	ExcludedOwners         Role = "excludedOwners"
	BusinessAdministrators Role = "businessAdministrators"
	TaskInitiator          Role = "taskInitiator"
	TaskStakeholders       Role = "taskStakeholders"
	Recipients             Role = "recipients"
	ActualOwner            Role = "actualOwner"
)

// Entities are the people of one role: users by name and groups of the
// people directory (a logical people group resolves to either).
type Entities struct {
	Users  []string `json:"users,omitempty"`
	Groups []string `json:"groups,omitempty"`
}

// Empty reports whether e names nobody.
func (e Entities) Empty() bool { return len(e.Users) == 0 && len(e.Groups) == 0 }

// Identity is an authenticated caller: a user of the people directory and
// the groups it belongs to. The zero Identity is nobody: it may do
// nothing. System is the engine itself (a process creating a task, an
// escalation): it may do what the engine does, and no person holds it.
type Identity struct {
	User   string
	Groups []string
	system bool
}

// System is the identity of the engine's own actions.
func System() Identity { return Identity{User: "orchd", system: true} }

// Comment is a comment added to a task (addComment).
type Comment struct {
	ID   int       `json:"id"`
	By   string    `json:"by"`
	At   time.Time `json:"at"`
	Text string    `json:"text"`
}

// Fault is the fault a task failed with (fail): the name of a fault of
// the task's operation and its detail message (XML).
type Fault struct {
	Name   string `json:"name"`
	Detail string `json:"detail,omitempty"`
}

// DeadlineKind says what a deadline waits for.
type DeadlineKind string

// The deadline kinds: a start deadline is met when the task is started
// (in progress), a completion deadline when it ends.
const (
	StartDeadline      DeadlineKind = "start"
	CompletionDeadline DeadlineKind = "completion"
)

// PendingDeadline is a deadline of one task: when it falls due and
// whether it fired. It is stored with the task, so that a restart
// schedules it again (a durable timer) and one that fell due while orchd
// was down fires at once.
type PendingDeadline struct {
	Name  string       `json:"name"`
	Kind  DeadlineKind `json:"kind"`
	Due   time.Time    `json:"due"`
	Fired bool         `json:"fired,omitempty"`
	// Met is set when the task got past what the deadline waits for in
	// time (started, or ended): it never fires.
	Met bool `json:"met,omitempty"`
}

// Callback is where a task's outcome goes when it ends: the waiting
// process instance's endpoint and operation (the task interface's
// responseOperation on responsePortType), and the SOAP header blocks
// (serialized XML) that route the message to that instance (the
// WS-Addressing reference parameters or ODE's session header the
// process's invoke carried).
type Callback struct {
	Address string `json:"address"`
	// Service and Port are htconfig.xml's hic:callback, when it names
	// one: the process's endpoint, found by them when Address is stale
	// (orchd listens elsewhere since).
	Service   xml.Name `json:"service,omitempty"`
	Port      string   `json:"port,omitempty"`
	PortType  xml.Name `json:"portType"`
	Operation string   `json:"operation"`
	Headers   []string `json:"headers,omitempty"`
	// Delivered is set once the process took the callback.
	Delivered bool `json:"delivered,omitempty"`
}

// Task is one task instance: its definition's name and version, its
// state, the people of its roles, its data and its history. Tasks are
// values: the engine returns copies, and changes them only through its
// operations.
type Task struct {
	ID string `json:"id"`
	// Name is the task definition's QName; Bundle and Version the bundle
	// version it was created from (a running task keeps its definition
	// when the bundle is redeployed).
	Name    xml.Name `json:"name"`
	Bundle  string   `json:"bundle"`
	Version int      `json:"version"`
	// Notification marks a notification (it is Ready until its
	// recipients remove it, and has no owner).
	Notification bool  `json:"notification,omitempty"`
	State        State `json:"state"`
	// SuspendedIn is the state a suspended task resumes to.
	SuspendedIn State `json:"suspendedIn,omitempty"`
	Priority    int   `json:"priority"`
	Skipable    bool  `json:"skipable,omitempty"`
	// Subject and Description are the presentation elements with the
	// presentation parameters substituted; Parameters their values.
	Subject     string            `json:"subject,omitempty"`
	Description string            `json:"description,omitempty"`
	Parameters  map[string]string `json:"parameters,omitempty"`
	// Input is the input message's payload (XML), Output the output a
	// completion gave, Fault the fault a failure gave.
	Input  string `json:"input,omitempty"`
	Output string `json:"output,omitempty"`
	Fault  *Fault `json:"fault,omitempty"`
	// People are the entities of each role; ActualOwner the owner of a
	// reserved or started task.
	People      map[Role]Entities `json:"people"`
	ActualOwner string            `json:"actualOwner,omitempty"`
	Created     time.Time         `json:"created"`
	Activated   time.Time         `json:"activated,omitempty"`
	Claimed     time.Time         `json:"claimed,omitempty"`
	Ended       time.Time         `json:"ended,omitempty"`
	Updated     time.Time         `json:"updated"`
	Deadlines   []PendingDeadline `json:"deadlines,omitempty"`
	// Escalations names the escalations that fired, in order.
	Escalations []string  `json:"escalations,omitempty"`
	Comments    []Comment `json:"comments,omitempty"`
	Callback    *Callback `json:"callback,omitempty"`
	// EndPending is set, in the change that ends a task a process
	// instance waits for without a callback (a people activity's), until
	// Options.Ended took the end: a restart in between sends it again.
	EndPending bool `json:"endPending,omitempty"`
	// Process and Instance name the process (Clark notation) and
	// instance that created the task, when known.
	Process  string `json:"process,omitempty"`
	Instance string `json:"instance,omitempty"`
}

// Filter selects tasks in a listing. Zero fields select all.
type Filter struct {
	// States keeps tasks in one of these states; empty means the open
	// ones (Ready, Reserved, InProgress, Suspended).
	States []State
	// Name keeps tasks of this definition (its local name).
	Name string
	// Role keeps tasks where the caller has this role; empty means any
	// role that lets the caller see the task.
	Role Role
	// Notifications keeps notifications only (true) or tasks only
	// (false); nil keeps both.
	Notifications *bool
	// Limit bounds the listing (0: 1000).
	Limit int
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
