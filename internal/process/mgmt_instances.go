package process

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/corrval"
	"github.com/orchd/orchd/internal/process/interp"
)

// Instance control for the management API (mgmt.Backend's instance
// methods; the server adapter adds timelines).
//
// Listing reads the in-memory registry first (waiting and suspended
// in-memory instances, newest first: their IDs, "m<seq>", sort above the
// store's), then the store newest first, one bounded page at a time
// (persist.Store.ScanInstances): a cursor "m<seq>" continues in memory,
// "~" starts the store from its newest, any other is a stored ID.
//
// Actions take the instance the way a message does: a persistent one by
// its stripe lock, an in-memory one by its mutex and the registry; they
// wait up to actWait for a run in progress to end, then answer
// ErrConflict. A suspended persistent instance keeps its routes (a
// message for it is refused with a Server error naming the suspension)
// and its timer (the timer finds it suspended and waits for Resume, whose
// run fires it if it came due). An instance suspended on a failed invoke
// (the failure policy's last resort) keeps its threads where they were;
// the failed frame is marked kFailed, and Retry, Fault and Cancel mark it
// for the next step of that activity (recoveryStep).

// opSuspendReason is the stored fault of an instance an operator suspended.
const opSuspendReason = interp.OpSuspendReason

// Paging bounds.
const (
	defaultPageSize = 50
	maxPageSize     = 1000
	// maxPageScan caps the records (stored or in memory) one page reads.
	maxPageScan = 10_000
	// actWait is how long an action waits for a run of its instance.
	actWait = 2 * time.Second
)

// listCalling lists (on) or unlists an in-memory instance whose run waits
// for partner answers: between the two its run is blocked, so listings
// read it under e.reg.mu.
func (e *Engine) listCalling(in *interp.Instance, on bool) {
	e.reg.mu.Lock()
	if on {
		e.nameLocked(in)
		e.reg.calling[in.ID()] = in
	} else {
		delete(e.reg.calling, in.ID())
	}
	e.reg.mu.Unlock()
}

// suspendedError is the answer to a message for a suspended instance.
func suspendedError(in *interp.Instance) error {
	why := in.Suspension()
	if why == "" {
		why = opSuspendReason
	}
	return fmt.Errorf("instance %s of process %s is suspended (%s): it takes no message until an operator resumes it", in.ID(), in.Version().Name.Local, why)
}

// versionIndex maps what stored records carry to deployed versions.
type versionIndex struct {
	byFP   map[string]*interp.Version // fingerprint -> version
	byName map[string]*interp.Version // {ns}local -> active (else newest retired) version
	locals map[string][]string        // local name -> {ns}local names
}

func (e *Engine) versions() *versionIndex {
	vi := &versionIndex{byFP: map[string]*interp.Version{}, byName: map[string]*interp.Version{}, locals: map[string][]string{}}
	for _, p := range append(e.Retired(), e.Processes()...) {
		vi.byFP[p.Fingerprint] = p
		n := p.Name.String()
		if _, seen := vi.byName[n]; !seen {
			vi.locals[p.Name.Local] = append(vi.locals[p.Name.Local], n)
		}
		vi.byName[n] = p
	}
	return vi
}

// of returns the version a stored record belongs to, or nil.
func (vi *versionIndex) of(process string, frames []byte) *interp.Version {
	if fp := fingerprintOf(frames); fp != nil {
		if p := vi.byFP[string(fp)]; p != nil && p.Name.String() == process {
			return p
		}
	}
	return vi.byName[process]
}

// fingerprintOf is splitFingerprint's fingerprint, in place.
func fingerprintOf(frames []byte) []byte {
	if len(frames) == 0 || frames[0] != interp.FramesFingerprinted {
		return nil
	}
	n, k := binary.Uvarint(frames[1:])
	if k <= 0 || n > uint64(len(frames)-1-k) {
		return nil
	}
	return frames[1+k : 1+k+int(n)]
}

