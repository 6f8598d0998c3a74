package humantask

import (
	"context"
	"encoding/xml"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
)

// Clock is the time of task deadlines and timestamps; tests use a fake
// one to step through time without sleeping.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not started, and reports whether
	// it did.
	Stop() bool
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Options configure an Engine. The zero value of each field is explained
// on it.
type Options struct {
	// Store keeps the tasks; nil keeps them in memory (NewMemStore).
	Store Store
	// Directory resolves and authenticates people; nil knows nobody
	// (every task is then reachable only by the engine and escalations).
	Directory Directory
	// Clock is the time of deadlines; nil means the system clock.
	Clock Clock
	// Logger receives the engine's logs; nil discards them.
	Logger *slog.Logger
	// Registerer receives the task metrics; nil leaves them unregistered.
	Registerer prometheus.Registerer
	// Events receives task events; nil emits none.
	Events *events.Dispatcher
	// Callbacks binds the endpoint a task's outcome is sent to (the
	// waiting process's callback address): the SOAP client, which may
	// call orchd's own front door. Nil means outcomes are only handed to
	// Ended.
	Callbacks func(ep *exchange.Endpoint) exchange.Partner
	// Ended, when set, is called (in its own goroutine) with every task
	// that reaches a final state: BPEL4People's people activity
	// continues its instance from it.
	Ended func(t Task)
	// CallbackRetry is the first delay before a callback that failed is
	// sent again (it doubles up to a minute); zero means 1s.
	CallbackRetry time.Duration
}

// Engine is the task engine. Its methods are safe for concurrent use;
// every operation loads the task from the store, changes it and stores
// it in one transaction (Store.UpdateTask), so engines of several nodes
// may share one store.
type Engine struct {
	opts    Options
	log     *slog.Logger
	store   Store
	clock   Clock
	metrics *metrics

	mu sync.RWMutex
	// defs are the deployed definitions by bundle, newest version last.
	defs map[string][]*Definitions
	// timers are the scheduled deadlines by task id.
	timers map[string]Timer
	closed bool
}

// errStub is the answer of what is not built yet.
var errStub = errors.New("humantask: not implemented yet")

// New returns an engine; Recover schedules the stored tasks' deadlines.
func New(o Options) *Engine {
	e := &Engine{opts: o, log: o.Logger, store: o.Store, clock: o.Clock, defs: map[string][]*Definitions{}, timers: map[string]Timer{}}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.store == nil {
		e.store = NewMemStore()
	}
	if e.clock == nil {
		e.clock = realClock{}
	}
	e.metrics = newMetrics(o.Registerer)
	return e
}

// Recover reads the stored tasks and schedules their pending deadlines
// and undelivered callbacks (after a restart: those that fell due fire
// at once).
func (e *Engine) Recover(ctx context.Context) error { return errStub }

// Close stops the timers.
func (e *Engine) Close() {}

// Authenticate checks a person's credentials against the directory.
func (e *Engine) Authenticate(user, password string) (Identity, error) { return Identity{}, errStub }

// CreateRequest is what a task is created from.
type CreateRequest struct {
	// Def is the definition (a deployed one, or a people activity's
	// inline local task); Bundle and Version the bundle version it
	// belongs to.
	Def     *TaskDef
	Bundle  string
	Version int
	// Input is the input message's payload element (XML).
	Input string
	// Initiator is the task initiator's user name, if known.
	Initiator string
	// Process and Instance name the creating process and instance.
	Process, Instance string
	// Callback is where the outcome goes (nil: only Options.Ended).
	Callback *Callback
	// Skipable overrides the definition's (BPEL4People's isSkipable).
	Skipable *bool
}

// Create creates a task (as System): it resolves its people, priority
// and presentation from the input, stores it Ready (Reserved when one
// user is its only potential owner) and schedules its deadlines.
func (e *Engine) Create(ctx context.Context, r CreateRequest) (Task, error) { return Task{}, errStub }

// Get returns task id, if who may see it.
func (e *Engine) Get(ctx context.Context, who Identity, id string) (Task, error) {
	return Task{}, errStub
}

// List returns the tasks who may see that f selects, newest first.
func (e *Engine) List(ctx context.Context, who Identity, f Filter) ([]Task, error) {
	return nil, errStub
}

