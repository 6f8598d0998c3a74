package process

import (
	"github.com/orchd/orchd/internal/process/bpel"
)

// deadlineSpec is a compiled <for> or <until>.
type deadlineSpec struct {
	forExpr, untilExpr *expr
	pos                bpel.Pos
}

// wait blocks until its deadline.
type wait struct {
	base
	deadline *deadlineSpec
}

type onMessage struct {
	inbound
	act activity
}

type onAlarm struct {
	deadline *deadlineSpec
	act      activity
}

// pick waits for the first of its messages or alarms.
type pick struct {
	base
	create bool
	msgs   []*onMessage
	alarms []*onAlarm
	// msgDead and alarmDead are the links leaving each branch, set false
	// when another is chosen.
	msgDead, alarmDead branchLinks
}
