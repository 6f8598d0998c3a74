package plan

import (
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// DeadlineSpec is a compiled <for> or <until>.
type DeadlineSpec struct {
	ForExpr, UntilExpr *expr.Expr
	Pos                xmldoc.Pos
}

// Wait blocks until its deadline.
type Wait struct {
	Base
	Deadline *DeadlineSpec
}

type OnMessage struct {
	Inbound
	Act Activity
}

type OnAlarm struct {
	Deadline *DeadlineSpec
	Act      Activity
}

// Pick waits for the first of its messages or alarms.
type Pick struct {
	Base
	Create bool
	Msgs   []*OnMessage
	Alarms []*OnAlarm
	// MsgDead and alarmDead are the links leaving each branch, set false
	// when another is chosen.
	MsgDead, AlarmDead BranchLinks
}
