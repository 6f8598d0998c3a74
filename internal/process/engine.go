package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orchd/orchd/internal/exchange"
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
	// Partners binds a partner endpoint that no process of this engine
	// provides (typically the SOAP client over HTTP); nil leaves such
	// partner links unbound.
	Partners func(ep *exchange.Endpoint) exchange.Partner
}

// Engine runs deployed processes. It implements exchange.Dispatcher: every
// exchange runs straight through in the caller's goroutine.
type Engine struct {
	log     *slog.Logger
	metrics *metrics
	opts    Options

	mu         sync.RWMutex
	processes  []*Process
	byEndpoint map[*exchange.Endpoint]*Process
}

// NewEngine returns an engine with no process deployed.
func NewEngine(opts Options) *Engine {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{log: log, metrics: newMetrics(opts.Registerer), opts: opts, byEndpoint: map[*exchange.Endpoint]*Process{}}
}

// Deploy adds compiled processes and (re)binds every partner link: to a
// process of this engine when one provides the partner's service port or
// address path (in process, no HTTP), otherwise through Options.Partners.
// A process whose endpoint path another deployed process already serves is
// refused with an error and not deployed.
func (e *Engine) Deploy(procs ...*Process) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	paths := map[string]*Process{}
	for _, p := range e.processes {
		for _, ep := range p.Endpoints {
			paths[ep.Path] = p
		}
	}
next:
	for _, p := range procs {
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
		e.metrics.deployed(p)
	}
	for _, p := range e.processes {
		for _, pl := range p.plinks {
			if pl.partnerEP == nil {
				continue
			}
			if local := e.localEndpoint(pl.partnerEP); local != nil {
				pl.partner = &localPartner{e: e, ep: local}
				continue
			}
			if e.opts.Partners != nil {
				pl.partner = e.opts.Partners(pl.partnerEP)
			} else {
				pl.partner = unbound{pl.partnerEP}
			}
		}
	}
	return errors.Join(errs...)
}

// localEndpoint finds a deployed endpoint for the partner port: same
// service and port, or the same address path.
func (e *Engine) localEndpoint(ep *exchange.Endpoint) *exchange.Endpoint {
	path := endpointPath(ep.Address, ep.Service.Local)
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
func (e *Engine) Processes() []*Process {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return append([]*Process(nil), e.processes...)
}

// Dispatch implements exchange.Dispatcher: it creates an instance of the
// process serving ex.Endpoint and runs it to completion in the calling
// goroutine.
func (e *Engine) Dispatch(ctx context.Context, ex *exchange.Exchange) error {
	e.mu.RLock()
	p := e.byEndpoint[ex.Endpoint]
	e.mu.RUnlock()
	if p == nil {
		return exchange.ClientError("%w: %s", ErrNoProcess, ex.Endpoint.Path)
	}
	if p.start == nil || p.start.op == nil || p.start.op.Name != ex.Operation.Name || p.start.pl.provided != ex.Endpoint {
		return exchange.ClientError("operation %s of process %s does not start an instance, and no instance is waiting for it", ex.Operation.Name, p.Name.Local)
	}
	label := p.Name.Local
	e.metrics.started.WithLabelValues(label).Inc()
	start := time.Now()
	in := newInstance(e, p, ctx, ex)
	err := in.run()
	e.metrics.instanceTimes.WithLabelValues(label).Observe(time.Since(start).Seconds())
	outcome := "completed"
	switch {
	case in.exited:
		outcome = "exited"
		if err == nil && !in.replied && !ex.Operation.OneWay() {
			err = fmt.Errorf("process %s exited without replying to %s", p.Name.Local, ex.Operation.Name)
		}
	case err == nil:
	case errors.Is(err, errHandled):
		outcome = "faulted"
		err = nil
		if !in.replied && !ex.Operation.OneWay() {
			err = fmt.Errorf("process %s faulted (%s) and its fault handler did not reply", p.Name.Local, in.inHandler)
		}
	default:
		var u *errUncaught
		if errors.As(err, &u) {
			outcome = "faulted"
			if !in.replied && e.replyDeclaredFault(ex, u.f) {
				err = nil
			} else {
				err = fmt.Errorf("process %s: %w", p.Name.Local, err)
			}
		} else {
			outcome = "failed"
			err = fmt.Errorf("process %s: %w", p.Name.Local, err)
		}
	}
	e.metrics.ended.WithLabelValues(label, outcome).Inc()
	if err != nil && in.replied {
		// The requester already has its answer; the failure after it is
		// the instance's, and is only logged.
		e.log.Warn("instance failed after replying", slog.String(logProcess, label), slog.Any("err", err))
		return nil
	}
	return err
}

// replyDeclaredFault answers an uncaught fault that the operation declares
// in its WSDL with that fault; it reports whether it did.
func (e *Engine) replyDeclaredFault(ex *exchange.Exchange, f *faultValue) bool {
	if ex.Respond == nil || ex.Operation.OneWay() {
		return false
	}
	md, ok := ex.Operation.Faults[f.name.Local]
	if !ok || f.name != ex.Operation.FaultName(f.name.Local) {
		return false
	}
	var msg *exchange.Message
	if f.data != nil && f.data.Name == md.Name {
		msg = f.data
	}
	ex.Respond(nil, &exchange.Fault{Name: f.name, Message: msg, Reason: f.reason})
	return true
}

// Log attribute keys.
const (
	logProcess = "process"
)

// localPartner calls a process of the same engine in process: no HTTP and
// no XML serialization; messages are deep-copied so the two instances do
// not share trees.
type localPartner struct {
	e  *Engine
	ep *exchange.Endpoint
}

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
	var out *exchange.Message
	var fault *exchange.Fault
	replied := false
	now := time.Now()
	ex := &exchange.Exchange{
		Endpoint: l.ep, Operation: op, Input: copyMessage(c.Input), Received: now, Dispatched: now,
		Respond: func(m *exchange.Message, f *exchange.Fault) {
			if replied {
				return
			}
			replied = true
			out = copyMessage(m)
			if f != nil {
				fault = &exchange.Fault{Name: f.Name, Message: copyMessage(f.Message), Reason: f.Reason}
			}
		},
	}
	err := l.e.Dispatch(ctx, ex)
	switch {
	case fault != nil:
		return nil, fault
	case replied:
		return out, nil
	case err != nil:
		return nil, fmt.Errorf("in-process partner %s: %w", l.ep.Path, err)
	case !op.OneWay():
		return nil, fmt.Errorf("in-process partner %s: %s completed without replying", l.ep.Path, op.Name)
	}
	return nil, nil
}

// unbound is a partner link with no binding.
type unbound struct{ ep *exchange.Endpoint }

func (u unbound) Invoke(context.Context, *exchange.Call) (*exchange.Message, error) {
	return nil, fmt.Errorf("partner %s port %s is not bound (no address and no in-process provider)", u.ep.Service, u.ep.Port)
}