// Claim reserves a Ready task for who, a potential owner who is not an
// excluded owner (four eyes).
func (e *Engine) Claim(ctx context.Context, who Identity, id string) (Task, error) {
	return Task{}, errStub
}

// Start starts a task: Reserved by who (its actual owner), or Ready and
// who a potential owner (which claims it too).
func (e *Engine) Start(ctx context.Context, who Identity, id string) (Task, error) {
	return Task{}, errStub
}

// Stop takes an in-progress task back to Reserved (actual owner or
// business administrator).
func (e *Engine) Stop(ctx context.Context, who Identity, id string) (Task, error) {
	return Task{}, errStub
}

// Release gives a Reserved or in-progress task back to its potential
// owners (Ready).
func (e *Engine) Release(ctx context.Context, who Identity, id string) (Task, error) {
	return Task{}, errStub
}

// Complete completes an in-progress (or Reserved: started implicitly)
// task with output (the output message's payload, XML); its actual owner
// only. The outcome goes to the callback.
func (e *Engine) Complete(ctx context.Context, who Identity, id, output string) (Task, error) {
	return Task{}, errStub
}

// Fail fails an in-progress task with a fault of its operation; its
// actual owner only.
func (e *Engine) Fail(ctx context.Context, who Identity, id string, f Fault) (Task, error) {
	return Task{}, errStub
}

// Skip ends a skipable task without an outcome (Obsolete): the task
// initiator or a business administrator, or its actual owner.
func (e *Engine) Skip(ctx context.Context, who Identity, id string) (Task, error) {
	return Task{}, errStub
}

// Delegate makes user the actual owner of the task (Reserved), adding it
// to the potential owners: the actual owner, a potential owner or a
// business administrator may delegate; user may not be an excluded
// owner.
func (e *Engine) Delegate(ctx context.Context, who Identity, id, user string) (Task, error) {
	return Task{}, errStub
}

// Forward replaces who's part of the potential owners with to (the task
// goes back to Ready): a potential owner, the actual owner or a business
// administrator.
func (e *Engine) Forward(ctx context.Context, who Identity, id string, to Entities) (Task, error) {
	return Task{}, errStub
}

// Suspend suspends an open task (business administrator, or potential
// or actual owner).
func (e *Engine) Suspend(ctx context.Context, who Identity, id string) (Task, error) {
	return Task{}, errStub
}

// Resume takes a suspended task back to the state it was suspended in.
func (e *Engine) Resume(ctx context.Context, who Identity, id string) (Task, error) {
	return Task{}, errStub
}

// SetPriority changes the priority (0 highest .. 10 lowest): business
// administrator or actual owner.
func (e *Engine) SetPriority(ctx context.Context, who Identity, id string, p int) (Task, error) {
	return Task{}, errStub
}

// AddComment adds a comment; anyone who may see the task.
func (e *Engine) AddComment(ctx context.Context, who Identity, id, text string) (Task, error) {
	return Task{}, errStub
}

// Exit ends an open task because the process instance that created it
// ended (Exited); System only.
func (e *Engine) Exit(ctx context.Context, id string) (Task, error) { return Task{}, errStub }

// ExitInstance exits every open task the process instance created.
func (e *Engine) ExitInstance(ctx context.Context, process, instance string) (int, error) {
	return 0, errStub
}

// Deploy parses the .ht files and htconfig.xml of the bundle in dir and
// makes them the bundle's newest version. A bundle with no .ht file
// deploys nothing and is no error. A broken file is an error naming the
// file, element and line; the version deployed before stays.
func (e *Engine) Deploy(bundle string, version int, dir string) error { return errStub }

// Undeploy forgets the bundle's definitions (open tasks keep theirs).
func (e *Engine) Undeploy(bundle string) {}

// Definition returns the newest deployed definition named n.
func (e *Engine) Definition(n xml.Name) (*TaskDef, bool) { return nil, false }

// Partners wraps fallback, the binding of partner endpoints that no
// process provides, so that a call to a service a deployed task
// publishes (htconfig.xml) creates that task; other calls go to
// fallback. The task is looked up at each call, so a bundle deployed
// after the calling process still serves it.
func (e *Engine) Partners(fallback func(ep *exchange.Endpoint) exchange.Partner) func(ep *exchange.Endpoint) exchange.Partner {
	return fallback
}
