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

// atDeadlineSpec computes the absolute deadline.
func atDeadlineSpec(d *plan.DeadlineSpec, in *Instance, now time.Time) (time.Time, error) {
	x := d.ForExpr
	if x == nil {
		x = d.UntilExpr
	}
	if x == nil {
		return now, nil
	}
	v, err := in.Eval(x, in.root, d.Pos)
	if err != nil {
		return time.Time{}, err
	}
	s := strings.TrimSpace(expr.XpathString(v))
	if d.ForExpr != nil {
		t, err := addDuration(now, s)
		if err != nil {
			return time.Time{}, in.faultf(d.Pos, "invalidExpressionValue", "<for> %q: %v", s, err)
		}
		return t, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, in.faultf(d.Pos, "invalidExpressionValue", "<until> %q is not an xsd:dateTime or xsd:date", s)
}

// addDuration adds an xsd:duration (PnYnMnDTnHnMnS) to t.
func addDuration(t time.Time, s string) (time.Time, error) {
	d, err := xsd.ParseDuration(s)
	if err != nil {
		return time.Time{}, err
	}
	return d.AddTo(t), nil
}

func stepWait(a *plan.Wait, in *Instance, f *frame) (plan.Activity, bool, error) {
	now := in.host.Now()
	if f.pc == 0 {
		t, err := atDeadlineSpec(a.Deadline, in, now)
		if err != nil {
			return nil, false, err
		}
		f.pc, f.due = 1, t.UnixNano()
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
			if f.due == 0 || t.UnixNano() < f.due {
				f.due, f.pc = t.UnixNano(), i+1
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
