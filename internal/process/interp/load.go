package interp

import (
	"context"
	"fmt"

	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/xmlparse"
)

// Decode makes the instance of version p that stored record rec (its
// frames past the version's fingerprint, frames) and variables vars
// describe, run by host h under ctx. The requests its earlier runs left
// open are the host's to hand back (Reopen).
func Decode(h Host, p *Version, rec *persist.Instance, frames []byte, vars map[int][]byte, ctx context.Context) (*Instance, error) {
	id := rec.ID
	in := NewInstance(h, p, ctx)
	in.id, in.started, in.state, in.corr = rec.ID, rec.Created, rec.State, rec.Correlations
	in.stored = true
	r := newReader(frames)
	if len(r.B) == 0 {
		return nil, fmt.Errorf("instance %s: %w (version)", id, ErrBadFrames)
	}
	ver, withSession := framesVersionOf(r.B[0])
	if ver < framesVersion || ver > framesVersionComp || (withSession && ver == framesVersion) {
		return nil, fmt.Errorf("instance %s: %w (version)", id, ErrBadFrames)
	}
	withEPRs, withRecs := ver >= framesVersionEPRs, ver == framesVersionComp
	r.B = r.B[1:]
	if err := in.DecodeThreads(r, withRecs); err != nil {
		return nil, fmt.Errorf("instance %s: %w", id, err)
	}
	if fp := r.String(); r.Err == nil && fp != p.Fingerprint {
		return nil, fmt.Errorf("instance %s was checkpointed by a version of process %s (fingerprint %s) that is no longer deployed", id, p.Name.Local, fp)
	}
	if f := r.String(); f != "" {
		in.inHandler = &faultValue{Name: parseClark(f)}
	}
	rn := r.Uvarint()
	for i := uint64(0); i < rn && r.Err == nil; i++ {
		in.regRoutes = append(in.regRoutes, r.String())
	}
	in.regTimer = r.Varint()
	if withEPRs && r.Err == nil {
		if err := in.ReadEPRs(r); err != nil {
			return nil, fmt.Errorf("instance %s: %w", id, err)
		}
	}
	if withSession && r.Err == nil {
		s := r.String()
		if r.Err == nil && s == "" {
			return nil, fmt.Errorf("instance %s: %w (empty session)", id, ErrBadFrames)
		}
		in.SetSession(s)
	} else if !withSession {
		in.AdoptLegacySession()
	}
	if r.Err != nil {
		return nil, fmt.Errorf("instance %s: %w", id, r.Err)
	}
	in.wake = in.regTimer
	if rec.State == persist.Suspended {
		in.suspendReason = rec.Fault
	}
	for slot, data := range vars {
		if slot < 1 || slot > len(p.Vars) || data == nil {
			continue
		}
		el, err := xmlparse.Stored(data)
		if err != nil {
			return nil, fmt.Errorf("instance %s: %w %s: %v", id, ErrBadVariable, p.Vars[slot-1].Name, err)
		}
		in.root.RemoveChildAt(slot - 1)
		in.root.InsertChildAt(slot-1, el)
	}
	return in, nil
}

// Reopen gives a loaded instance the requests its earlier runs left
// open and the host kept (Outcome.Open), but those whose clients gave up.
func (in *Instance) Reopen(open []*OpenRequest) {
	for _, r := range open {
		if r.State.Load() == 0 {
			in.reqs = append(in.reqs, r)
		}
	}
}

// Unload hands back the open requests of an instance the host drops from
// memory without a run (its run is refused), for the run that will
// answer them.
func (in *Instance) Unload() []*OpenRequest {
	open := in.reqs
	in.reqs = nil
	return open
}

// MarkRecovered readies a loaded instance that was running when orchd
// stopped: every thread that was inside a guarded partner call when the
// checkpoint was taken may have made it. It reports false when the
// instance was not running (an operator terminated or deleted it
// meanwhile).
func (in *Instance) MarkRecovered() bool {
	if in.state != persist.Running {
		return false
	}
	for _, t := range in.threads {
		if len(t.stack) == 0 {
			continue
		}
		top := t.Top()
		switch top.act.(type) {
		case *plan.Invoke, *plan.RestActivity:
			t.mayHaveRun = top.pc >= 1
		}
	}
	return true
}
