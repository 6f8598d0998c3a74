package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/beevik/etree"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/partnerallow"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/process/membudget"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/restcall"
)

// Options configure an Engine. The zero value works: no logging, no
// metrics registration, and partner links that are not served in process
// fail when invoked.
type Options struct {
	// Logger receives the engine's logs; nil discards them.
	Logger *slog.Logger
	// Registerer receives the engine's metrics; nil leaves them
	// unregistered.
	Registerer prometheus.Registerer
	// Store keeps the instances of persistent processes; nil means
	// persistent processes cannot be deployed.
	Store Store
	// Owners serialises the runs of a persistent instance across the
	// orchd processes that share its store (internal/cluster); nil means
	// this process is the store's only user.
	Owners InstanceOwners
	// MemRoutes publishes the route keys of waiting in-memory instances
	// to the other orchd nodes of a cluster (cluster.Routes); nil means
	// none (one node).
	MemRoutes MemRoutes
	// VersionsChanged is called (under the engine's lock: it must not
	// block) whenever the set of versions (VersionIDs) may have changed:
	// deploy, redeploy, undeploy, retire, drop.
	VersionsChanged func()
	// OutboxRetry is the first delay before an outbox message that failed
	// is sent again (it doubles up to a minute), and before a timer whose
	// run could not be stored fires again; zero means 1s.
	OutboxRetry time.Duration
	// Partners binds a partner endpoint that no process of this engine
	// provides (typically the SOAP client over HTTP); nil leaves such
	// partner links unbound.
	Partners func(ep *exchange.Endpoint) exchange.Partner
	// AssignedPartners binds a partner role endpoint whose address a
	// process assigned at run time (an endpoint reference copied to a
	// partner link): ep is the partner link's deploy-time description
	// with that Address; only are the process's deploy.xml
	// orchd:partnerAllow rules (nil: none), which narrow the partner
	// address policy for the call. It must not apply deploy-time address
	// overrides; nil means Partners.
	AssignedPartners func(ep *exchange.Endpoint, only *partnerallow.List) exchange.Partner
	// BaseURL is where this engine's endpoints are reached
	// (scheme://host:port), for the endpoint references of the services
	// processes provide (<from partnerLink endpointReference="myRole">);
	// empty means the soap:address their WSDL names.
	BaseURL string
	// Self are the base URLs (scheme://host:port) that reach this
	// engine's front door: its listen address and the loopback names for
	// it. An endpoint reference assigned at run time whose address is at
	// one of them, with the path of a deployed process's endpoint, is
	// called in process (it never leaves the server, so the partner
	// address policy does not apply). Empty means none.
	Self []string
	// MaxSteps is the step budget of one run of an instance: the
	// activity steps it may take before it waits (for a message, a timer
	// or a partner's answer) or ends. A run over it is stopped: an
	// in-memory instance fails (its client gets a Server fault naming
	// orchd:stepBudgetExceeded), a persistent one is suspended with that
	// reason. deploy.xml's orchd:maxSteps overrides it per process. Zero
	// means DefaultMaxSteps, negative no budget.
	MaxSteps int
	// Memory are the memory bounds of a run and of an expression's
	// evaluation (internal/process/membudget): a variable's size and the
	// bytes a run assigns into variables, over which an in-memory
	// instance fails and a persistent one is suspended (the fault
	// orchd:memoryBudgetExceeded), and the items and string bytes an
	// XPath 2.0, XQuery or XSLT evaluation builds (an XPath dynamic
	// error). deploy.xml's orchd:maxVariableBytes and orchd:maxRunBytes
	// override the first two. Zero means the default, negative none.
	Memory membudget.Bounds
	// ReplyTimeout bounds how long a request waits for a reply that a
	// later message or timer drives the instance to; zero means 30s.
	ReplyTimeout time.Duration
	// MessageHold bounds how long a message for a correlated operation
	// that no instance waits for yet is held for one that comes to wait
	// (a callback overtaking its caller's instance); zero means 5s,
	// negative turns holding off. A one-way message to an in-memory
	// process is acknowledged while held; others wait for the outcome.
	MessageHold time.Duration
	// MessageHoldMax bounds how many messages are held at once, over all
	// processes; a message that would be held past it is refused at once
	// (KindUnavailable: a SOAP Server fault, HTTP 503), neither held nor
	// acknowledged. Zero means DefaultMessageHoldMax, negative no bound.
	MessageHoldMax int
	// HTTPClient sends the requests of REST extension activities (ODE's
	// bpel4restlight); nil means a client of its own with Go's default
	// transport.
	HTTPClient *http.Client
	// AssignedHTTP returns the client of REST requests to URIs a
	// process takes from a variable, under the partner address policy
	// narrowed to the process's orchd:partnerAllow rules (only); nil
	// means HTTPClient.
	AssignedHTTP func(only *partnerallow.List) *http.Client
	// HTTPTimeout bounds each such request, on top of the instance's
	// context; zero means 30s.
	HTTPTimeout time.Duration
	// Events receives instance events (instevents.go) of the kinds each
	// process's deploy.xml enables; nil emits none, at no cost.
	Events *events.Dispatcher
	// SampleEvery: after the first SampleFirst instances of a version,
	// one in SampleEvery is timed per activity (in every run it has),
	// for the outline and diagram of the management API (sampling.go);
	// zero means DefaultSampleEvery, 1 times every instance, negative
	// none. SampleFirst is how many are timed first: zero means
	// SampleFirst, negative none.
	SampleEvery, SampleFirst int
	// Tracer, when set, traces runs, partner calls and commits
	// (tracing.go); nil traces nothing, at no cost.
	Tracer trace.Tracer
	// Clock is the time of instance timers and deadlines (clock.go); nil
	// means the system clock.
	Clock Clock
	// Retention keeps ended instances this long where their deploy.xml's
	// orchd:retention says nothing (retention.go): persistent ones in
	// the store (zero: until deleted), in-memory ones' summaries (zero:
	// not at all; kept.go). RetentionEvery is how often RunRetention
	// sweeps (zero: DefaultRetentionEvery).
	Retention, RetentionEvery time.Duration
	// KeptMax bounds the ended in-memory instances' summaries kept per
	// version, the newest (zero: DefaultKeptMax).
	KeptMax int
	// InstanceEnded, when set, is called (in the run's goroutine: it
	// must not block) when an instance that handed out a session
	// identifier (ODE's implicit correlation, which a call to a human
	// task carries) ends: completed, faulted, exited or terminated. The
	// task engine exits the tasks whose callback would go to it.
	InstanceEnded func(process, instance, session string)
	// ExtensionWaitsEnded, when set, is called (in the run's goroutine:
	// it must not block) when an instance ends while waiting at waiting
	// extension activities (plan.ExtensionWaiter, BPEL4People's people
	// activity), with the keys their Start returned (the tasks' ids):
	// the extension ends what it started.
	ExtensionWaitsEnded func(process string, keys []string)
}

