package process

import (
	"context"
	"log/slog"
	"time"

	"github.com/beevik/etree"
	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/partnerallow"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/plan"
)

// engineHost is the engine as the host of its instances' runs: the
// same value as the Engine, with the methods the interpreter calls, so
// that they are not the Engine's API.
type engineHost Engine

func (e *Engine) host() *engineHost { return (*engineHost)(e) }

func (h *engineHost) now() time.Time               { return (*Engine)(h).now() }
func (h *engineHost) logger() *slog.Logger         { return h.log }
func (h *engineHost) maxSteps() int                { return h.steps }
func (h *engineHost) stored() bool                 { return h.store != nil }
func (h *engineHost) clustered() bool              { return h.opts.Owners != nil }
func (h *engineHost) baseURL() string              { return h.opts.BaseURL }
func (h *engineHost) baseContext() context.Context { return h.baseCtx }
func (h *engineHost) events() *events.Dispatcher   { return h.opts.Events }
func (h *engineHost) tracer() trace.Tracer         { return h.opts.Tracer }
func (h *engineHost) rest() *restClient            { return h.restc }
func (h *engineHost) settleMail(in *instance)      { (*Engine)(h).settleMail(in) }
func (h *engineHost) openMail(in *instance) bool   { return (*Engine)(h).openMail(in) }
func (h *engineHost) closeMail(in *instance)       { (*Engine)(h).closeMail(in) }
func (h *engineHost) listCalling(in *instance, on bool) bool {
	return (*Engine)(h).listCalling(in, on)
}

func (h *engineHost) addressed(pl *plan.PartnerLink, addr string, params []*etree.Element, only *partnerallow.List) exchange.Partner {
	return (*Engine)(h).addressed(pl, addr, params, only)
}

func (h *engineHost) commit(in *instance, cp *persist.Checkpoint) error {
	e := (*Engine)(h)
	if in.lazyStripe && in.stripe == nil {
		// From this commit on others can find the instance (a wait for
		// the stripe, as for the commit, holds no CPU slot).
		in.stripe = e.stripes.lock(in.id)
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

func (h *engineHost) named(in *instance) {
	if in.id != "" {
		return
	}
	e := (*Engine)(h)
	e.reg.mu.Lock()
	e.nameLocked(in)
	e.reg.mu.Unlock()
}

func (h *engineHost) answering(in *instance) {
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
	if bind := e.opts.AssignedPartners; bind != nil {
		return bind(&ep, only)
	}
	if bind := e.opts.Partners; bind != nil {
		return bind(&ep)
	}
	return unbound{&ep}
}
