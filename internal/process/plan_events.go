package process

import (
	"github.com/orchd/orchd/internal/process/bpel"
)

// eventHandlers are a scope's (or the process's) onEvents and onAlarms.
type eventHandlers struct {
	events []*onEvent
	alarms []*evAlarm
	// listen is the listener of the onEvents (nil without any).
	listen *eventListener
}

// onEvent is one <onEvent>: the message it takes (its variable is its
// own, private to each handler instance) and the scope it runs.
type onEvent struct {
	inbound
	pos  bpel.Pos
	body activity
	// elem is the variable's element when it is declared with element=
	// (the single part of the operation's message goes there).
	elemVar bool
	// tag is the hidden private variable naming the handler instance's
	// open request: a reply inside it answers its own request, not
	// another instance's of the same operation.
	tag *variable
	// priv are the slots each handler instance has its own copy of.
	priv []*variable
}

// evAlarm is one <onAlarm>: a first deadline (for or until; none when
// only repeatEvery), an optional repeat interval, and the scope it runs.
type evAlarm struct {
	deadline *deadlineSpec
	repeat   *expr
	pos      bpel.Pos
	body     activity
	priv     []*variable
	listen   *alarmListener
}

// listener is an activity that accepts events for a scope.
type listener interface{ isListener() }

// eventListener waits for the messages of a scope's onEvents.
type eventListener struct {
	base
	h *eventHandlers
}

func (*eventListener) isListener() {}

// alarmListener runs one onAlarm of a scope.
type alarmListener struct {
	base
	al *evAlarm
}

func (*alarmListener) isListener() {}
