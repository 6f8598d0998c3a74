package interp

import (
	"math"
	"strconv"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
)

func stepFlow(a *plan.Flow, in *Instance, f *frame) (plan.Activity, bool, error) {
	if f.pc == 0 {
		f.pc = 1
		for _, l := range a.Links {
			in.resetLink(l)
		}
		for _, c := range a.Children {
			in.spawn(c, nil)
		}
		return nil, false, errJoin
	}
	if in.cur.kids > 0 {
		return nil, false, errJoin
	}
	return nil, true, nil
}

// linkStatus returns the status and whether it is decided.
func (in *Instance) linkStatus(l *plan.Link) (bool, bool) {
	s := in.Slot(l.V)
	if len(s.Child) == 0 {
		return false, false
	}
	return s.Text() == "1", true
}

// resetLink makes l undecided again (its flow starts again).
func (in *Instance) resetLink(l *plan.Link) { expr.ClearChildren(in.Slot(l.V)) }

// decideLink sets the status of l unless it is already decided, and wakes
// the threads waiting for links.
func (in *Instance) decideLink(l *plan.Link, status bool) {
	if _, ok := in.linkStatus(l); ok {
		return
	}
	v := "0"
	if status {
		v = "1"
	}
	in.Slot(l.V).SetText(v)
	in.touch(l.V)
	in.linksChanged = true
}

func stepLinked(a *plan.Linked, in *Instance, f *frame) (plan.Activity, bool, error) {
	if f.pc == 1 {
		for _, s := range a.Sources {
			ok := true
			if s.Cond != nil {
				var err error
				if ok, err = in.Cond(s.Cond, a.Pos); err != nil {
					return nil, false, err
				}
			}
			in.decideLink(s.L, ok)
		}
		return nil, true, nil
	}
	run := len(a.Targets) == 0 // no targets: nothing to join
	for _, l := range a.Targets {
		st, ok := in.linkStatus(l)
		if !ok {
			return nil, false, errLinks
		}
		run = run || st
	}
	if a.Join != nil {
		var err error
		if run, err = in.Cond(a.Join, a.Pos); err != nil {
			return nil, false, err
		}
	}
	if !run {
		if !a.Suppress {
			return nil, false, in.faultf(a.Pos, "joinFailure", "the join condition of %s is false", a.Describe())
		}
		for _, l := range a.Dead {
			in.decideLink(l, false)
		}
		return nil, true, nil
	}
	f.pc = 1
	return a.Act, false, nil
}

func stepRepeatUntil(a *plan.RepeatUntil, in *Instance, f *frame) (plan.Activity, bool, error) {
	if f.pc == 0 {
		f.pc = 1
		return a.Body, false, nil
	}
	ok, err := in.Cond(a.Cond, a.Pos)
	if err != nil || ok {
		return nil, ok, err
	}
	if err := in.ctx.Err(); err != nil {
		return nil, false, err
	}
	return a.Body, false, nil
}

// Frame use: i is the next counter value, n the final value, k the
// number of completed branches, due the completion count (-1: none).
func stepForEach(a *plan.ForEach, in *Instance, f *frame) (plan.Activity, bool, error) {
	if f.pc == 0 {
		start, err := counterValueForEach(a, in, a.Start, "startCounterValue")
		if err != nil {
			return nil, false, err
		}
		final, err := counterValueForEach(a, in, a.Final, "finalCounterValue")
		if err != nil {
			return nil, false, err
		}
		f.i, f.n, f.due = start, final, -1
		if a.Branches != nil {
			b, err := counterValueForEach(a, in, a.Branches, "branches")
			if err != nil {
				return nil, false, err
			}
			if final-start+1 < b {
				return nil, false, in.faultf(a.Pos, "invalidBranchCondition", "completion condition asks for %d branches of %d", b, max(final-start+1, 0))
			}
			f.due = b
		}
		f.pc = 1
		if f.i > f.n || f.due == 0 {
			return nil, true, nil
		}
		if a.Parallel {
			for c := f.i; c <= f.n; c++ {
				in.spawn(a.Body, branchVarsForEach(a, in, c))
				in.hasPriv = true
			}
			return nil, false, errJoin
		}
		setCounterForEach(a, in, f.i)
		f.i++
		return a.Body, false, nil
	}
	if a.Parallel {
		if in.cur.kids > 0 {
			return nil, false, errJoin
		}
		return nil, true, unmetForEach(a, in, f)
	}
	if !a.SuccessfulOnly || !in.cur.scopeFaulted {
		f.k++
	}
	if f.due >= 0 && f.k >= f.due {
		return nil, true, nil
	}
	if f.i > f.n {
		return nil, true, unmetForEach(a, in, f)
	}
	setCounterForEach(a, in, f.i)
	f.i++
	return a.Body, false, nil
}

// childDoneForEach counts a completed parallel branch and, once the completion
// condition holds, ends the others.
func childDoneForEach(a *plan.ForEach, in *Instance, t *thread, f *frame) {
	if a.SuccessfulOnly && in.cur.scopeFaulted {
		return
	}
	f.k++
	if f.due >= 0 && f.k >= f.due {
		in.kill(t)
		t.state = tReady
	}
}

// unmetForEach is bpel:completionConditionFailure when every branch completed
// and fewer than the completion condition's branches counted (only
// successful ones count with successfulBranchesOnly).
func unmetForEach(a *plan.ForEach, in *Instance, f *frame) error {
	if f.due >= 0 && f.k < f.due {
		return in.faultf(a.Pos, "completionConditionFailure", "%d of the %d branches the completion condition asks for completed successfully", f.k, f.due)
	}
	return nil
}

func counterValueForEach(a *plan.ForEach, in *Instance, x *expr.Expr, what string) (int64, error) {
	v, err := in.Eval(x, in.root, a.Pos)
	if err != nil {
		return 0, err
	}
	n := expr.XpathNumber(expr.XpathString(v))
	if math.IsNaN(n) || n < 0 || n != math.Trunc(n) || n > math.MaxInt32 {
		return 0, in.faultf(a.Pos, "invalidExpressionValue", "%s %q is not an xsd:unsignedInt", what, strings.TrimSpace(expr.XpathString(v)))
	}
	return int64(n), nil
}

func setCounterForEach(a *plan.ForEach, in *Instance, c int64) {
	s := in.Slot(a.Counter)
	expr.ClearChildren(s)
	s.SetText(strconv.FormatInt(c, 10))
	in.touch(a.Counter)
}

// branchVarsForEach builds the private variables of a parallel branch: its
// counter, and fresh copies of the variables declared inside the body.
func branchVarsForEach(a *plan.ForEach, in *Instance, c int64) []privSlot {
	priv := make([]privSlot, 0, 1+len(a.PrivSlots))
	ce := etree.NewElement(a.Counter.SlotName())
	ce.SetText(strconv.FormatInt(c, 10))
	priv = append(priv, privSlot{Slot: a.Counter.Slot, El: ce})
	for _, v := range a.PrivSlots {
		priv = append(priv, privSlot{Slot: v.Slot, El: v.NewSlot()})
	}
	return priv
}

// eliminateBranchLinks sets false the links of every branch but the chosen one.
func eliminateBranchLinks(b plan.BranchLinks, in *Instance, chosen int) {
	for i, links := range b {
		if i == chosen {
			continue
		}
		for _, l := range links {
			in.decideLink(l, false)
		}
	}
}
