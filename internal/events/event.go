package events

import (
	"fmt"
	"strings"
	"time"
)

// Kind is what happened.
type Kind uint8

// The kinds of events, in ODE's vocabulary.
const (
	InstanceCreated Kind = iota + 1
	InstanceCompleted
	InstanceFaulted
	InstanceTerminated
	InstanceSuspended
	InstanceResumed
	ActivityStarted
	ActivityCompleted
	ActivityFaulted
	VariableChanged
	PartnerInvoked
	PartnerAnswered
	CorrelationSetInitialized
	// The human task kinds (internal/humantask): Name is the task's
	// definition, Instance the task's id, Detail the state it is in (or
	// the escalation that fired), Variable who acted.
	TaskCreated
	TaskClaimed
	TaskEnded
	TaskEscalated
	// InstanceMigrated: an operator moved the waiting instance to another
	// version of its process (Detail says from and to; Version is the
	// new one). Instance lifecycle, numbered after the task kinds.
	InstanceMigrated
	kindEnd
)

var kindNames = [kindEnd]string{"", "instanceCreated", "instanceCompleted", "instanceFaulted",
	"instanceTerminated", "instanceSuspended", "instanceResumed", "activityStarted",
	"activityCompleted", "activityFaulted", "variableChanged", "partnerInvoked",
	"partnerAnswered", "correlationSetInitialized", "taskCreated", "taskClaimed", "taskEnded", "taskEscalated", "instanceMigrated"}

// String is the kind's name as it appears in JSON ("activityStarted").
func (k Kind) String() string {
	if k < kindEnd && k > 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// MarshalText writes the kind's name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind's name.
func (k *Kind) UnmarshalText(b []byte) error {
	for i := Kind(1); i < kindEnd; i++ {
		if kindNames[i] == string(b) {
			*k = i
			return nil
		}
	}
	return fmt.Errorf("unknown event kind %q", b)
}

// Category groups kinds the way ODE's deploy.xml <enable-event> names
// them; a process enables a set of categories.
type Category uint8

// The categories. PartnerInteraction is orchd's (ODE reported invokes as
// activity events only).
const (
	InstanceLifecycle Category = 1 << iota
	ActivityLifecycle
	DataHandling
	ScopeHandling
	Correlation
	PartnerInteraction
	// HumanTask are the task engine's events (orchd's): no process
	// emits them, so All leaves them out.
	HumanTask
	// All is every category of a process's events: ODE's default, and
	// generate="all".
	All = InstanceLifecycle | ActivityLifecycle | DataHandling | ScopeHandling | Correlation | PartnerInteraction
)

var categoryNames = []struct {
	name string
	c    Category
}{
	{"instanceLifecycle", InstanceLifecycle},
	{"activityLifecycle", ActivityLifecycle},
	{"dataHandling", DataHandling},
	{"scopeHandling", ScopeHandling},
	{"correlation", Correlation},
	{"partnerInteraction", PartnerInteraction},
	{"humanTask", HumanTask},
}

// ParseCategory reads an <enable-event> name (ODE's, case-insensitive).
func ParseCategory(name string) (Category, error) {
	for _, c := range categoryNames {
		if strings.EqualFold(c.name, name) {
			return c.c, nil
		}
	}
	names := make([]string, len(categoryNames))
	for i, c := range categoryNames {
		names[i] = c.name
	}
	return 0, fmt.Errorf("unknown event category %q (want one of %s)", name, strings.Join(names, ", "))
}

// Category is the category k belongs to.
func (k Kind) Category() Category {
	switch {
	case k >= InstanceCreated && k <= InstanceResumed, k == InstanceMigrated:
		return InstanceLifecycle
	case k >= ActivityStarted && k <= ActivityFaulted:
		return ActivityLifecycle
	case k == VariableChanged:
		return DataHandling
	case k == PartnerInvoked || k == PartnerAnswered:
		return PartnerInteraction
	case k == CorrelationSetInitialized:
		return Correlation
	case k >= TaskCreated && k <= TaskEscalated:
		return HumanTask
	}
	return 0
}

// Event is one thing that happened to an instance. Fields that do not
// apply to its kind are empty. It is the one shape of an event: in the
// events file, on a webhook, in the live stream and in an instance's
// timeline (mgmt.InstanceDetail), whose events leave Process, Version
// and Instance empty because the detail names them.
type Event struct {
	Kind Kind      `json:"kind"`
	Time time.Time `json:"time"`
	// Process is the process's name in Clark notation ({ns}local), set
	// on every event emitted; Version its version when it has one.
	Process  string `json:"process,omitempty"`
	Version  int    `json:"version,omitempty"`
	Instance string `json:"instance,omitempty"`
	// Activity is the activity's element (invoke, assign, ...), Name its
	// name attribute, Position where it is (file.bpel:LINE).
	Activity string `json:"activity,omitempty"`
	Name     string `json:"name,omitempty"`
	Position string `json:"position,omitempty"`
	// Variable names the variable changed; CorrelationSet the set
	// initialized, Value its values.
	Variable       string `json:"variable,omitempty"`
	CorrelationSet string `json:"correlationSet,omitempty"`
	Value          string `json:"value,omitempty"`
	// Partner and Operation name a partner call.
	Partner   string `json:"partner,omitempty"`
	Operation string `json:"operation,omitempty"`
	// Fault names a fault (faulted kinds, a partner's fault answer);
	// Detail says more (an error, a suspension's reason).
	Fault  string `json:"fault,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Duration is how long the instance, or the partner call, took.
	Duration time.Duration `json:"durationNs,omitempty"`
	// Task is a task event's task id (its Instance is the process
	// instance that waits for the task, when one does).
	Task string `json:"task,omitempty"`
}
