package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Listener receives events in batches. Deliver is called from one
// goroutine at a time, never from an exchange's; it must return within
// the dispatcher's budget (ctx ends then) or the listener is blacklisted.
// The batch is the dispatcher's: Deliver must not keep it.
type Listener interface {
	// Name identifies the listener in logs and metric labels.
	Name() string
	Deliver(ctx context.Context, batch []Event) error
}

// Options configure a Dispatcher. The zero value works.
type Options struct {
	// Logger receives blacklistings and delivery errors; nil discards.
	Logger *slog.Logger
	// Registerer receives the metrics; nil leaves them unregistered.
	Registerer prometheus.Registerer
	// Queue is each listener's queue length; zero means 4096.
	Queue int
	// Budget is the longest one delivery may take before its listener is
	// blacklisted; zero means 2s.
	Budget time.Duration
	// MaxBatch is the most events one delivery carries; zero means 256.
	MaxBatch int
}

// Dispatcher hands events to listeners off the caller's path. Emit never
// blocks; each listener has a bounded queue and a goroutine of its own.
type Dispatcher struct {
	log     *slog.Logger
	opts    Options
	sinks   []*sink
	emitted prometheus.Counter
	done    chan struct{}
	wg      sync.WaitGroup
	close   sync.Once
}

type sink struct {
	l         Listener
	q         chan Event
	cut       atomic.Bool
	cause     atomic.Value // error, once cut
	full      prometheus.Counter
	cutDrops  prometheus.Counter
	delivered prometheus.Counter
	failed    prometheus.Counter
	black     prometheus.Counter
}

// NewDispatcher starts a goroutine per listener. Close stops them.
func NewDispatcher(opts Options, listeners ...Listener) (*Dispatcher, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Queue <= 0 {
		opts.Queue = 4096
	}
	if opts.Budget <= 0 {
		opts.Budget = 2 * time.Second
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 256
	}
	emitted := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "orchd_events_emitted_total",
		Help: "Instance events the runtime emitted to the listeners.",
	})
	dropped := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "orchd_events_dropped_total",
		Help: "Events not delivered to a listener, by reason: queue_full (the listener's queue was full), blacklisted (the listener was cut off).",
	}, []string{"listener", "reason"})
	delivered := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "orchd_events_delivered_total",
		Help: "Events a listener accepted.",
	}, []string{"listener"})
	failed := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "orchd_events_delivery_errors_total",
		Help: "Deliveries a listener failed (its events are lost).",
	}, []string{"listener"})
	black := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "orchd_events_listeners_blacklisted_total",
		Help: "Listeners cut off for exceeding their delivery budget.",
	}, []string{"listener"})
	if opts.Registerer != nil {
		for _, c := range []prometheus.Collector{emitted, dropped, delivered, failed, black} {
			if err := opts.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("events: register metrics: %w", err)
			}
		}
	}
	d := &Dispatcher{log: opts.Logger, opts: opts, emitted: emitted, done: make(chan struct{})}
	seen := map[string]bool{}
	for _, l := range listeners {
		n := l.Name()
		if seen[n] {
			return nil, fmt.Errorf("events: two listeners named %q", n)
		}
		seen[n] = true
		d.sinks = append(d.sinks, &sink{l: l, q: make(chan Event, opts.Queue),
			full: dropped.WithLabelValues(n, "queue_full"), cutDrops: dropped.WithLabelValues(n, "blacklisted"),
			delivered: delivered.WithLabelValues(n), failed: failed.WithLabelValues(n), black: black.WithLabelValues(n)})
	}
	for _, s := range d.sinks {
		d.wg.Add(1)
		go d.run(s)
	}
	return d, nil
}

// Emit offers ev to every listener that is not blacklisted, without
// blocking: a listener whose queue is full misses it (counted).
func (d *Dispatcher) Emit(ev Event) {
	d.emitted.Inc()
	for _, s := range d.sinks {
		if s.cut.Load() {
			s.cutDrops.Inc()
			continue
		}
		select {
		case s.q <- ev:
		default:
			s.full.Inc()
		}
	}
}

// Blacklisted returns the cause a listener was cut off for, or nil.
func (d *Dispatcher) Blacklisted(name string) error {
	for _, s := range d.sinks {
		if s.l.Name() == name && s.cut.Load() {
			err, _ := s.cause.Load().(error)
			return err
		}
	}
	return nil
}

// Close delivers what is queued (each delivery under its budget) and
// stops the listeners' goroutines, or gives up when ctx ends. Events
// emitted after Close are dropped.
func (d *Dispatcher) Close(ctx context.Context) error {
	d.close.Do(func() { close(d.done) })
	stopped := make(chan struct{})
	go func() { d.wg.Wait(); close(stopped) }()
	select {
	case <-stopped:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("events: listeners still delivering: %w", ctx.Err())
	}
}

// run is a listener's goroutine: it takes queued events in batches and
// delivers them until Close, or until the listener is blacklisted.
func (d *Dispatcher) run(s *sink) {
	defer d.wg.Done()
	batch := make([]Event, 0, d.opts.MaxBatch)
	for {
		select {
		case ev := <-s.q:
			batch = d.fill(s, append(batch[:0], ev))
			if !d.deliver(s, batch) {
				return
			}
		case <-d.done:
			for {
				batch = d.fill(s, batch[:0])
				if len(batch) == 0 || !d.deliver(s, batch) {
					return
				}
			}
		}
	}
}

// fill adds queued events to batch, up to MaxBatch, without waiting.
func (d *Dispatcher) fill(s *sink, batch []Event) []Event {
	for len(batch) < d.opts.MaxBatch {
		select {
		case ev := <-s.q:
			batch = append(batch, ev)
		default:
			return batch
		}
	}
	return batch
}

// deliver hands batch to s's listener under the budget and reports
// whether the listener is still in service. A delivery that overruns is
// abandoned (its goroutine ends when the listener returns) and the
// listener blacklisted.
func (d *Dispatcher) deliver(s *sink, batch []Event) bool {
	budget := d.opts.Budget
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	res := make(chan error, 1)
	start := time.Now()
	go func() { res <- s.l.Deliver(ctx, batch) }()
	t := time.NewTimer(budget)
	defer t.Stop()
	var err error
	select {
	case err = <-res:
	case <-t.C:
		err = context.DeadlineExceeded
	}
	switch {
	case err == nil:
		s.delivered.Add(float64(len(batch)))
		return true
	case errors.Is(err, context.DeadlineExceeded) || time.Since(start) > budget:
		d.blacklist(s, fmt.Errorf("a delivery of %d events took longer than its budget of %s (%w)", len(batch), budget, err))
		return false
	}
	s.failed.Inc()
	d.log.Warn("event listener failed a delivery", slog.String("listener", s.l.Name()), slog.Int("events", len(batch)), slog.Any("err", err))
	return true
}

// blacklist cuts s off: logged once, counted, its queue no longer fed.
func (d *Dispatcher) blacklist(s *sink, cause error) {
	s.cause.Store(cause)
	if s.cut.Swap(true) {
		return
	}
	s.black.Inc()
	s.cutDrops.Add(float64(len(s.q)))
	d.log.Error("event listener blacklisted: it gets no more events", slog.String("listener", s.l.Name()), slog.Any("cause", cause))
}
