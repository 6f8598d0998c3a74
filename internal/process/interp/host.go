package interp

import (
	"context"
	"log/slog"
	"time"

	"github.com/beevik/etree"
	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/partnerallow"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/membudget"
	"github.com/orchd/orchd/internal/process/plan"
)

// Host is the engine as an instance's run sees it: the clock and the
// settings, the store's commit, the registry that makes a running
// instance findable by the messages its threads wait for, the bindings
// of partner addresses assigned at run time, and the tracer (events go
// to the version's Version.Sink). The engine implements it
// (engineHost); the interpreter holds nothing else of the engine.
type Host interface {
	// Now is the engine's clock.
	Now() time.Time
	// Logger is the engine's log.
	Logger() *slog.Logger
	// NewMemID is a new id for an in-memory instance ("m" and a
	// number), which the log and the management API name it by.
	NewMemID() string
	// MaxSteps is the engine's step budget of a run (serve --max-steps).
	MaxSteps() int
	// MemoryBounds are the engine's memory bounds (serve
	// --max-variable-bytes, --max-run-bytes, --max-items,
	// --max-string-bytes).
	MemoryBounds() membudget.Bounds
	// Stored reports that the engine has a store, so the instances of
	// persistent processes are checkpointed.
	Stored() bool
	// Clustered reports that other orchd processes share the store
	// (instance locks and fences).
	Clustered() bool
	// BaseURL is where the engine's endpoints are reached, for myRole
	// endpoint references; empty means the WSDL's soap:address.
	BaseURL() string
	// BaseContext is the context of work that belongs to instances
	// rather than to a client (after a reply).
	BaseContext() context.Context
	// Tracer and Rest are the engine's tracer (nil: none) and the client
	// of REST activities.
	Tracer() trace.Tracer
	Rest() *RestClient
	// Addressed binds the partner role of pl to an address a process
	// assigned at run time, under the partner address policy narrowed to
	// only.
	Addressed(pl *plan.PartnerLink, addr string, params []*etree.Element, only *partnerallow.List) exchange.Partner
	// Commit writes one checkpoint of in, taking the instance's lock
	// first when lock is set (the first commit of a run the host had not
	// locked: Delivery.LockAtCommit), and sends the outbox messages it
	// holds once it committed.
	Commit(in *Instance, cp *persist.Checkpoint, lock bool) error
	// Named gives an in-memory instance its id now, if it has none yet.
	Named(in *Instance)
	// Answering makes a running in-memory instance findable by the
	// messages its correlation values route, before its reply leaves.
	Answering(in *Instance)
	// OpenMail lets the messages in's waiting threads wait for reach its
	// run while it waits for partner answers (the engine's mail.go);
	// CloseMail ends that and hands the run the first of them. OpenMail
	// reports whether any thread waits for a message.
	OpenMail(in *Instance) bool
	CloseMail(in *Instance)
	// ListCalling lists (on) or unlists an in-memory instance whose run
	// waits for partner answers, for the management listings.
	ListCalling(in *Instance, on bool)
	// ReplyTimeout is how long the client of request ex to version p
	// waits for a reply that a later run makes.
	ReplyTimeout(p *Version, ex *exchange.Exchange) time.Duration
	// Sample reports whether the n-th instance a version starts is timed
	// per activity (the outline's and the diagram's statistics).
	Sample(n uint64) bool
	// Sleep waits until the engine's clock reaches due (unix
	// nanoseconds; Never never comes), or ctx ends; it reports whether
	// the time came (a request waiting inline for its instance's timer).
	Sleep(ctx context.Context, due int64) bool
	// Ended records that in ended with the uncaught fault f, so that a
	// message for it that comes later is answered with f.
	Ended(in *Instance, f *exchange.Fault)
}
