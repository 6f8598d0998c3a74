package health

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/instancestore"
	"github.com/orchd/orchd/internal/process"
	"github.com/orchd/orchd/internal/process/interp"
)

// Options say what readiness depends on. Nil fields are not checked.
type Options struct {
	// Engine's deployed versions say whether a store is needed (one is
	// persistent).
	Engine *process.Engine
	// Store is the instance store, opened lazily.
	Store *instancestore.Lazy
	// Node is this server's cluster membership (--cluster); nil on a
	// single node.
	Node *cluster.Node
	// Logger receives the drain's start and end; nil discards them.
	Logger *slog.Logger
}

// Probes answer /healthz and /readyz. They are safe for concurrent use.
type Probes struct {
	opts     Options
	started  atomic.Bool
	draining atomic.Bool
}

// The checks' names, as /readyz names them.
const (
	CheckDeploy   = "deploy"
	CheckStore    = "store"
	CheckCluster  = "cluster"
	CheckShutdown = "shutdown"
)

// New returns probes over opts; /readyz says not ready until Started.
func New(opts Options) *Probes {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Probes{opts: opts}
}

// Started records that the bundles of the deploy directory are deployed
// (and persistent instances recovered): from now on /readyz may say ready.
func (p *Probes) Started() { p.started.Store(true) }

// Result is one check's outcome in /readyz's answer.
type Result struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// Report is /readyz's answer (and /healthz's, without checks).
type Report struct {
	// Status is "ready", "not ready", "draining" or "alive" (/healthz).
	Status string `json:"status"`
	// Failing names the checks that failed, in Checks' order.
	Failing []string `json:"failing,omitempty"`
	Checks  []Result `json:"checks,omitempty"`
}

// errStarting, errDraining and errNoStore are the failures of the checks
// that have no error of their own.
var (
	errStarting = errors.New("the deploy directory is not deployed yet")
	errDraining = errors.New("shutting down: in-flight exchanges are draining")
	errNoStore  = errors.New("a persistent process is deployed and the instance store is not open")
	errSession  = errors.New("the cluster session is lost (its lease expired); rejoining")
)

// Ready runs the checks.
func (p *Probes) Ready() Report {
	var r Report
	add := func(name string, err error) {
		res := Result{Name: name, OK: err == nil}
		if err != nil {
			res.Error = err.Error()
			r.Failing = append(r.Failing, name)
		}
		r.Checks = append(r.Checks, res)
	}
	var err error
	if !p.started.Load() {
		err = errStarting
	}
	add(CheckDeploy, err)
	if p.opts.Store != nil {
		add(CheckStore, p.storeCheck())
	}
	if p.opts.Node != nil {
		add(CheckCluster, p.clusterCheck())
	}
	err = nil
	if p.draining.Load() {
		err = errDraining
	}
	add(CheckShutdown, err)
	switch {
	case len(r.Failing) == 0:
		r.Status = "ready"
	case slices.Contains(r.Failing, CheckShutdown):
		r.Status = "draining"
	default:
		r.Status = "not ready"
	}
	return r
}

// storeCheck fails while a persistent version is deployed and the store
// is not open (it failed to open, or is closed at shutdown).
func (p *Probes) storeCheck() error {
	if p.opts.Store.Opened() != nil || p.opts.Engine == nil {
		return nil
	}
	if slices.ContainsFunc(p.opts.Engine.Processes(), func(v *interp.Version) bool { return !v.InMemory }) {
		return errNoStore
	}
	return nil
}

// clusterCheck fails while the node holds no session.
func (p *Probes) clusterCheck() error {
	select {
	case <-p.opts.Node.Joined():
	default:
		return errSession
	}
	select {
	case <-p.opts.Node.Done():
		return errSession
	default:
	}
	return nil
}

// ServeHTTP answers GET /healthz (200, always, while the server serves)
// and GET /readyz (200 when every check passes, else 503), in JSON.
func (p *Probes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rep, status := Report{Status: "alive"}, http.StatusOK
	if r.URL.Path == "/readyz" {
		rep = p.Ready()
		if len(rep.Failing) > 0 {
			status = http.StatusServiceUnavailable
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(rep) // a client gone is no error of ours
}

// Drain turns /readyz to 503 (the shutdown check fails) and then waits
// delay, or until a signal arrives on interrupt (a second SIGTERM ends
// the wait), so that load balancers stop sending new exchanges while
// the listener still serves them; the caller then shuts the listener
// down and waits for the exchanges in flight.
func (p *Probes) Drain(delay time.Duration, interrupt <-chan os.Signal) {
	p.draining.Store(true)
	p.opts.Logger.Info("draining", slog.Duration("delay", delay))
	if delay <= 0 {
		return
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
	case s := <-interrupt:
		p.opts.Logger.Info("drain cut short", slog.String("signal", s.String()))
	}
}
