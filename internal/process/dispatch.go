package process

import "fmt"

// stepActivity advances frame f of instance in by one move of its
// activity: it may push a child to run next, report the frame done, or
// fail with a *faultValue (a BPEL fault) or another error (a system
// failure). It is the runtime's one switch over the plan's activity types.
func stepActivity(x activity, in *instance, f *frame) (push activity, done bool, err error) {
	switch a := x.(type) {
	case *alarmListener:
		return stepAlarmListener(a, in, f)
	case *assign:
		return stepAssign(a, in, f)
	case *compensate:
		return stepCompensate(a, in, f)
	case *empty:
		return stepEmpty(a, in, f)
	case *eventListener:
		return stepEventListener(a, in, f)
	case *exit:
		return stepExit(a, in, f)
	case *extActivity:
		return stepExtActivity(a, in, f)
	case *flow:
		return stepFlow(a, in, f)
	case *forEach:
		return stepForEach(a, in, f)
	case *handlerRun:
		return stepHandlerRun(a, in, f)
	case *ifAct:
		return stepIfAct(a, in, f)
	case *invoke:
		return stepInvoke(a, in, f)
	case *linked:
		return stepLinked(a, in, f)
	case *pick:
		return stepPick(a, in, f)
	case *receive:
		return stepReceive(a, in, f)
	case *repeatUntil:
		return stepRepeatUntil(a, in, f)
	case *reply:
		return stepReply(a, in, f)
	case *restActivity:
		return stepRestActivity(a, in, f)
	case *rethrow:
		return stepRethrow(a, in, f)
	case *scope:
		return stepScope(a, in, f)
	case *sequence:
		return stepSequence(a, in, f)
	case *terminator:
		return stepTerminator(a, in, f)
	case *throw:
		return stepThrow(a, in, f)
	case *validateAct:
		return stepValidateAct(a, in, f)
	case *wait:
		return stepWait(a, in, f)
	case *while:
		return stepWhile(a, in, f)
	}
	panic(fmt.Sprintf("stepActivity: no case for %T", x))
}
