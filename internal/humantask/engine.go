package humantask

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/xmldoc"
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
	// a process instance waits for without a callback once it ends
	// (completed, failed or skipped; not exited): BPEL4People's people
	// activity continues its instance from it. An error is retried as a
	// callback is; the task keeps the end pending (Task.EndPending) until
	// Ended returns nil, so a restart in between sends it again.
	Ended func(t Task) error
	// CallbackRetry is the first delay before a callback or an Ended
	// that failed is tried again (it doubles up to a minute); zero means
	// 1s.
	CallbackRetry time.Duration
	// MaxAuthChecks bounds the password checks (bcrypt) running at once
	// over every way a person signs in (the task API, the inbox, the
	// WS-HT client API); zero means DefaultMaxAuthChecks. A check that
	// finds every slot taken fails at once with ErrAuthBusy.
	MaxAuthChecks int
}

// DefaultMaxAuthChecks is Options.MaxAuthChecks' default.
const DefaultMaxAuthChecks = 4

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
	// authSlots holds a token per password check running.
	authSlots chan struct{}
	// gone are the services undeployed bundles published, with the
	// bundle's name (Undeploy).
	gone map[xml.Name]string
	// index is the published services of e.defs, and those gone
	// (reindexLocked).
	index atomic.Pointer[serviceIndex]
}

// New returns an engine; Recover schedules the stored tasks' deadlines
// and callbacks.
func New(o Options) *Engine {
	e := &Engine{opts: o, log: o.Logger, store: o.Store, clock: o.Clock, defs: map[string][]*Definitions{}, timers: map[string]Timer{},
		gone: map[xml.Name]string{}}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.store == nil {
		e.store = NewMemStore()
	}
	if e.clock == nil {
		e.clock = realClock{}
	}
	if e.opts.CallbackRetry <= 0 {
		e.opts.CallbackRetry = time.Second
	}
	if e.opts.MaxAuthChecks <= 0 {
		e.opts.MaxAuthChecks = DefaultMaxAuthChecks
	}
	e.authSlots = make(chan struct{}, e.opts.MaxAuthChecks)
	e.metrics = newMetrics(o.Registerer)
	return e
}

// Recover reads the stored tasks and schedules their pending deadlines,
// undelivered callbacks and ends no instance took yet (after a restart:
// those that fell due fire at once).
func (e *Engine) Recover(ctx context.Context) error {
	var tasks []*Task
	err := e.eachTask(func(t *Task) bool {
		tasks = append(tasks, t)
		return true
	})
	if err != nil {
		return fmt.Errorf("read tasks: %w", err)
	}
	for _, t := range tasks {
		e.schedule(t)
		if t.State.Final() && t.Callback != nil && !t.Callback.Delivered {
			e.deliverLater(t.ID, 0)
		}
		if t.EndPending {
			e.endLater(t.ID, 0)
		}
	}
	return nil
}

// eachTask calls f with each stored task until f returns
// false; a record that does not decode is logged and passed over.
func (e *Engine) eachTask(f func(*Task) bool) error {
	return e.store.Tasks(func(id string, rec []byte) bool {
		t, err := decodeTask(rec)
		if err != nil {
			e.log.Error("task record not read", slog.String("task", id), slog.Any("err", err))
			return true
		}
		return f(t)
	})
}

// Close stops the timers; a callback being sent is abandoned (Recover
// sends it again).
func (e *Engine) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	for k, t := range e.timers {
		t.Stop()
		delete(e.timers, k)
	}
}

// Authenticate checks a person's credentials against the directory, in
// one of Options.MaxAuthChecks slots (ErrAuthBusy when none is free).
func (e *Engine) Authenticate(user, password string) (Identity, error) {
	if e.opts.Directory == nil {
		return Identity{}, ErrAuth
	}
	select {
	case e.authSlots <- struct{}{}:
	default:
		e.metrics.authBusy.Inc()
		return Identity{}, ErrAuthBusy
	}
	defer func() { <-e.authSlots }()
	return e.opts.Directory.Authenticate(user, password)
}