// Engine runs deployed processes. It implements exchange.Dispatcher: every
// exchange runs straight through in the caller's goroutine.
type Engine struct {
	log     *slog.Logger
	metrics *metrics
	opts    Options

	// sampled are the timed persistent instances between runs
	// (sampling.go).
	sampled sampledSet

	mu         sync.RWMutex
	processes  []*interp.Version
	byEndpoint map[*exchange.Endpoint]*interp.Version
	// served is an immutable copy of byEndpoint for Dispatch, replaced
	// by Deploy, so an exchange takes no lock to find its process.
	served atomic.Pointer[map[*exchange.Endpoint]*interp.Version]
	// retired are the versions kept, serving nothing, for the instances
	// that started on them (versions.go); older is their immutable index
	// by process name, nil when there is none.
	retired []*interp.Version
	older   atomic.Pointer[map[exchange.QName][]*interp.Version]

	store Store
	restc *restcall.Client
	// steps is Options.MaxSteps resolved.
	steps int
	reg   registry
	// ended answers requests for instances that just ended with an
	// uncaught fault (ended.go).
	ended   endedFaults
	fails   failRings // failed in-memory exchanges (incidents.go)
	kept    keptEnded // ended in-memory instances' summaries (kept.go)
	stripes stripes
	// timers are the pending timers (run.go); sending the outbox
	// messages this engine is sending (adopt.go).
	timers  timerSet
	sending outboxSending
	broken  brokenSet
	// baseCtx is the context of work that belongs to instances rather
	// than to a client (after a reply, timers); Close cancels it.
	baseCtx context.Context
	stop    context.CancelFunc
	// self is Options.Self as origin keys (selfcall.go).
	self map[string]bool
	// retain is the retention sweep's (retention.go).
	retain retention
}

// NewEngine returns an engine with no process deployed.
func NewEngine(opts Options) *Engine {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, stop := context.WithCancel(context.Background())
	maxSteps := opts.MaxSteps
	switch {
	case maxSteps == 0:
		maxSteps = DefaultMaxSteps
	case maxSteps < 0:
		maxSteps = math.MaxInt
	}
	return &Engine{log: log, metrics: newMetrics(opts.Registerer), opts: opts, byEndpoint: map[*exchange.Endpoint]*interp.Version{}, steps: maxSteps,
		store: opts.Store, restc: restcall.New(opts.HTTPClient, opts.AssignedHTTP, opts.HTTPTimeout, opts.Tracer), baseCtx: ctx, stop: stop, self: selfHosts(opts.Self),
		reg: registry{live: map[string]*interp.Instance{}, calling: map[string]*interp.Instance{}, routes: map[string]*interp.Instance{},
			keys: map[*interp.Instance][]string{}, mail: map[*interp.Instance][]string{}, open: map[string][]*interp.OpenRequest{}}}
}