// query is a mgmt.Query made ready to test records against.
type query struct {
	mgmt.Query
	names []string // {ns}local names Process stands for; nil: any
	vi    *versionIndex
	corr  []byte // Correlation with ',' as the stored 0x1f
}

func (e *Engine) prepare(q mgmt.Query) (*query, int, error) {
	limit := q.Limit
	switch {
	case limit < 0:
		return nil, 0, fmt.Errorf("limit %d: %w", limit, mgmt.ErrInvalid)
	case limit == 0:
		limit = defaultPageSize
	case limit > maxPageSize:
		limit = maxPageSize
	}
	if q.State != "" && q.State != mgmt.StateBroken {
		if _, err := persist.ParseState(q.State); err != nil {
			return nil, 0, fmt.Errorf("state %q: %w", q.State, mgmt.ErrInvalid)
		}
	}
	pq := &query{Query: q, vi: e.versions()}
	if q.Process != "" {
		if strings.HasPrefix(q.Process, "{") {
			pq.names = []string{q.Process}
		} else if pq.names = pq.vi.locals[q.Process]; pq.names == nil {
			pq.names = []string{"{}" + q.Process} // matches nothing deployed
		}
	}
	if q.Correlation != "" {
		pq.corr = []byte(strings.ReplaceAll(q.Correlation, ",", "\x1f"))
	}
	return pq, limit, nil
}

// inRange reports whether t lies in [lo, hi] (zero bounds are open).
func inRange(t, lo, hi time.Time) bool {
	return (lo.IsZero() || !t.Before(lo)) && (hi.IsZero() || !t.After(hi))
}

// matchCommon tests what stored and in-memory instances share.
// version is the instance's version number (0: unknown).
func (q *query) matchCommon(state string, version int, started, active time.Time) bool {
	if q.State != "" && q.State != state {
		return false
	}
	if q.Version != 0 && version != q.Version {
		return false
	}
	return inRange(started, q.StartedAfter, q.StartedBefore) && inRange(active, q.ActiveAfter, q.ActiveBefore)
}

