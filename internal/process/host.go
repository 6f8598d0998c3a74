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

// host is the engine as an instance's run sees it: the clock and the
// settings, the store's commit, the registry that makes a running
// instance findable by the messages its threads wait for, the bindings
// of partner addresses assigned at run time, and the sinks of events and
// traces. The engine implements it (engineHost); the interpreter holds
// nothing else of the engine.
type host interface {
	// now is the engine's clock.
	now() time.Time
	logger() *slog.Logger
	// maxSteps is the engine's step budget of a run (serve --max-steps).
	maxSteps() int
	// stored reports that the engine has a store, so the instances of
	// persistent processes are checkpointed.
	stored() bool
	// clustered reports that other orchd processes share the store
	// (instance locks and fences).
	clustered() bool
	// baseURL is where the engine's endpoints are reached, for myRole
	// endpoint references; empty means the WSDL's soap:address.
	baseURL() string
	// baseContext is the context of work that belongs to instances
	// rather than to a client (after a reply).
	baseContext() context.Context
	events() *events.Dispatcher
	tracer() trace.Tracer
	rest() *restClient
	// addressed binds the partner role of pl to an address a process
	// assigned at run time, under the partner address policy narrowed to
	// only.
	addressed(pl *plan.PartnerLink, addr string, params []*etree.Element, only *partnerallow.List) exchange.Partner
	// commit writes one checkpoint of in (its stripe taken first when
	// its run deferred that) and sends the outbox messages it holds once
	// it committed.
	commit(in *instance, cp *persist.Checkpoint) error
	// named gives an in-memory instance its id now, if it has none yet.
	named(in *instance)
	// answering makes a running in-memory instance findable by the
	// messages its correlation values route, before its reply leaves.
	answering(in *instance)
	// openMail lets the messages in's waiting threads wait for reach its
	// run while it waits for partner answers (mail.go); closeMail ends
	// that and hands the run the first of them. openMail reports whether
	// any thread waits for a message.
	openMail(in *instance) bool
	closeMail(in *instance)
	// listCalling lists (on) or unlists an in-memory instance whose run
	// waits for partner answers, for the management listings. It reports
	// true.
	listCalling(in *instance, on bool) bool
	// settleMail tells the senders of the messages handed to the run
	// what became of them.
	settleMail(in *instance)
}
