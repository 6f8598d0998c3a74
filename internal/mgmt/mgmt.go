package mgmt

import (
	"context"
	"errors"
	"time"

	"github.com/orchd/orchd/internal/events"
)

// Backend is what the management API and the console operate on. All
// methods are safe for concurrent use. Errors wrap the sentinel errors
// below where one applies, so the API can answer with the right status.
type Backend interface {
	// Processes lists every known version of every process (active,
	// retired ones that instances still use), newest version first
	// within a process, processes sorted by name.
	Processes(ctx context.Context) ([]Process, error)
	// Process returns one version of a process by name (local name or
	// {ns}local); version 0 means the active (else newest) version.
	Process(ctx context.Context, name string, version int) (*Process, error)
	// SetActive activates (active=true: new instances start on it, its
	// endpoints are served by it) or retires (false: it serves nothing;
	// its instances finish) one version of a process.
	SetActive(ctx context.Context, name string, version int, active bool) error
	// Bundles lists the bundles of the deploy directory with their state
	// and, for one whose last deploy failed, its problems.
	Bundles(ctx context.Context) ([]Bundle, error)
	// Deploy installs a bundle from a zip archive (deploy.xml at its
	// root or in one top folder) under name, as the deploy directory
	// would, and deploys it at once. A bundle that fails to deploy
	// leaves what was serving in place; the Bundle returned (and the
	// error, wrapping ErrInvalid) carries its problems.
	Deploy(ctx context.Context, name string, zip []byte) (*Bundle, error)
	// Undeploy removes a bundle from the deploy directory and retires
	// its processes.
	Undeploy(ctx context.Context, name string) error

	// Instances lists instances, persistent (stored) and in-memory (while
	// they live), matching q, newest first, one page at a time.
	Instances(ctx context.Context, q Query) (*Page, error)
	// Instance describes one instance in full.
	Instance(ctx context.Context, id string) (*InstanceDetail, error)
	// Act applies an action to one instance. An action that does not
	// apply to the instance's state wraps ErrConflict and says why.
	Act(ctx context.Context, id string, a Action) error
}

// Sentinel errors of Backend methods.
var (
	// ErrNotFound: no such process, version, bundle or instance (404).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the action does not apply in the current state (409).
	ErrConflict = errors.New("conflict")
	// ErrInvalid: the request itself is wrong, e.g. a bad bundle (400/422).
	ErrInvalid = errors.New("invalid")
	// ErrUnavailable: the server cannot do this at all, e.g. no instance
	// store for a persistent action (503).
	ErrUnavailable = errors.New("unavailable")
)

// Action is an operator's action on an instance.
type Action string

// The actions. Retry, Fault and Cancel are ODE's recovery actions: they
// apply only to an instance suspended on a failed activity (an invoke
// whose failure policy suspended it).
const (
	// Suspend stops a waiting instance (a running one at its next step).
	// While it is suspended its timers wait for Resume, and a message for
	// it is refused with a Server fault that names the suspension.
	Suspend Action = "suspend"
	// Resume continues a suspended instance (that was not suspended on a
	// failure; for those, use Retry, Fault or Cancel).
	Resume Action = "resume"
	// Terminate ends the instance as BPEL's <exit> does (no handlers run);
	// it stays listed as terminated.
	Terminate Action = "terminate"
	// Delete removes an ended instance (or terminates and removes a
	// live one) from the store and from memory.
	Delete Action = "delete"
	// Retry runs the failed activity again.
	Retry Action = "retry"
	// Fault throws the failure at the failed activity, for its scope's
	// handlers, as the failure policy's faultOnFailure does: ODE's
	// activityFailure (namespace http://ode.apache.org/activityRecovery),
	// with orchd:partnerFailure data for an invoke.
	Fault Action = "fault"
	// Cancel skips the failed activity: it completes without effect and
	// the instance continues after it.
	Cancel Action = "cancel"
)

// Actions lists every action, in the order tools show them.
var Actions = []Action{Suspend, Resume, Terminate, Delete, Retry, Fault, Cancel}

// Valid says whether a is a known action.
func (a Action) Valid() bool {
	for _, x := range Actions {
		if a == x {
			return true
		}
	}
	return false
}

// The instance states, as listed. "running" is an instance in the middle
// of a run (in-memory ones are only seen while they wait on a partner
// call); "waiting" waits for a message or a timer.
const (
	StateRunning    = "running"
	StateWaiting    = "waiting"
	StateSuspended  = "suspended"
	StateCompleted  = "completed"
	StateFaulted    = "faulted"
	StateTerminated = "terminated"
	StateBroken     = "broken" // its stored record cannot be decoded
)

