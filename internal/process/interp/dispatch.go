package interp

import (
	"fmt"

	"github.com/orchd/orchd/internal/process/plan"
)

// stepActivity advances frame f of instance in by one move of its
// activity: it may push a child to run next, report the frame done, or
// fail with a *faultValue (a BPEL fault) or another error (a system
// failure). It is the runtime's one switch over the plan's activity types.
func stepActivity(x plan.Activity, in *Instance, f *frame) (push plan.Activity, done bool, err error) {
	switch a := x.(type) {
	case *plan.AlarmListener:
		return stepAlarmListener(a, in, f)
	case *plan.Assign:
		return stepAssign(a, in, f)
	case *plan.Compensate:
		return stepCompensate(a, in, f)
	case *plan.Empty:
		return stepEmpty(a, in, f)
	case *plan.EventListener:
		return stepEventListener(a, in, f)
	case *plan.Exit:
		return stepExit(a, in, f)
	case *plan.ExtActivity:
		return stepExtActivity(a, in, f)
	case *plan.ExtWait:
		return stepExtWait(a, in, f)
	case *plan.Flow:
		return stepFlow(a, in, f)
	case *plan.ForEach:
		return stepForEach(a, in, f)
	case *plan.HandlerRun:
		return stepHandlerRun(a, in, f)
	case *plan.IfAct:
		return stepIfAct(a, in, f)
	case *plan.Invoke:
		return stepInvoke(a, in, f)
	case *plan.Linked:
		return stepLinked(a, in, f)
	case *plan.Pick:
		return stepPick(a, in, f)
	case *plan.Receive:
		return stepReceive(a, in, f)
	case *plan.RepeatUntil:
		return stepRepeatUntil(a, in, f)
	case *plan.Reply:
		return stepReply(a, in, f)
	case *plan.RestActivity:
		return stepRestActivity(a, in, f)
	case *plan.Rethrow:
		return stepRethrow(a, in, f)
	case *plan.Scope:
		return stepScope(a, in, f)
	case *plan.Sequence:
		return stepSequence(a, in, f)
	case *plan.Terminator:
		return stepTerminator(a, in, f)
	case *plan.Throw:
		return stepThrow(a, in, f)
	case *plan.ValidateAct:
		return stepValidateAct(a, in, f)
	case *plan.Wait:
		return stepWait(a, in, f)
	case *plan.While:
		return stepWhile(a, in, f)
	}
	panic(fmt.Sprintf("stepActivity: no case for %T", x))
}