// Close cancels the work instances do on their own (after their reply,
// on timers): partner calls in flight fail and the instances end or are
// suspended as their failure policy says. Call it at shutdown, after the
// front door stopped taking requests.
func (e *Engine) Close() { e.stop() }

func (e *Engine) messageHold() time.Duration {
	if e.opts.MessageHold != 0 {
		return e.opts.MessageHold
	}
	return 5 * time.Second
}

// DefaultMessageHoldMax is the bound on held messages when
// Options.MessageHoldMax is zero. A held message costs its parsed request
// (at most --max-body) and a timer, and a sender that waits for one holds
// its connection, so the bound is on messages.
const DefaultMessageHoldMax = 10000

func (e *Engine) messageHoldMax() int {
	switch n := e.opts.MessageHoldMax; {
	case n == 0:
		return DefaultMessageHoldMax
	case n < 0:
		return math.MaxInt
	default:
		return n
	}
}

func (e *Engine) replyTimeout(p *interp.Version, ex *exchange.Exchange) time.Duration {
	if d, ok := p.ReplyTimeouts[plan.ReplyOp{Endpoint: ex.Endpoint, Op: ex.Operation.Name}]; ok {
		return d
	}
	if e.opts.ReplyTimeout > 0 {
		return e.opts.ReplyTimeout
	}
	return 30 * time.Second
}

// Deploy adds compiled processes and (re)binds every partner link: to a
// process of this engine when one provides the partner's service port or
// address path (in process, no HTTP), otherwise through Options.Partners.
// A process whose endpoint path another deployed process already serves is
// refused with an error and not deployed.
func (e *Engine) Deploy(procs ...*interp.Version) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	paths := map[string]*interp.Version{}
	for _, p := range e.processes {
		for _, ep := range p.Endpoints {
			paths[ep.Path] = p
		}
	}
next:
	for _, p := range procs {
		if !p.InMemory && e.store == nil {
			errs = append(errs, fmt.Errorf("process %s is persistent (deploy.xml <in-memory> absent or false) but orchd has no data store", p))
			continue
		}
		for _, ep := range p.Endpoints {
			if q, dup := paths[ep.Path]; dup {
				errs = append(errs, fmt.Errorf("process %s: endpoint path %s is already served by %s", p, ep.Path, q))
				continue next
			}
		}
		for _, ep := range p.Endpoints {
			paths[ep.Path] = p
			e.byEndpoint[ep] = p
		}
		e.processes = append(e.processes, p)
		e.deployed(p)
		p.DeployedNow()
		for _, w := range p.Warnings {
			e.log.Warn("deployed with a warning", slog.String(logProcess, p.Name.Local), slog.String("warning", w))
		}
	}
	for _, p := range e.processes {
		e.bindLocked(p)
	}
	e.publishLocked()
	return errors.Join(errs...)
}

// deployed gives version p what it takes from this engine at deploy:
// its metrics and the sink of its instances' events.
func (e *Engine) deployed(p *interp.Version) {
	e.metrics.deployed(p)
	p.Sink = e.opts.Events
}

// bindLocked binds p's partner links: to a process of this engine that
// provides the partner's port, otherwise through Options.Partners. The
// caller holds e.mu.
func (e *Engine) bindLocked(p *interp.Version) {
	for _, pl := range p.Plist {
		if pl.PartnerEP == nil {
			continue
		}
		switch local := e.localEndpoint(pl.PartnerEP); {
		case local != nil:
			p.Partners[pl.Idx] = &localPartner{e: e, ep: local}
		case e.opts.Partners != nil:
			p.Partners[pl.Idx] = e.opts.Partners(pl.PartnerEP)
		default:
			p.Partners[pl.Idx] = unbound{pl.PartnerEP}
		}
	}
}

// publishLocked stores the snapshot of byEndpoint Dispatch reads. The
// caller holds e.mu.
func (e *Engine) publishLocked() {
	defer e.versionsChanged()
	snap := make(map[*exchange.Endpoint]*interp.Version, len(e.byEndpoint))
	for ep, p := range e.byEndpoint {
		snap[ep] = p
	}
	e.served.Store(&snap)
}

// localEndpoint finds a deployed endpoint for the partner port: same
// service and port, or the same address path.
func (e *Engine) localEndpoint(ep *exchange.Endpoint) *exchange.Endpoint {
	path := plan.EndpointPath(ep.Address, ep.Service.Local)
	for served := range e.byEndpoint {
		if served.Service == ep.Service && served.Port == ep.Port {
			return served
		}
	}
	for served := range e.byEndpoint {
		if ep.Address != "" && served.Path == path {
			return served
		}
	}
	return nil
}

