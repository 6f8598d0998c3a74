package plan

import (
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// EventHandlers are a scope's (or the process's) onEvents and onAlarms.
type EventHandlers struct {
	Events []*OnEvent
	Alarms []*EvAlarm
	// Listen is the listener of the onEvents (nil without any).
	Listen *EventListener
}

// OnEvent is one <onEvent>: the message it takes (its variable is its
// own, private to each handler instance) and the scope it runs.
type OnEvent struct {
	Inbound
	Pos  xmldoc.Pos
	Body Activity
	// elem is the variable's element when it is declared with element=
	// (the single part of the operation's message goes there).
	ElemVar bool
	// Tag is the hidden private variable naming the handler instance's
	// open request: a reply inside it answers its own request, not
	// another instance's of the same operation.
	Tag *expr.Var
	// Priv are the slots each handler instance has its own copy of.
	Priv []*expr.Var
}

// EvAlarm is one <onAlarm>: a first deadline (for or until; none when
// only repeatEvery), an optional repeat interval, and the scope it runs.
type EvAlarm struct {
	Deadline *DeadlineSpec
	Repeat   *expr.Expr
	Pos      xmldoc.Pos
	Body     Activity
	Priv     []*expr.Var
	Listen   *AlarmListener
}

// Listener is an activity that accepts events for a scope.
type Listener interface{ isListener() }

// EventListener waits for the messages of a scope's onEvents.
type EventListener struct {
	Base
	H *EventHandlers
}

func (*EventListener) isListener() {}

// AlarmListener runs one onAlarm of a scope.
type AlarmListener struct {
	Base
	Al *EvAlarm
}

func (*AlarmListener) isListener() {}
