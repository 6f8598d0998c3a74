package interp

import (
	"errors"
	"strings"
	"time"

	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/xsd"
)

// errBlocked is returned by a step that waits for a message or a timer:
// the frame stays on the stack and the instance goes quiescent.
var errBlocked = errors.New("instance waits")

// atDeadlineSpec computes the absolute deadline (unix nanoseconds), by
// xsd's saturating conversion: a deadline past the clock's range is
// xsd.Never, which no timer fires (docs/limits.md, "Deadlines").
func atDeadlineSpec(d *plan.DeadlineSpec, in *Instance, now time.Time) (int64, error) {
	x := d.ForExpr
	if x == nil {
		x = d.UntilExpr
	}
	if x == nil {
		return xsd.DeadlineOf(now), nil
	}
	v, err := in.Eval(x, in.root, d.Pos)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(expr.XpathString(v))
	if d.ForExpr != nil {
		t, err := xsd.DeadlineFor(now, s)
		if err != nil {
			return 0, in.faultf(d.Pos, "invalidExpressionValue", "<for> %q: %v", s, err)
		}
		return t, nil
	}
	t, err := xsd.DeadlineUntil(s)
	if err != nil {
		return 0, in.faultf(d.Pos, "invalidExpressionValue", "<until> %q is not an xsd:dateTime or xsd:date", s)
	}
	return t, nil
}

func stepWait(a *plan.Wait, in *Instance, f *frame) (plan.Activity, bool, error) {
	now := in.host.Now()
	if f.pc == 0 {
		t, err := atDeadlineSpec(a.Deadline, in, now)
		if err != nil {
			return nil, false, err
		}
		f.pc, f.due = 1, t
	}
	if now.UnixNano() >= f.due {
		return nil, true, nil
	}
	in.wakeAt(f.due)
	return nil, false, errBlocked
}

func stepPick(a *plan.Pick, in *Instance, f *frame) (plan.Activity, bool, error) {
	if f.pc == 0 {
		f.pc = 1
		now := in.host.Now()
		for i, al := range a.Alarms {
			t, err := atDeadlineSpec(al.Deadline, in, now)
			if err != nil {
				return nil, false, err
			}
			if f.due == 0 || t < f.due {
				f.due, f.pc = t, i+1
			}
		}
	}
	for i, om := range a.Msgs {
		ok, err := in.take(&om.Inbound, a.Pos)
		if err != nil {
			return nil, false, err
		}
		if ok {
			eliminateBranchLinks(a.MsgDead, in, i)
			eliminateBranchLinks(a.AlarmDead, in, -1)
			return om.Act, true, nil
		}
	}
	if len(a.Alarms) > 0 && in.host.Now().UnixNano() >= f.due {
		eliminateBranchLinks(a.MsgDead, in, -1)
		eliminateBranchLinks(a.AlarmDead, in, int(f.pc-1))
		return a.Alarms[f.pc-1].Act, true, nil
	}
	for _, om := range a.Msgs {
		if err := in.await(&om.Inbound, a.Pos); err != nil {
			return nil, false, err
		}
	}
	if len(a.Alarms) > 0 {
		in.wakeAt(f.due)
	}
	return nil, false, errBlocked
}
