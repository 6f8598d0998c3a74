package mgmt

import (
	"context"
	"errors"
	"time"
)

// The human tasks (internal/humantask) through the API. Unlike every
// other route, the task routes are not an operator's: the caller is a
// person of the people directory (orchd serve --people-file), with
// "Authorization: Basic" and that person's own password (never the admin
// token), and sees and acts on only the tasks its roles allow.
//
//	GET    /api/v1/tasks?state=&name=&role=&limit=     []Task the caller may see (state: a WS-HT state,
//	                                                   repeatable, default the open ones)
//	GET    /api/v1/tasks/{id}                          Task (404 too when the caller may not see it)
//	POST   /api/v1/tasks/{id}/{op}                     body TaskAction (JSON); the Task after it
//
// op is one of TaskOps. 401: no or wrong credentials (the same answer, in
// the same time, for an unknown user); 403: the caller's roles do not
// allow the operation; 409: the task's state does not; 400: a bad
// argument or an operation the task does not support (skip of a task
// that is not skipable).

// TaskBackend is what the task routes need; a Backend that serves tasks
// implements it too.
type TaskBackend interface {
	// TaskUser authenticates a person; ErrUnauthorized for an unknown
	// user or a wrong password alike.
	TaskUser(ctx context.Context, user, password string) (TaskUser, error)
	// Tasks lists the tasks u may see that q selects, newest first.
	Tasks(ctx context.Context, u TaskUser, q TaskQuery) ([]Task, error)
	// Task returns one task u may see (ErrNotFound otherwise).
	Task(ctx context.Context, u TaskUser, id string) (*Task, error)
	// ActOnTask runs an operation on a task as u; the task after it.
	ActOnTask(ctx context.Context, u TaskUser, id string, a TaskAction) (*Task, error)
}

// More sentinel errors, of the task routes.
var (
	// ErrUnauthorized: no or wrong credentials (401).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrForbidden: the caller may not do this (403).
	ErrForbidden = errors.New("forbidden")
)

// TaskUser is an authenticated person: its name and groups.
type TaskUser struct {
	Name   string   `json:"name"`
	Groups []string `json:"groups,omitempty"`
}

// TaskQuery selects tasks.
type TaskQuery struct {
	States []string
	Name   string
	Role   string
	Limit  int
}

// TaskOps are the operations of POST /api/v1/tasks/{id}/{op}, WS-HT's
// names.
var TaskOps = []string{"claim", "start", "stop", "release", "complete", "fail", "skip", "delegate", "forward",
	"suspend", "resume", "setPriority", "addComment"}

// TaskAction is an operation's arguments: Output for complete (the
// output message's payload element, XML), FaultName and FaultDetail for
// fail, User for delegate, Users and Groups for forward, Priority for
// setPriority, Comment for addComment.
type TaskAction struct {
	Op          string   `json:"op,omitempty"`
	Output      string   `json:"output,omitempty"`
	FaultName   string   `json:"faultName,omitempty"`
	FaultDetail string   `json:"faultDetail,omitempty"`
	User        string   `json:"user,omitempty"`
	Users       []string `json:"users,omitempty"`
	Groups      []string `json:"groups,omitempty"`
	Priority    *int     `json:"priority,omitempty"`
	Comment     string   `json:"comment,omitempty"`
}

// Task is a task as a person sees it.
type Task struct {
	ID           string                `json:"id"`
	Name         string                `json:"name"`
	Namespace    string                `json:"namespace,omitempty"`
	Bundle       string                `json:"bundle,omitempty"`
	Version      int                   `json:"version,omitempty"`
	Notification bool                  `json:"notification,omitempty"`
	State        string                `json:"state"`
	Priority     int                   `json:"priority"`
	Skipable     bool                  `json:"skipable,omitempty"`
	Subject      string                `json:"subject,omitempty"`
	Description  string                `json:"description,omitempty"`
	Parameters   map[string]string     `json:"parameters,omitempty"`
	Input        string                `json:"input,omitempty"`
	Output       string                `json:"output,omitempty"`
	FaultName    string                `json:"faultName,omitempty"`
	ActualOwner  string                `json:"actualOwner,omitempty"`
	People       map[string]TaskPeople `json:"people,omitempty"`
	Created      time.Time             `json:"created"`
	Updated      time.Time             `json:"updated"`
	Ended        *time.Time            `json:"ended,omitempty"`
	Deadlines    []TaskDeadline        `json:"deadlines,omitempty"`
	Escalations  []string              `json:"escalations,omitempty"`
	Comments     []TaskComment         `json:"comments,omitempty"`
}

// TaskPeople are the users and groups of one role.
type TaskPeople struct {
	Users  []string `json:"users,omitempty"`
	Groups []string `json:"groups,omitempty"`
}

// TaskDeadline is a deadline of a task.
type TaskDeadline struct {
	Name  string    `json:"name"`
	Kind  string    `json:"kind"`
	Due   time.Time `json:"due"`
	Fired bool      `json:"fired,omitempty"`
	Met   bool      `json:"met,omitempty"`
}

// TaskComment is a comment on a task.
type TaskComment struct {
	By   string    `json:"by"`
	At   time.Time `json:"at"`
	Text string    `json:"text"`
}