// Query selects instances. Empty fields match everything.
type Query struct {
	Process string `json:"process,omitempty"` // local name or {ns}local
	Version int    `json:"version,omitempty"` // 0: any
	State   string `json:"state,omitempty"`   // one of the State* names
	// Started and Active bound the creation and last-activity times
	// (inclusive; zero means unbounded).
	StartedAfter  time.Time `json:"startedAfter,omitzero"`
	StartedBefore time.Time `json:"startedBefore,omitzero"`
	ActiveAfter   time.Time `json:"activeAfter,omitzero"`
	ActiveBefore  time.Time `json:"activeBefore,omitzero"`
	// Correlation matches an instance one of whose correlation sets has
	// this value (for a set of several properties, the values joined
	// with ","), optionally only for the set named CorrelationSet.
	Correlation    string `json:"correlation,omitempty"`
	CorrelationSet string `json:"correlationSet,omitempty"`
	// Limit is the page size (default 50, at most 1000). After is the
	// cursor from the previous page's Next: the listing continues with
	// older instances.
	Limit int    `json:"limit,omitempty"`
	After string `json:"after,omitempty"`
	// Scope "local" lists only this node's in-memory instances (what a
	// node of a cluster asks the others for); empty lists the whole
	// cluster's (or, on one node, everything).
	Scope string `json:"scope,omitempty"`
}

// ScopeLocal is Query.Scope for this node's in-memory instances only.
const ScopeLocal = "local"

// Page is one page of an instance listing.
type Page struct {
	Instances []Instance `json:"instances"`
	// Next is the cursor for the next page; empty on the last one.
	Next string `json:"next,omitempty"`
	// Scanned counts the records examined to fill the page (for the
	// curious and for tests of the paging's cost).
	Scanned int `json:"scanned"`
	// Partial names the nodes of a cluster whose in-memory instances are
	// missing from the page, and why ("node-b: timeout"); empty when
	// every node answered.
	Partial []string `json:"partial,omitempty"`
}

// Instance is one instance in a listing.
type Instance struct {
	ID           string            `json:"id"`
	Process      string            `json:"process"` // {ns}local
	Version      int               `json:"version,omitempty"`
	InMemory     bool              `json:"inMemory,omitempty"`
	State        string            `json:"state"`
	Started      time.Time         `json:"started"`
	LastActive   time.Time         `json:"lastActive"`
	Correlations map[string]string `json:"correlations,omitempty"`
	// Fault names the fault an instance ended with, or why it is
	// suspended or broken.
	Fault string `json:"fault,omitempty"`
	// Node is the cluster node the instance runs on, where known: the
	// node holding an in-memory instance, the node running a persistent
	// one now (its lock holder); empty on one node and for a persistent
	// instance no node runs at the moment (any node runs it next).
	Node string `json:"node,omitempty"`
}