// Deploy parses the .ht files and htconfig.xml of the bundle in dir and
// makes them the bundle's newest version. A bundle with no .ht file
// deploys nothing and is no error. A broken file is an error naming the
// file, element and line; the version deployed before stays.
func (e *Engine) Deploy(bundle string, version int, dir string) error {
	defs, err := LoadDefinitions(dir)
	if err != nil || defs == nil {
		return err
	}
	return e.add(bundle, version, defs)
}

// add makes defs version of bundle, its newest: the bundle's services
// publish its tasks from now on; tasks created on an older version keep
// theirs (definitionAt). A service port that another bundle's tasks
// publish is refused: a process's call would reach either.
func (e *Engine) add(bundle string, version int, defs *Definitions) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.conflictLocked(bundle, defs); err != nil {
		return err
	}
	defs.Bundle, defs.Version = bundle, version
	e.defs[bundle] = append(e.defs[bundle], defs)
	e.reindexLocked()
	return nil
}

// conflictLocked names the service ports defs would publish that the
// newest version of another bundle publishes; the caller holds e.mu.
func (e *Engine) conflictLocked(bundle string, defs *Definitions) error {
	idx := e.index.Load()
	if idx == nil {
		return nil
	}
	var errs []string
	for _, m := range []map[xml.Name]*TaskDef{defs.Tasks, defs.Notifications} {
		for _, t := range m {
			if t.Publish.Service.Local == "" {
				continue
			}
			for _, p := range idx.pubs[t.Publish.Service] {
				if p.defs.Bundle != bundle && p.def.Publish.Port == t.Publish.Port {
					errs = append(errs, fmt.Sprintf("%s: %s publishes service {%s}%s port %s, which %q publishes already (%s at %s): undeploy that one, or give one of them another service in %s",
						t.Pos, t.Name.Local, t.Publish.Service.Space, t.Publish.Service.Local, t.Publish.Port, p.defs.Bundle, p.def.Name.Local, p.def.Pos, configFile))
				}
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	slices.Sort(errs)
	return errors.New(strings.Join(errs, "\n"))
}

// LoadDefinitions reads the .ht files and htconfig.xml of the bundle in
// dir; nil, nil when it has no .ht file.
func LoadDefinitions(dir string) (*Definitions, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.ht"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, nil
	}
	slices.Sort(files)
	defs := &Definitions{}
	var errs []error
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := ParseHT(filepath.Base(f), b, defs); err != nil {
			errs = append(errs, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, configFile)); err == nil {
		cfg, err := ParseHTConfig(configFile, b)
		if err != nil {
			errs = append(errs, err)
		} else if err := defs.configure(cfg); err != nil {
			errs = append(errs, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return defs, nil
}

// configure binds the definitions to htconfig.xml's services, and
// resolves escalations' references to notifications.
func (d *Definitions) configure(cfg *HTConfig) error {
	var errs []error
	for n, en := range cfg.Entries {
		def := d.Tasks[n]
		if en.Notification {
			def = d.Notifications[n]
		}
		if def == nil {
			errs = append(errs, &xmldoc.CompileError{Pos: en.at, Element: kindName(en.Notification),
				Err: fmt.Errorf("%s %s is not defined in the .ht files beside it", kindName(en.Notification), n.Local)})
			continue
		}
		def.Publish, def.Callback = en.Publish, en.Callback
	}
	for _, t := range d.Tasks {
		for i := range t.Deadlines {
			for j := range t.Deadlines[i].Escalations {
				x := &t.Deadlines[i].Escalations[j]
				if x.Notify != nil && x.Notify.Interface.Operation == "" {
					if n := d.Notifications[x.Notify.Name]; n != nil {
						x.Notify = n
					} else {
						errs = append(errs, fmt.Errorf("%s: escalation %s refers to notification %s, which is not defined", t.Deadlines[i].Pos, x.Name, x.Notify.Name.Local))
					}
				}
			}
		}
	}
	return errors.Join(errs...)
}

func kindName(notification bool) string {
	if notification {
		return "notification"
	}
	return "task"
}

// Undeploy forgets the bundle's definitions (open tasks keep theirs). A
// call to a service they published fails from then on naming the bundle
// (until another deploy publishes it), rather than going to the
// service's address.
func (e *Engine) Undeploy(bundle string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, d := range e.defs[bundle] {
		for _, m := range []map[xml.Name]*TaskDef{d.Tasks, d.Notifications} {
			for _, t := range m {
				if t.Publish.Service.Local != "" {
					e.gone[t.Publish.Service] = bundle
				}
			}
		}
	}
	delete(e.defs, bundle)
	e.reindexLocked()
}

// Definition returns the newest deployed definition named n (a task or
// a notification).
func (e *Engine) Definition(n xml.Name) (*TaskDef, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, vs := range e.defs {
		d := vs[len(vs)-1]
		if t := d.Tasks[n]; t != nil {
			return t, true
		}
		if t := d.Notifications[n]; t != nil {
			return t, true
		}
	}
	return nil, false
}

// definitionAt returns the definition named n of bundle version v (a
// running task's own), falling back to the newest.
func (e *Engine) definitionAt(bundle string, v int, n xml.Name) (*TaskDef, bool) {
	e.mu.RLock()
	for _, d := range e.defs[bundle] {
		if d.Version == v {
			if t := d.Tasks[n]; t != nil {
				e.mu.RUnlock()
				return t, true
			}
		}
	}
	e.mu.RUnlock()
	return e.Definition(n)
}

// published returns the task or notification a service port publishes,
// with its bundle version.
func (e *Engine) published(service xml.Name, port string) (*TaskDef, *Definitions) {
	idx := e.index.Load()
	if idx == nil {
		return nil, nil
	}
	for _, p := range idx.pubs[service] {
		if p.def.Publish.Port == port || port == "" {
			return p.def, p.defs
		}
	}
	return nil, nil
}

// unpublished is the bundle whose undeploy left service published by no
// task, "" when none did.
func (e *Engine) unpublished(service xml.Name) string {
	if idx := e.index.Load(); idx != nil {
		return idx.gone[service]
	}
	return ""
}

// serviceIndex is what Engine.index holds.
type serviceIndex struct {
	// pubs are the deployed tasks and notifications by service.
	pubs map[xml.Name][]publication
	// gone are the services undeployed bundles published and no deployed
	// one does, with the bundle's name.
	gone map[xml.Name]string
}

// publication is a deployed task or notification of a bundle's newest
// version, filed by its service in Engine.index.
type publication struct {
	def  *TaskDef
	defs *Definitions
}

// reindexLocked rebuilds Engine.index from e.defs; the caller holds
// e.mu for writing. Every partner call of every process asks published
// whether its endpoint is a task's service: it reads the index without
// a lock and finds an ordinary partner by one map lookup.
func (e *Engine) reindexLocked() {
	idx := map[xml.Name][]publication{}
	for _, vs := range e.defs {
		d := vs[len(vs)-1]
		for _, m := range []map[xml.Name]*TaskDef{d.Tasks, d.Notifications} {
			for _, t := range m {
				idx[t.Publish.Service] = append(idx[t.Publish.Service], publication{t, d})
			}
		}
	}
	gone := map[xml.Name]string{}
	for svc, b := range e.gone {
		if _, ok := idx[svc]; !ok {
			gone[svc] = b
		}
	}
	e.index.Store(&serviceIndex{pubs: idx, gone: gone})
}

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

// Drop forgets one deployed version of the bundle's definitions (its
// processes were not deployed after all).
func (e *Engine) Drop(bundle string, version int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	vs := slices.DeleteFunc(e.defs[bundle], func(d *Definitions) bool { return d.Version == version })
	if len(vs) == 0 {
		delete(e.defs, bundle)
	} else {
		e.defs[bundle] = vs
	}
	e.reindexLocked()
}
