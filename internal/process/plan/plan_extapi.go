package plan

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/expr"
)

// ExtensionVariable is a variable resolved at compile time.
type ExtensionVariable struct {
	V *expr.Var
}

// ExtensionAction runs one compiled extension activity or assign
// operation. The same action serves every instance of the process (and
// concurrent ones): it must keep no per-instance state of its own.
type ExtensionAction interface {
	// Run executes the element for one instance. vars is valid only
	// during the call. An *ExtensionFault error throws that fault; any
	// other error throws bpel:subLanguageExecutionFault naming it.
	Run(ctx context.Context, vars ExtensionVariables) error
}

// ExtensionVariables reads and writes an instance's variables.
type ExtensionVariables interface {
	// Read returns a copy of the variable's value, or nil when it is not
	// initialized: an element variable's element; a type variable's value
	// as an element named after the variable (a simple type: its text);
	// a message variable as <message> holding one element per part,
	// named after the part, as ODE's bundles saw it.
	Read(v ExtensionVariable) *etree.Element
	// Write gives the variable value, with the semantics of a <copy> of
	// value to the whole variable (WS-BPEL 2.0 section 8.4.2): an element
	// variable takes a copy of value renamed to its declared element, a
	// type variable takes value's content, and a message variable takes
	// one part per child element of value, matched by name. An error is
	// a fault to return from Run.
	Write(v ExtensionVariable, value *etree.Element) error
}

// ExtensionFault is an error an ExtensionAction returns to throw a
// named fault.
type ExtensionFault struct {
	Space, Local string
	// Reason says what happened, for logs and the SOAP fault string.
	Reason string
}

// Name is the variable's name.
func (x ExtensionVariable) Name() string { return x.V.Name }

func (f *ExtensionFault) Error() string {
	return fmt.Sprintf("fault {%s}%s: %s", f.Space, f.Local, f.Reason)
}

// ExtensionWaiter is an ExtensionAction whose activity waits: for a
// person (BPEL4People's peopleActivity), an outside system, anything
// that ends later than the step that began it. The compiler gives its
// activity a callback endpoint of the process (ExtWait) and a
// correlation set of its own; the runtime calls Start once, then waits
// as a <receive> does (stored, in a persistent process) for the message
// that carries the key Start returned, and hands it to Finish.
type ExtensionWaiter interface {
	ExtensionAction
	// Start begins the work for one instance and returns its key: the
	// message that ends it must reach the process's ExtWaitPath with
	// operation ExtWaitOperation and part ExtWaitKeyPart holding the key
	// (unique among the process's waits). An error is a fault, as Run's.
	Start(ctx context.Context, vars ExtensionVariables, w WaitStart) (key string, err error)
	// Finish takes the message that ended the wait (its parts as the
	// sender built them); the activity completes when it returns nil.
	// An error is a fault, as Run's.
	Finish(ctx context.Context, vars ExtensionVariables, m *exchange.Message) error
}

// WaitStart is what the runtime tells an ExtensionWaiter's Start.
type WaitStart struct {
	// Process is the process, Instance the instance id.
	Process  exchange.QName
	Instance string
	// Endpoint is where the ending message goes (in process, through the
	// engine's Dispatch: it refuses requests over HTTP); its Path is
	// ExtWaitPath(Process).
	Endpoint *exchange.Endpoint
}

// ExtWaitService is the service of process p's extension callback
// endpoint; ExtWaitPath its path.
func ExtWaitService(p exchange.QName) exchange.QName {
	sum := sha256.Sum256([]byte(p.Space))
	return exchange.QName{Space: ExtWaitNS, Local: "extwait-" + p.Local + "-" + hex.EncodeToString(sum[:4])}
}

// ExtWaitPath is the path of process p's extension callback endpoint.
func ExtWaitPath(p exchange.QName) string { return EndpointPath("", ExtWaitService(p).Local) }

// ExtWaitSetPrefix starts the name of an ExtWait's correlation set.
const ExtWaitSetPrefix = "extwait@"

// ExtWaitNS is the namespace of the extension callback endpoints'
// services and of their correlation property.
const ExtWaitNS = "urn:orchd:extension-wait"

// The operation and key part of the message that ends an ExtWait.
const (
	ExtWaitOperation = "extensionDone"
	ExtWaitKeyPart   = "key"
)