// InstanceDetail is everything known of one instance.
type InstanceDetail struct {
	Instance
	// Variables maps each variable (scope-qualified where two share a
	// name: "scope/name") to its value as XML text.
	Variables map[string]string `json:"variables"`
	// Branches says where each line of control is: the activity it is
	// at (or waits in) and what it waits for.
	Branches []Branch `json:"branches"`
	// Alarms are the pending timers.
	Alarms []time.Time `json:"alarms,omitempty"`
	// Failure is the failed activity an instance is suspended on.
	Failure *Failure `json:"failure,omitempty"`
	// Actions lists the actions that apply in the current state.
	Actions []Action `json:"actions"`
	// Timeline is the instance's recent events, oldest first (empty
	// unless events are kept: orchd serve --timeline). Their Process,
	// Version and Instance are empty: the detail names them.
	Timeline []events.Event `json:"timeline"`
	// Activities are the statuses of the process's activities (those
	// with an element, the process itself first), in the order of their
	// plan ids, which a process diagram's activities carry too; absent
	// when the instance's control state cannot be read (its version is
	// not deployed, or its record does not decode).
	Activities []ActivityStatus `json:"activities,omitempty"`
	// Fingerprint names the instance's version (the hash of its BPEL
	// file) the same on every node, where version numbers may differ.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// ActivityStatus is one activity's status in an instance.
type ActivityStatus struct {
	// ID is the activity's id in its process version's plan.
	ID       int    `json:"id"`
	Kind     string `json:"kind"` // "receive", "sequence", ...; "process" for the root
	Name     string `json:"name,omitempty"`
	Position string `json:"position,omitempty"` // file:line
	// Status is one of the Activity* statuses.
	Status string `json:"status"`
	// Fault is the fault a faulted activity ended with, where known.
	Fault string `json:"fault,omitempty"`
	// Start is when a running activity started, known for instances
	// sampled for timing (Process.SampleEvery).
	Start time.Time `json:"start,omitzero"`
}

// The activity statuses of ActivityStatus. The status of an activity is
// derived from where the instance's lines of control stand: "unknown"
// says it cannot be (what ran inside a completed if, pick, loop or
// handler, and a loop's earlier iterations, are not kept).
const (
	ActivityNotReached  = "notReached"
	ActivityRunning     = "running"
	ActivityWaiting     = "waiting" // a message, an alarm or incoming links
	ActivityFailed      = "failed"  // the instance is suspended on its failure
	ActivityCompleted   = "completed"
	ActivityFaulted     = "faulted"     // the body of a scope whose fault handler runs
	ActivityCompensated = "compensated" // a scope whose compensation handler runs
	ActivitySkipped     = "skipped"     // a branch not taken, or dead-path elimination
	ActivityUnknown     = "unknown"
)

// Branch is one line of control of an instance.
type Branch struct {
	Activity string `json:"activity"`           // kind and name: "receive approve"
	Position string `json:"position,omitempty"` // file:line
	// Waiting says what it waits for: "message op on partnerLink",
	// "alarm at T", "partner answer", "link x"; empty when it runs.
	Waiting string `json:"waiting,omitempty"`
}

// Failure is the activity an instance is suspended on.
type Failure struct {
	Activity string    `json:"activity"`
	Position string    `json:"position,omitempty"`
	Reason   string    `json:"reason"`
	Attempts int       `json:"attempts"`
	Time     time.Time `json:"time"`
}

// Process is one version of a deployed process.
type Process struct {
	Name      string     `json:"name"` // {ns}local
	Local     string     `json:"local"`
	Version   int        `json:"version"`
	Bundle    string     `json:"bundle"`
	File      string     `json:"file"`
	State     string     `json:"state"` // "active" or "retired"
	InMemory  bool       `json:"inMemory"`
	Deployed  time.Time  `json:"deployed"`
	Endpoints []Endpoint `json:"endpoints"`
	Warnings  []string   `json:"warnings,omitempty"`
	Stats     Stats      `json:"stats"`
	// Fingerprint identifies the definition (a hash of the compiled
	// bundle): the same on every node that deployed the same process,
	// whereas Version numbers are each node's own count of its deploys.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Nodes are the cluster nodes serving this definition (empty on one
	// node), and NodeStats each one's version number and counters; Stats
	// is then their sum, and Version the answering node's number (the
	// first node's when it lacks the definition).
	Nodes     []string    `json:"nodes,omitempty"`
	NodeStats []NodeStats `json:"nodeStats,omitempty"`
	// SampleEvery: one instance in SampleEvery is timed per activity
	// for the Outline (in every run it has), after the first
	// SampleFirst.
	SampleEvery int `json:"sampleEvery,omitempty"`
	// SampleFirst: the first SampleFirst instances of a version are
	// timed, whatever SampleEvery says.
	SampleFirst int `json:"sampleFirst,omitempty"`
	// Outline is the process's activity tree with per-activity counts
	// and times (only for Process, not in the Processes listing).
	Outline *Activity `json:"outline,omitempty"`
}

// Endpoint is one served port of a process.
type Endpoint struct {
	Path       string   `json:"path"`
	Service    string   `json:"service"`
	Port       string   `json:"port"`
	SOAP       string   `json:"soap"` // "1.1" or "1.2"
	Operations []string `json:"operations"`
}

// Stats are a process version's counters since orchd started.
type Stats struct {
	Started    uint64 `json:"started"`
	Completed  uint64 `json:"completed"`
	Faulted    uint64 `json:"faulted"`
	Terminated uint64 `json:"terminated"`
	Suspended  uint64 `json:"suspended"`
	// Exchanges are requests served; ExchangeNanos their summed time
	// (mean latency = ExchangeNanos/Exchanges).
	Exchanges     uint64 `json:"exchanges"`
	ExchangeNanos uint64 `json:"exchangeNs"`
}

// Activity is one node of a process outline.
type Activity struct {
	// ID is the activity's id in the version's plan (as in
	// ActivityStatus and the diagram's data-activity).
	ID       int    `json:"id"`
	Kind     string `json:"kind"` // "sequence", "invoke", ...
	Name     string `json:"name,omitempty"`
	Position string `json:"position"` // file:line
	// Count is how many times it completed in the instances sampled for
	// timing (one in Process.SampleEvery), and Nanos the summed time of
	// those (mean = Nanos/Count).
	Count uint64 `json:"count"`
	Nanos uint64 `json:"ns"`
	// P99Nanos is the 99th percentile of those times (an upper bound
	// within 19%: a histogram bucket's), 0 when none was timed.
	P99Nanos uint64 `json:"p99Ns,omitempty"`
	// Faults is how often it faulted, in every instance (not only
	// sampled ones).
	Faults   uint64      `json:"faults,omitempty"`
	Children []*Activity `json:"children,omitempty"`
}

// Bundle is one bundle of the deploy directory.
type Bundle struct {
	Name string `json:"name"`
	// State: "deployed", "failed" (its last deploy failed; an older
	// version may still serve), "pending" (not yet stable).
	State     string   `json:"state"`
	Processes []string `json:"processes,omitempty"` // {ns}local of its active versions
	// Tasks are the {ns}local of the tasks and notifications a task
	// package (WSO2 BPS's: .ht files and htconfig.xml, no deploy.xml)
	// publishes; Version is then the package's.
	Tasks    []string  `json:"tasks,omitempty"`
	Version  int       `json:"version,omitempty"`
	Deployed time.Time `json:"deployed,omitzero"`
	// Errors are the problems of its last failed deploy, one per line
	// (file:line: element: what is wrong).
	Errors []string `json:"errors,omitempty"`
}

// BulkResult reports a bulk action.
type BulkResult struct {
	Action  Action `json:"action"`
	Matched int    `json:"matched"` // instances the filter selected (up to max)
	Done    int    `json:"done"`
	// Failed lists the instances the action did not apply to, and why.
	Failed []BulkFailure `json:"failed,omitempty"`
	// Truncated says more instances matched than max.
	Truncated bool `json:"truncated"`
}

// BulkFailure is one instance a bulk action failed on.
type BulkFailure struct {
	ID    string `json:"id"`
	Error string `json:"error"`
}

// NodeStats are one cluster node's counters of a process version.
type NodeStats struct {
	Node    string `json:"node"`
	Version int    `json:"version"` // the node's number for it
	Stats   Stats  `json:"stats"`
}

// Cluster is the cluster view (GET /api/v1/cluster): the live nodes.
type Cluster struct {
	// Name is the cluster's name (orchd serve --cluster); empty on a
	// node that is not in a cluster, whose view lists itself alone.
	Name  string `json:"name,omitempty"`
	Nodes []Node `json:"nodes"`
	// Partial names the nodes whose own stats are missing, and why.
	Partial []string `json:"partial,omitempty"`
}

// Node is one live node of a cluster.
type Node struct {
	ID string `json:"id"`
	// URL is its SOAP base URL, Admin its management API's base URL.
	URL   string `json:"url,omitempty"`
	Admin string `json:"admin,omitempty"`
	// Versions are the process versions it keeps (active and retired),
	// as its cluster membership publishes them: "{ns}local#fingerprint"
	// (Process.Fingerprint), the same on every node for one definition.
	Versions []string `json:"versions,omitempty"`
	// Self marks the node that answered.
	Self bool `json:"self,omitempty"`
	// Stats are its own counters (nil when it did not answer).
	Stats *NodeCounters `json:"stats,omitempty"`
}

// NodeCounters are one node's own figures.
type NodeCounters struct {
	Started time.Time `json:"started"`
	// UptimeSeconds since Started.
	UptimeSeconds float64 `json:"uptimeS"`
	// Exchanges are requests served since it started, over every
	// process version.
	Exchanges uint64 `json:"exchanges"`
	// InFlight are the exchanges in flight now (-1: not counted, it runs
	// without --max-inflight).
	InFlight int64 `json:"inFlight"`
	// TxPerSec is the exchange rate since the previous sample (at least a
	// second before; over the uptime for the first).
	TxPerSec float64 `json:"txPerSec"`
}

// ClusterBackend is what a Backend that knows its cluster adds (the
// management API serves GET /api/v1/cluster when its Backend has it).
type ClusterBackend interface {
	// Cluster lists the live nodes, this one marked Self, each with its
	// own counters (fetched from each node's API); local: this node
	// alone.
	Cluster(ctx context.Context, local bool) (*Cluster, error)
	// LocalProcesses is Processes of this node alone, with its own
	// counters (Processes sums the cluster's).
	LocalProcesses(ctx context.Context) ([]Process, error)
}

// authKey keys the caller's Authorization header in a context.
type authKey struct{}

// WithAuthorization returns ctx carrying the caller's Authorization
// header, which a Backend forwards when it asks another node of its
// cluster on the caller's behalf.
func WithAuthorization(ctx context.Context, header string) context.Context {
	return context.WithValue(ctx, authKey{}, header)
}

// AuthorizationOf is the Authorization header WithAuthorization put in
// ctx, or "".
func AuthorizationOf(ctx context.Context) string {
	h, _ := ctx.Value(authKey{}).(string)
	return h
}
