package process

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/beevik/etree"
	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/partnerallow"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/process/membudget"
	"github.com/orchd/orchd/internal/process/plan"
)

// engineHost is the engine as the host of its instances' runs: the
// same value as the Engine, with the methods the interpreter calls, so
// that they are not the Engine's API.
type engineHost Engine

func (e *Engine) host() *engineHost { return (*engineHost)(e) }

func (h *engineHost) Now() time.Time                           { return (*Engine)(h).now() }
func (h *engineHost) Logger() *slog.Logger                     { return h.log }
func (h *engineHost) NewMemID() string                         { return "m" + strconv.FormatUint(h.reg.seq.Add(1), 10) }
func (h *engineHost) MaxSteps() int                            { return h.steps }
func (h *engineHost) MemoryBounds() membudget.Bounds           { return h.opts.Memory }
func (h *engineHost) Stored() bool                             { return h.store != nil }
func (h *engineHost) Clustered() bool                          { return h.opts.Owners != nil }
func (h *engineHost) BaseURL() string                          { return h.opts.BaseURL }
func (h *engineHost) BaseContext() context.Context             { return h.baseCtx }
func (h *engineHost) Tracer() trace.Tracer                     { return h.opts.Tracer }
func (h *engineHost) Rest() *interp.RestClient                 { return h.restc }
func (h *engineHost) OpenMail(in *interp.Instance) bool        { return (*Engine)(h).openMail(in) }
func (h *engineHost) CloseMail(in *interp.Instance)            { (*Engine)(h).closeMail(in) }
func (h *engineHost) ListCalling(in *interp.Instance, on bool) { (*Engine)(h).listCalling(in, on) }
func (h *engineHost) ReplyTimeout(p *interp.Version, ex *exchange.Exchange) time.Duration {
	return (*Engine)(h).replyTimeout(p, ex)
}
func (h *engineHost) Sample(n uint64) bool { return (*Engine)(h).sample(n) }
func (h *engineHost) Ended(in *interp.Instance, f *exchange.Fault) {
	e := (*Engine)(h)
	e.ended.note(in.Version(), in.Correlations(), f, e.now())
}

// Sleep waits until the engine's clock reaches due, or ctx ends.
func (h *engineHost) Sleep(ctx context.Context, due int64) bool {
	e := (*Engine)(h)
	t, fired := e.timer(e.until(due))
	defer t.Stop()
	select {
	case <-fired:
		return true
	case <-ctx.Done():
		return false
	}
}

func (h *engineHost) Addressed(pl *plan.PartnerLink, addr string, params []*etree.Element, only *partnerallow.List) exchange.Partner {
	return (*Engine)(h).addressed(pl, addr, params, only)
}

func (h *engineHost) Commit(in *interp.Instance, cp *persist.Checkpoint, lock bool) error {
	e := (*Engine)(h)
	if lock {
		// From this commit on others can find the instance (a wait for
		// the stripe, as for the commit, holds no CPU slot); create lets
		// go of it after the run.
		e.stripes.lock(in.ID())
	}
	start := time.Now()
	err := e.store.Commit(cp)
	e.metrics.commitTime.Observe(time.Since(start).Seconds())
	if err != nil {
		return err
	}
	for _, m := range cp.Outbox {
		e.sendOutbox(m)
	}
	return nil
}

func (h *engineHost) Named(in *interp.Instance) {
	if in.ID() != "" {
		return
	}
	e := (*Engine)(h)
	e.reg.mu.Lock()
	e.nameLocked(in)
	e.reg.mu.Unlock()
}

func (h *engineHost) Answering(in *interp.Instance) {
	e := (*Engine)(h)
	e.preRegister(in)
	e.waitMemRoutes(in)
}

// addressed binds pl's partner role at an address assigned at run time,
// through Options.AssignedPartners (deploy-time overrides do not apply),
// under the process's orchd:partnerAllow rules only; its calls carry the
// EPR's reference parameters params.
func (e *Engine) addressed(pl *plan.PartnerLink, addr string, params []*etree.Element, only *partnerallow.List) exchange.Partner {
	ep := *pl.PartnerDesc
	ep.Address = addr
	ep.ReferenceParams = params
	// Credentials go only where deploy.xml (or --endpoints) sends calls.
	ep.BasicAuth, ep.Security = nil, nil
	if served := e.ownEndpoint(addr); served != nil {
		return e.addressedLocal(served, params)
	}
	if bind := e.opts.AssignedPartners; bind != nil {
		return bind(&ep, only)
	}
	if bind := e.opts.Partners; bind != nil {
		return bind(&ep)
	}
	return unbound{&ep}
}
