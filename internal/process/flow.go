package process

import (
	"math"
	"strconv"
	"strings"

	"github.com/beevik/etree"
)

func stepFlow(a *flow, in *instance, f *frame) (activity, bool, error) {
	if f.pc == 0 {
		f.pc = 1
		for _, l := range a.links {
			in.resetLink(l)
		}
		for _, c := range a.children {
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
func (in *instance) linkStatus(l *link) (bool, bool) {
	s := in.slot(l.v)
	if len(s.Child) == 0 {
		return false, false
	}
	return s.Text() == "1", true
}

// resetLink makes l undecided again (its flow starts again).
func (in *instance) resetLink(l *link) { clearChildren(in.slot(l.v)) }

// decideLink sets the status of l unless it is already decided, and wakes
// the threads waiting for links.
func (in *instance) decideLink(l *link, status bool) {
	if _, ok := in.linkStatus(l); ok {
		return
	}
	v := "0"
	if status {
		v = "1"
	}
	in.slot(l.v).SetText(v)
	in.touch(l.v)
	in.linksChanged = true
}

func stepLinked(a *linked, in *instance, f *frame) (activity, bool, error) {
	if f.pc == 1 {
		for _, s := range a.sources {
			ok := true
			if s.cond != nil {
				var err error
				if ok, err = in.cond(s.cond, a.pos); err != nil {
					return nil, false, err
				}
			}
			in.decideLink(s.l, ok)
		}
		return nil, true, nil
	}
	run := len(a.targets) == 0 // no targets: nothing to join
	for _, l := range a.targets {
		st, ok := in.linkStatus(l)
		if !ok {
			return nil, false, errLinks
		}
		run = run || st
	}
	if a.join != nil {
		var err error
		if run, err = in.cond(a.join, a.pos); err != nil {
			return nil, false, err
		}
	}
	if !run {
		if !a.suppress {
			return nil, false, in.faultf(a.pos, "joinFailure", "the join condition of %s is false", a.describe())
		}
		for _, l := range a.dead {
			in.decideLink(l, false)
		}
		return nil, true, nil
	}
	f.pc = 1
	return a.act, false, nil
}

func stepRepeatUntil(a *repeatUntil, in *instance, f *frame) (activity, bool, error) {
	if f.pc == 0 {
		f.pc = 1
		return a.body, false, nil
	}
	ok, err := in.cond(a.cond, a.pos)
	if err != nil || ok {
		return nil, ok, err
	}
	if err := in.ctx.Err(); err != nil {
		return nil, false, err
	}
	return a.body, false, nil
}

// Frame use: i is the next counter value, n the final value, k the
// number of completed branches, due the completion count (-1: none).
func stepForEach(a *forEach, in *instance, f *frame) (activity, bool, error) {
	if f.pc == 0 {
		start, err := counterValueForEach(a, in, a.start, "startCounterValue")
		if err != nil {
			return nil, false, err
		}
		final, err := counterValueForEach(a, in, a.final, "finalCounterValue")
		if err != nil {
			return nil, false, err
		}
		f.i, f.n, f.due = start, final, -1
		if a.branches != nil {
			b, err := counterValueForEach(a, in, a.branches, "branches")
			if err != nil {
				return nil, false, err
			}
			if final-start+1 < b {
				return nil, false, in.faultf(a.pos, "invalidBranchCondition", "completion condition asks for %d branches of %d", b, max(final-start+1, 0))
			}
			f.due = b
		}
		f.pc = 1
		if f.i > f.n || f.due == 0 {
			return nil, true, nil
		}
		if a.parallel {
			for c := f.i; c <= f.n; c++ {
				in.spawn(a.body, branchVarsForEach(a, in, c))
				in.hasPriv = true
			}
			return nil, false, errJoin
		}
		setCounterForEach(a, in, f.i)
		f.i++
		return a.body, false, nil
	}
	if a.parallel {
		if in.cur.kids > 0 {
			return nil, false, errJoin
		}
		return nil, true, unmetForEach(a, in, f)
	}
	if !a.successfulOnly || !in.cur.scopeFaulted {
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
	return a.body, false, nil
}

// childDoneForEach counts a completed parallel branch and, once the completion
// condition holds, ends the others.
func childDoneForEach(a *forEach, in *instance, t *thread, f *frame) {
	if a.successfulOnly && in.cur.scopeFaulted {
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
func unmetForEach(a *forEach, in *instance, f *frame) error {
	if f.due >= 0 && f.k < f.due {
		return in.faultf(a.pos, "completionConditionFailure", "%d of the %d branches the completion condition asks for completed successfully", f.k, f.due)
	}
	return nil
}

func counterValueForEach(a *forEach, in *instance, x *expr, what string) (int64, error) {
	v, err := in.eval(x, in.root, a.pos)
	if err != nil {
		return 0, err
	}
	n := xpathNumber(xpathString(v))
	if math.IsNaN(n) || n < 0 || n != math.Trunc(n) || n > math.MaxInt32 {
		return 0, in.faultf(a.pos, "invalidExpressionValue", "%s %q is not an xsd:unsignedInt", what, strings.TrimSpace(xpathString(v)))
	}
	return int64(n), nil
}

func setCounterForEach(a *forEach, in *instance, c int64) {
	s := in.slot(a.counter)
	clearChildren(s)
	s.SetText(strconv.FormatInt(c, 10))
	in.touch(a.counter)
}

// branchVarsForEach builds the private variables of a parallel branch: its
// counter, and fresh copies of the variables declared inside the body.
func branchVarsForEach(a *forEach, in *instance, c int64) []privSlot {
	priv := make([]privSlot, 0, 1+len(a.privSlots))
	ce := etree.NewElement(a.counter.slotName())
	ce.SetText(strconv.FormatInt(c, 10))
	priv = append(priv, privSlot{slot: a.counter.slot, el: ce})
	for _, v := range a.privSlots {
		priv = append(priv, privSlot{slot: v.slot, el: v.newSlot()})
	}
	return priv
}

// eliminateBranchLinks sets false the links of every branch but the chosen one.
func eliminateBranchLinks(b branchLinks, in *instance, chosen int) {
	for i, links := range b {
		if i == chosen {
			continue
		}
		for _, l := range links {
			in.decideLink(l, false)
		}
	}
}
