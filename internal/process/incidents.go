package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/corrval"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/xmlparse"
)

// Incidents, the engine's part (the management backend lists the
// suspended instances next to these):
//
//   - an in-memory exchange that ends with an uncaught fault leaves an
//     incident in a ring of its version (failRingSize, the newest kept):
//     the fault, where it was thrown, when, and the variables then (each
//     cut at mgmt.MaxIncidentValue). The instance gets its id there, so
//     its log line ("instance ended with an error"), its events and the
//     incident name the same instance. A persistent process's instance
//     is stored as faulted instead: it is listed with the instances.
//   - SetVariable changes a variable of a suspended persistent instance
//     in the store, in one checkpoint, under the instance's lock as the
//     other actions take it, before an operator retries it.

// failRingSize is how many failed exchanges a version keeps.
const failRingSize = 32

// failure is one failed in-memory exchange.
type failure struct {
	inc     mgmt.Incident
	started time.Time
	corr    map[string]string
}

// failRings are the failures of each version, newest last.
type failRings struct {
	mu sync.Mutex
	by map[*interp.Version][]failure
}

// noteFailure records that in-memory instance in ended with the
// uncaught fault f, thrown at position at.
func (e *Engine) noteFailure(in *interp.Instance, f *exchange.Fault, at string) {
	p := in.Version()
	if !p.InMemory && e.store != nil {
		return
	}
	id := in.Name(e.host().NewMemID)
	s := in.Snapshot()
	inc := mgmt.Incident{Kind: mgmt.IncidentFailed, ID: id, Process: p.Name.String(), Version: p.Number, InMemory: true,
		Fault: f.Name.String(), Reason: f.Reason, Position: at, Time: e.now(), Actions: []mgmt.Action{},
		Variables: map[string]string{}}
	for _, a := range s.Activities {
		if a.Kind != "" && a.Kind != "process" && a.Position == at {
			inc.Activity = activityText(a.ActRef)
			break
		}
	}
	for _, v := range s.Variables {
		inc.Variables[v.Name] = cut(v.Value)
	}
	if f.Message != nil {
		inc.FaultData = cut(messageText(f.Message))
	}
	fl := failure{inc: inc, started: s.Started, corr: s.Correlations}
	e.fails.mu.Lock()
	defer e.fails.mu.Unlock()
	if e.fails.by == nil {
		e.fails.by = map[*interp.Version][]failure{}
	}
	ring := append(e.fails.by[p], fl)
	if len(ring) > failRingSize {
		ring = slices.Delete(ring, 0, len(ring)-failRingSize)
	}
	e.fails.by[p] = ring
}

// cut bounds a value an incident keeps.
func cut(s string) string {
	if len(s) <= mgmt.MaxIncidentValue {
		return s
	}
	return s[:mgmt.MaxIncidentValue] + "...(cut)"
}