// Processes returns the deployed processes.
func (e *Engine) Processes() []*interp.Version {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return append([]*interp.Version(nil), e.processes...)
}

// Log attribute keys.
const (
	logProcess  = "process"
	logInstance = "instance"
)

// localPartner calls a process of the same engine in process: no HTTP and
// no XML serialization; messages are deep-copied so the two instances do
// not share trees. Like a call over HTTP, it returns when the partner
// replies (or, one-way, when it has the message), not when the partner's
// run ends: the partner may go on to call the caller back, whose instance
// is still inside this call.
type localPartner struct {
	e  *Engine
	ep *exchange.Endpoint
	// headers are header blocks every call's exchange carries: the
	// reference parameters of an endpoint reference assigned at run
	// time (selfcall.go).
	headers []*etree.Element
}

// InProcess implements exchange.InProcess: a call's header blocks (ODE's
// session, the reference parameters) reach the callee's exchange.
func (l *localPartner) InProcess() bool { return true }

func (l *localPartner) Invoke(ctx context.Context, c *exchange.Call) (*exchange.Message, error) {
	var op *exchange.Operation
	for _, o := range l.ep.Operations {
		if o.Name == c.Operation.Name {
			op = o
			break
		}
	}
	if op == nil {
		return nil, fmt.Errorf("in-process partner %s has no operation %s", l.ep.Path, c.Operation.Name)
	}
	// The provider may have been redeployed since the binding was made:
	// call the endpoint now served at its path.
	if cur := l.e.servedAt(l.ep); cur != l.ep {
		op = endpointOp(cur, op.Name)
		if op == nil {
			return nil, fmt.Errorf("in-process partner %s has no operation %s", l.ep.Path, c.Operation.Name)
		}
		l = &localPartner{e: l.e, ep: cur, headers: l.headers}
	}
	type answer struct {
		out   *exchange.Message
		fault *exchange.Fault
	}
	replied := make(chan answer, 1)
	now := time.Now()
	ex := &exchange.Exchange{
		Endpoint: l.ep, Operation: op, Input: interp.CopyMessage(c.Input), Headers: copyElements(append(append([]*etree.Element(nil), l.headers...), c.Headers...)), Received: now, Dispatched: now,
		Respond: func(m *exchange.Message, f *exchange.Fault) {
			a := answer{out: interp.CopyMessage(m)}
			if f != nil {
				a.fault = &exchange.Fault{Name: f.Name, Message: interp.CopyMessage(f.Message), Reason: f.Reason}
			}
			select {
			case replied <- a:
			default: // answered already
			}
		},
	}
	if op.OneWay() {
		// The partner's run goes on without the caller, on the engine's
		// context (as a one-way message over HTTP is answered 202 at once).
		go func() {
			if err := l.e.Dispatch(l.e.baseCtx, ex); err != nil {
				l.e.log.Warn("in-process one-way call failed", slog.String("endpoint", l.ep.Path), slog.String("operation", op.Name), slog.Any("err", err))
			}
		}()
		return nil, nil
	}
	ended := make(chan error, 1)
	go func() { ended <- l.e.Dispatch(ctx, ex) }()
	var err error
	answered := func(a answer) (*exchange.Message, error) {
		switch {
		case a.fault == nil:
			return a.out, nil
		case a.fault.Name.Space == op.PortType.Space && op.Faults[a.fault.Name.Local] != nil:
			return nil, a.fault
		}
		// A fault the operation does not declare (a standard fault of
		// the partner's instance, say) is a failed call, as over SOAP,
		// where it is an undeclared Server fault: never a fault thrown
		// by name in the caller's instance.
		return nil, fmt.Errorf("in-process partner %s: %s answered an undeclared fault: %s: %s", l.ep.Path, op.Name, a.fault.Name.Local, a.fault.Reason)
	}
	select {
	case a := <-replied:
		return answered(a)
	case err = <-ended:
	}
	select {
	case a := <-replied: // answered as the run ended
		return answered(a)
	default:
	}
	if err != nil {
		// %v, not %w: the partner's own fault (a fault value of its
		// instance) must reach the caller as the failed call it would be
		// over SOAP (an undeclared Server fault), never as a fault
		// thrown in the caller's instance.
		return nil, fmt.Errorf("in-process partner %s: %v", l.ep.Path, err)
	}
	return nil, fmt.Errorf("in-process partner %s: %s completed without replying", l.ep.Path, op.Name)
}

// unbound is a partner link with no binding.
type unbound struct{ ep *exchange.Endpoint }

func (u unbound) Invoke(context.Context, *exchange.Call) (*exchange.Message, error) {
	return nil, fmt.Errorf("partner %s port %s is not bound (no address and no in-process provider)", u.ep.Service, u.ep.Port)
}