// QueryInstances lists instances for the management API (mgmt.Backend):
// in-memory ones while they wait, then stored ones, newest first, one
// page of at most q.Limit, reading at most maxPageScan records. Scope
// mgmt.ScopeLocal lists the in-memory ones only.
func (e *Engine) QueryInstances(ctx context.Context, q mgmt.Query) (*mgmt.Page, error) {
	pq, limit, err := e.prepare(q)
	if err != nil {
		return nil, err
	}
	page := &mgmt.Page{Instances: []mgmt.Instance{}}
	after := q.After
	if q.Scope == mgmt.ScopeLocal && after != "" && after[0] != 'm' {
		return page, nil // the in-memory part is all a local listing holds
	}
	if after == "" || after[0] == 'm' {
		next := e.memPage(pq, after, limit, page)
		if next != "" || e.store == nil || q.Scope == mgmt.ScopeLocal {
			page.Next = next
			return page, nil
		}
		if len(page.Instances) >= limit || page.Scanned >= maxPageScan {
			page.Next = "~" // the store, from its newest
			return page, nil
		}
		after = "~"
	}
	if e.store == nil {
		return page, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sc := persist.Scan{Before: after, Limit: limit - len(page.Instances), MaxScanned: maxPageScan - page.Scanned}
	if !q.StartedAfter.IsZero() {
		sc.From = persist.IDPrefix(q.StartedAfter)
	}
	if !q.StartedBefore.IsZero() {
		if b := persist.IDPrefix(q.StartedBefore.Add(time.Millisecond)); b < sc.Before {
			sc.Before = b
		}
	}
	broken := e.brokenSnapshot()
	res, err := e.store.ScanInstances(sc, func(v *persist.InstanceView) bool {
		if v.Err != nil {
			if (q.State != "" && q.State != mgmt.StateBroken) || q.Process != "" || q.Version != 0 || q.Correlation != "" {
				return false
			}
			page.Instances = append(page.Instances, mgmt.Instance{ID: v.ID(), State: mgmt.StateBroken, Fault: v.Err.Error()})
			return true
		}
		if pq.names != nil && !slices.ContainsFunc(pq.names, v.ProcessIs) {
			return false
		}
		if broken != nil {
			// Its record decodes, its control state or a variable did not.
			if cause, ok := broken[v.ID()]; ok {
				if (q.State != "" && q.State != mgmt.StateBroken) || q.Version != 0 || q.Correlation != "" ||
					!inRange(v.Created, q.StartedAfter, q.StartedBefore) || !inRange(v.Updated, q.ActiveAfter, q.ActiveBefore) {
					return false
				}
				page.Instances = append(page.Instances, mgmt.Instance{ID: v.ID(), Process: v.Process(), State: mgmt.StateBroken,
					Started: v.Created, LastActive: v.Updated, Fault: cause})
				return true
			}
		}
		var p *interp.Version
		if q.Version != 0 {
			if p = pq.vi.byFP[string(fingerprintOf(v.Frames()))]; p == nil {
				return false
			}
		}
		number := 0
		if p != nil {
			number = p.Number
		}
		if !pq.matchCommon(v.State.String(), number, v.Created, v.Updated) || !pq.matchCorr(v) {
			return false
		}
		process := v.Process()
		if p == nil {
			p = pq.vi.of(process, v.Frames())
		}
		info := mgmt.Instance{ID: v.ID(), Process: process, State: v.State.String(), Started: v.Created, LastActive: v.Updated, Fault: v.Fault()}
		if p != nil {
			info.Version = p.Number
		}
		v.Correlations(func(name, key []byte) bool {
			if info.Correlations == nil {
				info.Correlations = map[string]string{}
			}
			info.Correlations[string(name)] = string(bytes.ReplaceAll(key, []byte{0x1f}, []byte{','}))
			return true
		})
		page.Instances = append(page.Instances, info)
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("instance listing: %w", err)
	}
	page.Scanned += res.Scanned
	page.Next = res.Next
	return page, nil
}

// matchCorr tests the correlation filter against a stored record.
func (q *query) matchCorr(v *persist.InstanceView) bool {
	if q.corr == nil {
		return true
	}
	hit := false
	v.Correlations(func(name, key []byte) bool {
		if (q.CorrelationSet == "" || string(name) == q.CorrelationSet) && bytes.Equal(key, q.corr) {
			hit = true
		}
		return !hit
	})
	return hit
}

// memSeq is the sequence number of an in-memory instance ID ("m12").
func memSeq(id string) (uint64, bool) {
	if len(id) < 2 || id[0] != 'm' {
		return 0, false
	}
	n, err := strconv.ParseUint(id[1:], 10, 64)
	return n, err == nil
}

// memPage adds the waiting in-memory instances below cursor after that
// match pq to page, newest first, and returns the cursor of the next
// in-memory page ("" when they are exhausted).
func (e *Engine) memPage(pq *query, after string, limit int, page *mgmt.Page) string {
	below := uint64(1<<64 - 1)
	if n, ok := memSeq(after); ok {
		below = n
	}
	type entry struct {
		seq     uint64
		in      *interp.Instance
		running bool
		kept    mgmt.Instance // an ended one's summary (in is nil)
	}
	e.reg.mu.Lock()
	defer e.reg.mu.Unlock()
	list := make([]entry, 0, len(e.reg.live)+len(e.reg.calling))
	for i, m := range []map[string]*interp.Instance{e.reg.live, e.reg.calling} {
		for id, in := range m {
			if n, ok := memSeq(id); ok && n < below {
				list = append(list, entry{seq: n, in: in, running: i == 1})
			}
		}
	}
	now := e.now()
	e.keptBelow(below, now, func(seq uint64, info *mgmt.Instance) {
		list = append(list, entry{seq: seq, kept: *info})
	})
	sort.Slice(list, func(i, j int) bool { return list[i].seq > list[j].seq })
	for i, x := range list {
		if len(page.Instances) >= limit || page.Scanned >= maxPageScan {
			return "m" + strconv.FormatUint(list[i-1].seq, 10)
		}
		page.Scanned++
		info := x.kept
		if x.in != nil {
			info = memInstance(x.in.Summary(), x.running)
		}
		if pq.memMatch(info) {
			page.Instances = append(page.Instances, info)
		}
	}
	return ""
}

// memMatch tests an in-memory instance, registered (the caller holds
// e.reg.mu, so it is not running, or blocked waiting for partner
// answers) or ended and kept, against the query.
func (q *query) memMatch(info mgmt.Instance) bool {
	if q.names != nil && !slices.Contains(q.names, info.Process) {
		return false
	}
	if !q.matchCommon(info.State, info.Version, info.Started, info.LastActive) {
		return false
	}
	if q.Correlation != "" {
		hit := false
		for set, v := range info.Correlations {
			hit = hit || ((q.CorrelationSet == "" || set == q.CorrelationSet) && v == q.Correlation)
		}
		if !hit {
			return false
		}
	}
	return true
}

// memInstance lists an in-memory instance from its snapshot (running:
// its run waits for partner answers).
func memInstance(s *interp.Snapshot, running bool) mgmt.Instance {
	state := mgmt.StateWaiting
	fault := ""
	switch {
	case running:
		state = mgmt.StateRunning
	case s.State == mgmt.StateSuspended:
		state, fault = mgmt.StateSuspended, opSuspendReason
	}
	return mgmt.Instance{ID: s.ID, Process: s.Process.String(), Version: s.Version, InMemory: true, State: state,
		Started: s.Started, LastActive: s.LastActive, Correlations: s.Correlations, Fault: fault}
}

// InstanceDetail describes one instance for the management API: its
// variables, where each branch is, its alarms, correlation values, the
// failure it is suspended on, and the actions that apply. Timeline is
// left empty (the server adapter fills it).
func (e *Engine) InstanceDetail(ctx context.Context, id string) (*mgmt.InstanceDetail, error) {
	if _, ok := memSeq(id); ok {
		e.reg.mu.Lock()
		if in := e.reg.calling[id]; in != nil {
			defer e.reg.mu.Unlock()
			return e.memDetail(in, true), nil
		}
		e.reg.mu.Unlock()
		in, unlock, err := e.takeMem(ctx, id)
		if errors.Is(err, mgmt.ErrNotFound) {
			if info, ok := e.keptOf(id, e.now()); ok {
				return keptDetail(info), nil
			}
		}
		if err != nil {
			return nil, err
		}
		defer unlock()
		return e.memDetail(in, false), nil
	}
	if e.store == nil {
		return nil, fmt.Errorf("instance %s: no instance store: %w", id, mgmt.ErrNotFound)
	}
	rec, vars, err := e.store.Instance(id)
	if err != nil {
		if errors.Is(err, persist.ErrNotFound) {
			return nil, fmt.Errorf("instance %s: %w", id, mgmt.ErrNotFound)
		}
		if isCorrupt(err) {
			_ = e.markBroken(id, err)
			return &mgmt.InstanceDetail{Instance: mgmt.Instance{ID: id, State: mgmt.StateBroken, Fault: err.Error()},
				Variables: map[string]string{}, Branches: []mgmt.Branch{}, Timeline: []events.Event{},
				Actions: actionsFor(mgmt.StateBroken, false, true)}, nil
		}
		return nil, fmt.Errorf("instance %s: %w", id, err)
	}
	vi := e.versions()
	p := vi.of(rec.Process, rec.Frames)
	d := &mgmt.InstanceDetail{
		Instance: mgmt.Instance{ID: id, Process: rec.Process, State: rec.State.String(), Started: rec.Created,
			LastActive: rec.Updated, Correlations: corrval.Listed(rec.Correlations), Fault: rec.Fault},
		Variables: map[string]string{}, Branches: []mgmt.Branch{}, Timeline: []events.Event{},
	}
	names := map[int]string{}
	if p != nil {
		d.Version, d.Fingerprint = p.Number, p.Fingerprint
		names = corrval.VarNames(p.Plan)
	}
	for slot, data := range vars {
		if slot == interp.TraceSlot {
			continue
		}
		name, ok := names[slot]
		if !ok {
			name = fmt.Sprintf("slot%d", slot)
		}
		d.Variables[name] = interp.VariableText(data)
	}
	timers, err := e.store.InstanceTimers(id)
	if err != nil {
		return nil, fmt.Errorf("instance %s: %w", id, err)
	}
	for _, t := range timers {
		d.Alarms = append(d.Alarms, t.Due)
	}
	failed := false
	if p != nil {
		in, err := e.decode(ctx, p, rec, vars)
		if err != nil {
			d.Fault = err.Error()
			if isCorrupt(err) {
				_ = e.markBroken(id, err)
				d.State = mgmt.StateBroken
			}
		} else {
			s := in.Snapshot()
			d.Branches, d.Activities = branchesOf(s), activitiesOf(s)
			if d.Failure = failureOf(s, rec.Updated); d.Failure != nil {
				failed = true
			}
		}
	}
	d.Actions = actionsFor(d.State, failed, p != nil)
	return d, nil
}

// memDetail describes an in-memory instance whose lock the caller holds
// (running: e.reg.mu, while its run waits for partner answers).
func (e *Engine) memDetail(in *interp.Instance, running bool) *mgmt.InstanceDetail {
	s := in.Snapshot()
	d := &mgmt.InstanceDetail{Instance: memInstance(s, running), Variables: map[string]string{}, Branches: branchesOf(s),
		Timeline: []events.Event{}, Activities: activitiesOf(s), Fingerprint: in.Version().Fingerprint}
	for _, v := range s.Variables {
		d.Variables[v.Name] = v.Value
	}
	if !s.Alarm.IsZero() {
		d.Alarms = []time.Time{s.Alarm}
	}
	d.Actions = actionsFor(d.State, false, true)
	return d
}

// actionsFor lists the actions that apply to an instance in state
// (failed: suspended on a failed activity; known: its process is
// deployed, so it can be run).
func actionsFor(state string, failed, known bool) []mgmt.Action {
	switch {
	case !known:
		return []mgmt.Action{mgmt.Delete}
	case state == mgmt.StateWaiting:
		return []mgmt.Action{mgmt.Suspend, mgmt.Terminate, mgmt.Delete}
	case state == mgmt.StateSuspended && failed:
		return []mgmt.Action{mgmt.Terminate, mgmt.Delete, mgmt.Retry, mgmt.Fault, mgmt.Cancel}
	case state == mgmt.StateSuspended:
		return []mgmt.Action{mgmt.Resume, mgmt.Terminate, mgmt.Delete}
	case state == mgmt.StateRunning:
		return []mgmt.Action{mgmt.Terminate, mgmt.Delete}
	}
	return []mgmt.Action{mgmt.Delete}
}

// activityText is how the API names an activity: kind and name.
func activityText(r interp.ActRef) string { return strings.TrimSpace(r.Kind + " " + r.Name) }

// branchesOf says where each live thread is and what it waits for.
func branchesOf(s *interp.Snapshot) []mgmt.Branch {
	out := []mgmt.Branch{}
	for _, t := range s.Threads {
		b := mgmt.Branch{}
		if t.At.Kind != "" {
			b.Activity, b.Position = activityText(t.At), t.At.Position
		}
		switch t.State {
		case interp.ThreadWaiting:
			b.Waiting = waitingText(t.Awaits)
		case interp.ThreadJoining:
			b.Waiting = "branches"
		case interp.ThreadLinks:
			b.Waiting = "links"
		case interp.ThreadCalling:
			b.Waiting = "partner answer"
		case interp.ThreadReady:
			if t.Failure != nil {
				b.Waiting = "operator: suspended on a failure (retry, fault or cancel)"
			}
		}
		out = append(out, b)
	}
	return out
}

// waitingText says what a waiting thread waits for.
func waitingText(ws []interp.Await) string {
	if len(ws) == 0 {
		return "message"
	}
	parts := make([]string, len(ws))
	for i, w := range ws {
		if w.Operation != "" {
			parts[i] = "message " + w.Operation + " on " + w.PartnerLink
		} else {
			parts[i] = "alarm at " + w.Due.UTC().Format(time.RFC3339)
		}
	}
	return strings.Join(parts, " or ")
}

// failureOf describes the failure the snapshot's instance is suspended
// on (nil: none), at the time of the record.
func failureOf(s *interp.Snapshot, at time.Time) *mgmt.Failure {
	for _, t := range s.Threads {
		if f := t.Failure; f != nil {
			return &mgmt.Failure{Activity: activityText(f.Activity), Position: f.Activity.Position, Reason: f.Reason,
				Attempts: f.Attempts, Time: at}
		}
	}
	return nil
}

// activitiesOf lists the statuses of the activities with an element,
// the process's own first (kind "process").
func activitiesOf(s *interp.Snapshot) []mgmt.ActivityStatus {
	var out []mgmt.ActivityStatus
	for _, a := range s.Activities {
		if a.Kind == "" {
			continue
		}
		st := mgmt.ActivityStatus{ID: a.ID, Kind: a.Kind, Name: a.Name, Position: a.Position, Status: a.Status.String(),
			Fault: a.Fault, Start: a.Start}
		if a.ID == s.Root {
			out = append([]mgmt.ActivityStatus{st}, out...)
			continue
		}
		out = append(out, st)
	}
	return out
}

// Act applies an operator's action to an instance (mgmt.Backend.Act).
func (e *Engine) Act(ctx context.Context, id string, a mgmt.Action) error {
	if !a.Valid() {
		return fmt.Errorf("action %q: %w", a, mgmt.ErrInvalid)
	}
	var err error
	if _, ok := memSeq(id); ok {
		err = e.actMem(ctx, id, a)
	} else {
		err = e.actStored(ctx, id, a)
	}
	if err != nil {
		return fmt.Errorf("instance %s: %s: %w", id, a, err)
	}
	return nil
}

// lockWithin takes the mutex, waiting at most actWait (or until ctx
// ends) for the run holding it.
func lockWithin(ctx context.Context, m interface{ TryLock() bool }) error {
	deadline := time.Now().Add(actWait)
	for !m.TryLock() {
		if time.Now().After(deadline) {
			return fmt.Errorf("the instance is running (waited %v): try again: %w", actWait, mgmt.ErrConflict)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}

// takeMem locks the registered in-memory instance id.
func (e *Engine) takeMem(ctx context.Context, id string) (*interp.Instance, func(), error) {
	e.reg.mu.Lock()
	in := e.reg.live[id]
	calling := e.reg.calling[id] != nil
	e.reg.mu.Unlock()
	if calling {
		return nil, nil, fmt.Errorf("it is running (waits for partner answers): try again: %w", mgmt.ErrConflict)
	}
	if in == nil {
		return nil, nil, fmt.Errorf("instance %s (in-memory instances are known while they wait): %w", id, mgmt.ErrNotFound)
	}
	if err := lockWithin(ctx, in); err != nil {
		return nil, nil, err
	}
	e.reg.mu.Lock()
	still := e.reg.live[id] == in
	e.reg.mu.Unlock()
	if !still {
		in.Unlock()
		return nil, nil, fmt.Errorf("instance %s ended or moved on meanwhile: %w", id, mgmt.ErrNotFound)
	}
	return in, in.Unlock, nil
}

// actMem applies a to a waiting in-memory instance.
func (e *Engine) actMem(ctx context.Context, id string, a mgmt.Action) error {
	in, unlock, err := e.takeMem(ctx, id)
	if errors.Is(err, mgmt.ErrNotFound) && a == mgmt.Delete && e.forgetKept(id) {
		return nil // an ended instance's kept summary
	}
	if err != nil {
		return err
	}
	defer unlock()
	switch a {
	case mgmt.Suspend:
		e.reg.mu.Lock()
		err := in.OperatorSuspend()
		e.reg.mu.Unlock()
		if err != nil {
			return err
		}
		in.Version().EmitLifecycle(in.ID(), events.InstanceSuspended, opSuspendReason)
		return nil
	case mgmt.Resume:
		// Under the registry's lock, as Suspend: a listing reads the
		// flag (Summary) under it while the instance is still live.
		e.reg.mu.Lock()
		err := in.OperatorResume()
		e.reg.mu.Unlock()
		if err != nil {
			return err
		}
		e.claim(in, func() bool { return true })
		in.Version().EmitLifecycle(in.ID(), events.InstanceResumed, "")
		return e.drive(in, interp.Delivery{Ctx: e.baseCtx}, false)
	case mgmt.Terminate, mgmt.Delete:
		e.claim(in, func() bool { return true })
		in.ClearSuspended()
		return e.terminate(in, nil)
	}
	return fmt.Errorf("not suspended on a failed activity: %w", mgmt.ErrConflict)
}

// terminate ends a loaded or claimed instance as <exit> does: no
// handlers, open requests answered with a fault, routes and timers
// removed, state terminated. fence is the token of the lock held on a
// persistent instance. Its error is the end checkpoint's: the instance
// was not terminated in the store (it stays as it was stored).
func (e *Engine) terminate(in *interp.Instance, fence any) error {
	return e.settle(in, nil, in.Terminate(interp.Delivery{Fence: fence}))
}

// actStored applies a to a persistent instance.
func (e *Engine) actStored(ctx context.Context, id string, a mgmt.Action) error {
	fence, release, err := e.holdStored(ctx, id)
	if err != nil {
		return err
	}
	defer release()
	rec, _, err := e.store.Instance(id)
	if errors.Is(err, persist.ErrNotFound) {
		return mgmt.ErrNotFound
	}
	if err != nil && isCorrupt(err) && a == mgmt.Delete {
		return e.deleteBroken(id, fence)
	}
	if err != nil {
		return err
	}
	p := e.versions().of(rec.Process, rec.Frames)
	live := rec.State == persist.Waiting || rec.State == persist.Running || rec.State == persist.Suspended
	if a == mgmt.Delete {
		if live && p != nil {
			in, err := e.load(e.baseCtx, p, id, fence)
			if errors.Is(err, ErrBroken) {
				return e.deleteBroken(id, fence)
			}
			if err != nil {
				return err
			}
			if err := e.terminate(in, fence); err != nil {
				return err
			}
		}
		if err := e.store.Commit(&persist.Checkpoint{Instance: persist.Instance{ID: id}, Delete: true, Fence: fence}); err != nil {
			return err
		}
		return nil
	}
	if p == nil {
		return fmt.Errorf("process %s of this instance is not deployed: %w", rec.Process, mgmt.ErrUnavailable)
	}
	if !live {
		return fmt.Errorf("the instance has ended (%s): %w", rec.State, mgmt.ErrConflict)
	}
	if a == mgmt.Suspend {
		if rec.State != persist.Waiting {
			return fmt.Errorf("the instance is %s, not waiting: %w", rec.State, mgmt.ErrConflict)
		}
		// The record alone changes: routes and timer stay (see above).
		cp := &persist.Checkpoint{Instance: *rec, Fence: fence}
		cp.Instance.State, cp.Instance.Fault, cp.Instance.Updated = persist.Suspended, opSuspendReason, e.now()
		if err := e.store.Commit(cp); err != nil {
			return err
		}
		p.Stats.Suspended.Add(1)
		p.EmitLifecycle(id, events.InstanceSuspended, opSuspendReason)
		return nil
	}
	in, err := e.load(e.baseCtx, p, id, fence)
	if err != nil {
		return err
	}
	if a == mgmt.Terminate {
		return e.terminate(in, fence)
	}
	if err := in.Resolve(a); err != nil {
		e.unload(in)
		return err
	}
	p.EmitLifecycle(id, events.InstanceResumed, string(a))
	return e.drive(in, interp.Delivery{Fence: fence}, false)
}
