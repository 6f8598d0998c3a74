package interp_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process"
)

// The operator and event steps of the semantic cases (README.md there):
//
//	instance STATE [TEXT]     the case's instance is (or becomes) in STATE,
//	                          with a branch whose "activity waiting" has TEXT,
//	                          or TEXT in its fault (why it ended or is suspended)
//	operator ACTION [TEXT]    an operator's action on the case's instance
//	                          (TEXT: the action fails with an error holding it)
//	event KIND [TEXT]         a later event of KIND (TEXT in its rendering)
//	next-event KIND [TEXT]    the very next event is of KIND (TEXT ...)
//
// The case's instance is the one instance of the process that is live
// (running, waiting or suspended), else the newest listed; in-memory
// instances are listed only while they live.

// semOps is the state of a run's operator and event steps.
type semOps struct {
	// sink collects the events when the case has an event step.
	sink *semEventSink
	// next is the index of the first event no event step matched yet.
	next int
}

// opsArity is semArity for the steps of this file.
func opsArity(verb string) (n int, optional, ok bool) {
	switch verb {
	case "instance", "operator", "event", "next-event":
		return 2, true, true
	}
	return 0, false, false
}

// withEvents gives the engine an events dispatcher collecting into the
// run's sink when the case checks events.
func (r *semRun) withEvents(opts *process.Options) error {
	want := false
	for _, st := range r.c.script {
		want = want || st.verb == "event" || st.verb == "next-event"
	}
	if !want {
		return nil
	}
	r.ops.sink = &semEventSink{changed: make(chan struct{})}
	d, err := events.NewDispatcher(events.Options{Budget: 10 * time.Second}, r.ops.sink)
	if err != nil {
		return err
	}
	r.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = d.Close(ctx)
	})
	opts.Events = d
	return nil
}

// opsStep runs a step of this file; it reports false for a verb that is
// not one of them (the runner's other step files may take it).
func (r *semRun) opsStep(st semStep) bool {
	r.t.Helper()
	switch st.verb {
	case "instance":
		r.instanceStep(st)
	case "operator":
		r.operatorStep(st)
	case "event", "next-event":
		r.eventStep(st)
	default:
		return false
	}
	return true
}

// live reports whether state is that of an instance that has not ended.
func live(state string) bool {
	return state == mgmt.StateRunning || state == mgmt.StateWaiting || state == mgmt.StateSuspended
}

// theInstance finds the case's instance (see above).
func (r *semRun) theInstance() (*mgmt.Instance, error) {
	page, err := r.engine.QueryInstances(context.Background(), mgmt.Query{Process: r.version.Name.String(), Limit: 1000})
	if err != nil {
		return nil, err
	}
	var lv []mgmt.Instance
	for _, in := range page.Instances {
		if live(in.State) {
			lv = append(lv, in)
		}
	}
	switch {
	case len(lv) == 1:
		return &lv[0], nil
	case len(lv) > 1:
		return nil, fmt.Errorf("%d live instances, a step acts on one", len(lv))
	case len(page.Instances) > 0:
		return &page.Instances[0], nil
	}
	return nil, fmt.Errorf("no instance listed (an in-memory one is listed while it lives)")
}

// instanceStep waits up to 10s for the case's instance to be in the
// state, with a branch whose "activity waiting" has the text.
func (r *semRun) instanceStep(st semStep) {
	r.t.Helper()
	state, text := st.args[0], st.args[1]
	deadline := time.Now().Add(10 * time.Second)
	last := ""
	for {
		in, err := r.theInstance()
		if err != nil {
			last = err.Error()
		} else if d, err := r.engine.InstanceDetail(context.Background(), in.ID); err != nil {
			last = err.Error()
		} else {
			var brs []string
			for _, b := range d.Branches {
				brs = append(brs, strings.TrimSpace(b.Activity+" "+b.Waiting))
			}
			ok := d.State == state
			if ok && text != "" {
				ok = strings.Contains(d.Fault, text)
				for _, b := range brs {
					ok = ok || strings.Contains(b, text)
				}
			}
			if ok {
				return
			}
			last = fmt.Sprintf("instance %s is %s (%s), branches %q", d.ID, d.State, d.Fault, brs)
		}
		if time.Now().After(deadline) {
			r.failf(st.line, "instance %s %s: not in 10s: %s", state, text, last)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// operatorStep applies an operator's action to the case's instance.
func (r *semRun) operatorStep(st semStep) {
	r.t.Helper()
	a, want := mgmt.Action(st.args[0]), st.args[1]
	if !a.Valid() {
		r.failf(st.line, "operator %s: want one of %v", a, mgmt.Actions)
	}
	in, err := r.theInstance()
	if err != nil {
		r.failf(st.line, "operator %s: %v", a, err)
	}
	err = r.engine.Act(context.Background(), in.ID, a)
	switch {
	case want == "" && err != nil:
		r.failf(st.line, "operator %s: %v", a, err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		r.failf(st.line, "operator %s: got error %v, want one containing %q", a, err, want)
	}
}

// eventStep waits up to 10s for an event after the last one matched (the
// very next one for next-event) of the kind, with the text.
func (r *semRun) eventStep(st semStep) {
	r.t.Helper()
	var kind events.Kind
	if err := kind.UnmarshalText([]byte(st.args[0])); err != nil {
		r.failf(st.line, "%s: %v", st.verb, err)
	}
	text := st.args[1]
	s := r.ops.sink
	deadline := time.After(10 * time.Second)
	for {
		evs, changed := s.snapshot()
		for i := r.ops.next; i < len(evs); i++ {
			if evs[i].Kind == kind && strings.Contains(renderEvent(evs[i]), text) {
				r.ops.next = i + 1
				return
			}
			if st.verb == "next-event" {
				r.failf(st.line, "next-event %s %s: the next event is %s", kind, text, renderEvent(evs[i]))
			}
		}
		select {
		case <-changed:
		case <-deadline:
			var got []string
			for _, ev := range evs[r.ops.next:] {
				got = append(got, renderEvent(ev))
			}
			r.failf(st.line, "%s %s %s: not among the events since the last matched:\n%s", st.verb, kind, text, strings.Join(got, "\n"))
		}
	}
}

// renderEvent writes an event as its kind and its non-empty fields,
// "field=value" separated by spaces, in a fixed order.
func renderEvent(ev events.Event) string {
	b := []string{ev.Kind.String()}
	for _, f := range []struct{ k, v string }{{"activity", ev.Activity}, {"name", ev.Name}, {"variable", ev.Variable},
		{"correlationSet", ev.CorrelationSet}, {"value", ev.Value}, {"partner", ev.Partner},
		{"operation", ev.Operation}, {"fault", ev.Fault}, {"detail", ev.Detail}} {
		if f.v != "" {
			b = append(b, f.k+"="+f.v)
		}
	}
	return strings.Join(b, " ")
}

// semEventSink is an events.Listener keeping every event.
type semEventSink struct {
	mu  sync.Mutex
	evs []events.Event
	// changed is closed and replaced when events are added.
	changed chan struct{}
}

func (s *semEventSink) Name() string { return "sem" }

func (s *semEventSink) Deliver(_ context.Context, batch []events.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evs = append(s.evs, batch...)
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

func (s *semEventSink) snapshot() ([]events.Event, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.evs[:len(s.evs):len(s.evs)], s.changed
}
