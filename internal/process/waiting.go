package process

import (
	"github.com/orchd/orchd/internal/xsd"

	"errors"
	"strings"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/bpel"
)

// errBlocked is returned by a step that waits for a message or a timer:
// the frame stays on the stack and the instance goes quiescent.
var errBlocked = errors.New("instance waits")

// atDeadlineSpec computes the absolute deadline.
func atDeadlineSpec(d *deadlineSpec, in *instance, now time.Time) (time.Time, error) {
	x := d.forExpr
	if x == nil {
		x = d.untilExpr
	}
	if x == nil {
		return now, nil
	}
	v, err := in.eval(x, in.root, d.pos)
	if err != nil {
		return time.Time{}, err
	}
	s := strings.TrimSpace(xpathString(v))
	if d.forExpr != nil {
		t, err := addDuration(now, s)
		if err != nil {
			return time.Time{}, in.faultf(d.pos, "invalidExpressionValue", "<for> %q: %v", s, err)
		}
		return t, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, in.faultf(d.pos, "invalidExpressionValue", "<until> %q is not an xsd:dateTime or xsd:date", s)
}

// addDuration adds an xsd:duration (PnYnMnDTnHnMnS) to t.
func addDuration(t time.Time, s string) (time.Time, error) {
	d, err := xsd.ParseDuration(s)
	if err != nil {
		return time.Time{}, err
	}
	return d.AddTo(t), nil
}

func stepWait(a *wait, in *instance, f *frame) (activity, bool, error) {
	now := in.e.now()
	if f.pc == 0 {
		t, err := atDeadlineSpec(a.deadline, in, now)
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

func stepPick(a *pick, in *instance, f *frame) (activity, bool, error) {
	if f.pc == 0 {
		f.pc = 1
		now := in.e.now()
		for i, al := range a.alarms {
			t, err := atDeadlineSpec(al.deadline, in, now)
			if err != nil {
				return nil, false, err
			}
			if f.due == 0 || t.UnixNano() < f.due {
				f.due, f.pc = t.UnixNano(), i+1
			}
		}
	}
	for i, om := range a.msgs {
		ok, err := in.take(&om.inbound, a.pos)
		if err != nil {
			return nil, false, err
		}
		if ok {
			eliminateBranchLinks(a.msgDead, in, i)
			eliminateBranchLinks(a.alarmDead, in, -1)
			return om.act, true, nil
		}
	}
	if len(a.alarms) > 0 && in.e.now().UnixNano() >= f.due {
		eliminateBranchLinks(a.msgDead, in, -1)
		eliminateBranchLinks(a.alarmDead, in, int(f.pc-1))
		return a.alarms[f.pc-1].act, true, nil
	}
	for _, om := range a.msgs {
		if err := in.await(&om.inbound, a.pos); err != nil {
			return nil, false, err
		}
	}
	if len(a.alarms) > 0 {
		in.wakeAt(f.due)
	}
	return nil, false, errBlocked
}

func resolveIn(e *etree.Element, q string) (string, string, error) {
	return bpel.ResolveQName(e, q, true)
}