// messageText writes a fault message's parts, by name.
func messageText(m *exchange.Message) string {
	names := make([]string, 0, len(m.Parts))
	for n := range m.Parts {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	ws := xmlparse.WriteSettings()
	for _, n := range names {
		if el := m.Parts[n]; el != nil {
			el.WriteTo(&b, &ws)
		}
	}
	return b.String()
}

// FailedExchanges lists the failed in-memory exchanges q selects (its
// instance filters but state, its fault and activity), newest first.
func (e *Engine) FailedExchanges(q mgmt.IncidentQuery) ([]mgmt.Incident, error) {
	q.State = ""
	pq, _, err := e.prepare(q.Query)
	if err != nil {
		return nil, err
	}
	e.fails.mu.Lock()
	var all []failure
	for _, ring := range e.fails.by {
		all = append(all, ring...)
	}
	e.fails.mu.Unlock()
	var out []mgmt.Incident
	for _, f := range all {
		if pq.names != nil && !slices.Contains(pq.names, f.inc.Process) {
			continue
		}
		if !pq.matchCommon("", f.inc.Version, f.started, f.inc.Time) || !corrMatch(q.Query, f.corr) || !q.Matches(&f.inc) {
			continue
		}
		inc := f.inc
		inc.Variables = make(map[string]string, len(f.inc.Variables))
		for k, v := range f.inc.Variables {
			inc.Variables[k] = v
		}
		out = append(out, inc)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	return out, nil
}

// corrMatch tests q's correlation filter against an instance's values.
func corrMatch(q mgmt.Query, corr map[string]string) bool {
	if q.Correlation == "" {
		return true
	}
	for set, v := range corr {
		if (q.CorrelationSet == "" || q.CorrelationSet == set) && strings.ReplaceAll(v, "\x1f", ",") == q.Correlation {
			return true
		}
	}
	return false
}

// SetVariable changes variable name of the suspended persistent
// instance id to value (mgmt.IncidentBackend): one checkpoint, so that
// it holds across a crash before the instance is retried; the change is
// an event (variableChanged, Detail "set by an operator") and a log line.
func (e *Engine) SetVariable(ctx context.Context, id, name, value string) error {
	if _, ok := memSeq(id); ok {
		return fmt.Errorf("instance %s: set variable %s: an in-memory instance cannot be suspended on a failure (only persistent ones are): %w", id, name, mgmt.ErrConflict)
	}
	if err := e.setStoredVar(ctx, id, name, value); err != nil {
		return fmt.Errorf("instance %s: set variable %s: %w", id, name, err)
	}
	return nil
}

func (e *Engine) setStoredVar(ctx context.Context, id, name, value string) error {
	fence, release, err := e.holdStored(ctx, id)
	if err != nil {
		return err
	}
	defer release()
	rec, vars, err := e.store.Instance(id)
	if errors.Is(err, persist.ErrNotFound) {
		return mgmt.ErrNotFound
	}
	if err != nil {
		return err
	}
	if rec.State != persist.Suspended {
		return fmt.Errorf("the instance is %s, not suspended (suspend it first): %w", rec.State, mgmt.ErrConflict)
	}
	p := e.versions().of(rec.Process, rec.Frames)
	if p == nil {
		return fmt.Errorf("process %s of this instance is not deployed: %w", rec.Process, mgmt.ErrUnavailable)
	}
	names := corrval.VarNames(p.Plan)
	slot := 0
	for s, n := range names {
		if n == name {
			slot = s
		}
	}
	if slot == 0 {
		known := make([]string, 0, len(names))
		for _, n := range names {
			known = append(known, n)
		}
		sort.Strings(known)
		return fmt.Errorf("no variable %q (variables: %s): %w", name, strings.Join(known, ", "), mgmt.ErrNotFound)
	}
	data, err := slotWith(p, slot, vars[slot], value)
	if err != nil {
		return fmt.Errorf("%w: %w", err, mgmt.ErrInvalid)
	}
	// The new value must decode as the instance's next run will read it.
	trial := make(map[int][]byte, len(vars))
	for k, v := range vars {
		trial[k] = v
	}
	trial[slot] = data
	if _, err := e.decode(ctx, p, rec, trial); err != nil {
		return fmt.Errorf("the instance does not load with this value: %v: %w", err, mgmt.ErrInvalid)
	}
	cp := &persist.Checkpoint{Instance: *rec, Vars: map[int][]byte{slot: data}, Fence: fence}
	cp.Instance.Updated = e.now()
	if err := e.store.Commit(cp); err != nil {
		return err
	}
	if p.Sink != nil {
		p.Sink.Emit(events.Event{Kind: events.VariableChanged, Time: time.Now(), Process: p.Name.String(), Version: p.Number,
			Instance: id, Variable: name, Detail: "set by an operator"})
	}
	e.log.Info("variable set by an operator", slog.String(logProcess, p.Name.Local), slog.String(logInstance, id),
		slog.String("variable", name))
	return nil
}

// holdStored takes persistent instance id as an action does: its stripe
// lock (waiting up to actWait for a run) and, in a cluster, its lock in
// the shared store, whose fence it returns; release gives both back.
func (e *Engine) holdStored(ctx context.Context, id string) (fence any, release func(), err error) {
	if e.store == nil {
		return nil, nil, fmt.Errorf("no instance store: %w", mgmt.ErrNotFound)
	}
	m := e.stripes.of(id)
	if err := lockWithin(ctx, &m.Mutex); err != nil {
		m.unref()
		return nil, nil, err
	}
	rel, fence, err := e.own(ctx, id)
	if err != nil {
		m.Unlock()
		return nil, nil, err
	}
	return fence, func() { rel(); m.Unlock() }, nil
}

// slotWith is the stored slot of variable slot of p holding value (the
// variable's content as an instance's detail shows it): for a message
// variable, part elements named after its parts (a part not given keeps
// its stored value); for others, the content itself (XML, or text).
func slotWith(p *interp.Version, slot int, stored []byte, value string) ([]byte, error) {
	v := p.Plan.Vars[slot-1]
	cur := v.NewSlot()
	if len(stored) > 0 {
		d := xmlparse.NewDocument()
		if err := d.ReadFromBytes(stored); err == nil && d.Root() != nil {
			cur = d.Root()
		}
	}
	given := etree.NewElement("x")
	if t := strings.TrimSpace(value); strings.HasPrefix(t, "<") {
		d := xmlparse.NewDocument()
		if err := d.ReadFromString("<x>" + value + "</x>"); err != nil {
			return nil, fmt.Errorf("the value is not well-formed XML: %v", err)
		}
		given = d.Root()
	} else {
		given.SetText(value)
	}
	if v.Msg != nil {
		for _, c := range given.ChildElements() {
			part := cur.SelectElement(c.Tag)
			if part == nil || c.Space != "" {
				parts := make([]string, len(v.Msg.Parts))
				for i, mp := range v.Msg.Parts {
					parts[i] = mp.Name
				}
				return nil, fmt.Errorf("%s is a message variable: give its parts as elements named %s, not <%s>", v.Name, strings.Join(parts, ", "), c.FullTag())
			}
			part.Child = c.Child
			part.Attr = c.Attr
		}
		if len(given.ChildElements()) == 0 {
			return nil, fmt.Errorf("%s is a message variable: give its parts as elements named after them", v.Name)
		}
	} else {
		cur.Child = given.Child
	}
	cur.Tag, cur.Space = v.SlotName(), ""
	var b bytes.Buffer
	ws := xmlparse.WriteSettings()
	cur.WriteTo(&b, &ws)
	return b.Bytes(), nil
}

// SuspendedFault is the fault name an incident gives an instance
// suspended on a failed activity: ODE's activityFailure.
func SuspendedFault() string { return interp.ActivityFailure.String() }
