package humantask

import "encoding/xml"

// Definitions are the human interactions of one bundle: every .ht file's
// tasks, notifications and logical people groups, and htconfig.xml's
// bindings of them to services.
type Definitions struct {
	// Bundle and Version are the bundle version the definitions were
	// deployed with.
	Bundle  string
	Version int
	// Tasks and Notifications by QName ({targetNamespace}name), Groups
	// the logical people groups by QName.
	Tasks         map[xml.Name]*TaskDef
	Notifications map[xml.Name]*TaskDef
	Groups        map[xml.Name]*LogicalPeopleGroup
}

// LogicalPeopleGroup is a named group of people a definition assigns to
// roles (htd:logicalPeopleGroup); the people directory resolves it.
type LogicalPeopleGroup struct {
	Name       xml.Name
	Parameters []string
	Pos        string
}

// Interface is a task's WSDL interface (htd:interface): the operation a
// process invokes to create the task, and the operation of the callback
// port type the task's outcome is sent to (WS-HT's responseOperation on
// responsePortType; empty for a notification or a request-response
// operation, whose answer is the response).
type Interface struct {
	PortType          xml.Name
	Operation         string
	ResponsePortType  xml.Name
	ResponseOperation string
}

// PeopleRef is one htd:from of a people assignment: a logical people
// group (with its arguments), literal users and groups (htd:literal's
// htt:organizationalEntity), or an expression over the input
// (htd:getInput(...)/path) naming users.
type PeopleRef struct {
	Group   xml.Name
	Args    map[string]string
	Literal Entities
	Expr    string
}

// Parameter is a presentation parameter: a name for the subject's and
// description's $name$ placeholders, and the XPath expression over the
// input that gives its value.
type Parameter struct {
	Name string
	Type string
	Expr string
}

// Presentation are a definition's presentation elements (the first
// language given of each).
type Presentation struct {
	Name        string
	Subject     string
	Description string
	Parameters  []Parameter
}

// Escalation is what a deadline does when it fires and its condition
// holds: reassign the task (new potential owners), notify people, or
// both.
type Escalation struct {
	Name      string
	Condition string
	// Reassign, when set, replaces the task's potential owners (the task
	// goes back to Ready and loses its actual owner).
	Reassign []PeopleRef
	// Notify names a notification of the definitions (or an inline one)
	// to create for its recipients.
	Notify *TaskDef
}

// Deadline is a start or completion deadline: due For a duration after
// the task's creation, or Until a point in time (XPath expressions), with
// its escalations.
type Deadline struct {
	Name        string
	Kind        DeadlineKind
	For, Until  string
	Escalations []Escalation
	Pos         string
}

// ServiceRef is a service and port of htconfig.xml (hic:service).
type ServiceRef struct {
	Service xml.Name
	Port    string
}

// TaskDef is one task or notification definition (htd:task,
// htd:notification).
type TaskDef struct {
	Name         xml.Name
	Notification bool
	Interface    Interface
	// Priority is an XPath expression (over the input) giving the
	// priority, "" for none (priority 5, WS-HT's "normal").
	Priority     string
	People       map[Role][]PeopleRef
	Presentation Presentation
	Deadlines    []Deadline
	// Skipable says whether the task may be skipped (orchd reads an
	// isSkipable attribute on htd:task; BPEL4People's peopleActivity
	// sets it per activity).
	Skipable bool
	// Publish is the service the task is created through and Callback
	// the service its outcome is sent to (htconfig.xml); zero when the
	// bundle has no htconfig.xml entry for it.
	Publish, Callback ServiceRef
	// Namespaces are the prefixes in scope on the definition, for its
	// expressions.
	Namespaces map[string]string
	// Pos is where it is defined (file:line).
	Pos string
}
