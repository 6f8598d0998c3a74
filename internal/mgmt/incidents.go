package mgmt

import (
	"context"
	"strings"
	"time"
)

// Incidents: everything that needs an operator, in one list.
//
//	GET  /api/v1/incidents?<the instance filters but state>&fault=&activity=&limit=
//	                                                IncidentList
//	POST /api/v1/incidents/bulk/{action}?<filters>&fault=&activity=&max=
//	                                                BulkResult: the action on the suspended
//	                                                instances listed (retry, fault, cancel,
//	                                                resume, terminate, delete)
//	POST /api/v1/incidents/bulk/set-variable?variable=NAME&<filters>&fault=&activity=&max=
//	                                                body: SetVariable; BulkResult
//	POST /api/v1/instances/{id}/variables/{name}    body: SetVariable; {"id", "state"}
//
// The listing reads like every read (the read token); the actions and
// setting a variable need the admin token.

// The kinds of incident.
const (
	// IncidentSuspended is an instance suspended on a failed activity
	// (the failure policy's last resort) or by an operator.
	IncidentSuspended = "suspended"
	// IncidentFailed is an in-memory exchange that ended with an
	// uncaught fault: nothing of it is left to act on, the incident
	// keeps what it was (a bounded ring per process version).
	IncidentFailed = "failed"
)

// Incident is one thing an operator should look at.
type Incident struct {
	// Kind is IncidentSuspended or IncidentFailed.
	Kind string `json:"kind"`
	// ID is the instance's id: the one its log lines and events name.
	ID       string `json:"id"`
	Process  string `json:"process"` // {ns}local
	Version  int    `json:"version,omitempty"`
	InMemory bool   `json:"inMemory,omitempty"`
	// Fault is the fault's name ({ns}local) where there is one: the
	// uncaught fault of a failed exchange, activityFailure for an
	// instance suspended on a failed activity.
	Fault string `json:"fault,omitempty"`
	// Reason is the fault's or the suspension's text.
	Reason string `json:"reason,omitempty"`
	// Activity ("invoke invokeCRM") and Position (file:line) name where
	// it failed, when known.
	Activity string `json:"activity,omitempty"`
	Position string `json:"position,omitempty"`
	// Time is when it failed (for a suspended instance: its record's
	// last change).
	Time time.Time `json:"time"`
	// Attempts counts the failed activity's tries (suspended).
	Attempts int `json:"attempts,omitempty"`
	// Variables are a failed exchange's variables at the failure (each
	// cut at MaxIncidentValue bytes); a suspended instance's are in its
	// detail (GET /api/v1/instances/{id}).
	Variables map[string]string `json:"variables,omitempty"`
	// FaultData is a failed exchange's fault message, as XML.
	FaultData string `json:"faultData,omitempty"`
	// Actions are what applies (none for a failed exchange).
	Actions []Action `json:"actions"`
	// Node is the cluster node that holds it, where known.
	Node string `json:"node,omitempty"`
}

// MaxIncidentValue bounds each variable's text a failed exchange's
// incident keeps.
const MaxIncidentValue = 8 << 10

// IncidentQuery selects incidents: Query's filters (its State is
// ignored: incidents are suspended instances and failed exchanges),
// and the fault's name (its local part or {ns}local) and the activity
// (its name, "kind name", or its position file:line).
type IncidentQuery struct {
	Query
	Fault    string `json:"fault,omitempty"`
	Activity string `json:"activity,omitempty"`
}

// IncidentList is the incidents, newest first.
type IncidentList struct {
	Incidents []Incident `json:"incidents"`
	// Truncated says more matched than the limit.
	Truncated bool `json:"truncated,omitempty"`
	// Partial names what is missing, and why (a cluster node that did
	// not answer; failed exchanges of other nodes).
	Partial []string `json:"partial,omitempty"`
}

// SetVariable is the body of a variable's change: Value is the new
// content as XML, what an instance's detail shows for it (the parts of
// a message variable as elements named after the parts, an element
// variable's element, a simple value as text).
type SetVariable struct {
	Value string `json:"value"`
}

// IncidentBackend is what a Backend that lists incidents adds (the API
// serves the incident routes when its Backend has it).
type IncidentBackend interface {
	// Incidents lists the incidents q selects, newest first, at most
	// q.Limit (default 50).
	Incidents(ctx context.Context, q IncidentQuery) (*IncidentList, error)
	// SetVariable changes a variable of a suspended persistent instance
	// (durably, before it returns) and records it as an event; name is
	// as the instance's detail names it. It wraps ErrConflict when the
	// instance is not suspended, ErrInvalid when the value does not fit
	// the variable, ErrNotFound for an unknown instance or variable.
	SetVariable(ctx context.Context, id, name, value string) error
}

// Matches reports whether inc's fault and activity are those q asks
// for (its other filters are the listing's).
func (q IncidentQuery) Matches(inc *Incident) bool {
	if q.Fault != "" && q.Fault != inc.Fault && q.Fault != localOf(inc.Fault) {
		return false
	}
	if q.Activity == "" {
		return true
	}
	_, name, _ := strings.Cut(inc.Activity, " ")
	return q.Activity == inc.Activity || q.Activity == name || q.Activity == inc.Position
}

// localOf is the local part of a {ns}local name.
func localOf(name string) string {
	if i := strings.LastIndexByte(name, '}'); i >= 0 {
		return name[i+1:]
	}
	return name
}
