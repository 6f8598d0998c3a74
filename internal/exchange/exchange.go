package exchange

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/beevik/etree"
)

// QName is an XML qualified name.
type QName struct {
	Space string
	Local string
}

// String renders the name in Clark notation: {space}local.
func (q QName) String() string {
	if q.Space == "" {
		return q.Local
	}
	return "{" + q.Space + "}" + q.Local
}

// IsZero reports whether the name is empty.
func (q QName) IsZero() bool { return q.Local == "" }

// Message is a WSDL message instance: one element per part. See the package
// documentation for how element- and type-typed parts are represented.
type Message struct {
	// Name is the WSDL message name, when known.
	Name QName
	// Parts maps part names to their values.
	Parts map[string]*etree.Element
}

// NewMessage returns an empty message with the given name.
func NewMessage(name QName) *Message {
	return &Message{Name: name, Parts: make(map[string]*etree.Element, 1)}
}

// Part returns the value of part name, or nil.
func (m *Message) Part(name string) *etree.Element {
	if m == nil {
		return nil
	}
	return m.Parts[name]
}

// Fault is a fault declared in a WSDL operation (a BPEL fault with a
// message). It is a value: a reply with a faultName, or a partner answering
// with a declared fault. It implements error so it can travel on error
// paths; use errors.As to recover it.
type Fault struct {
	// Name is the fault's QName: the WSDL fault name qualified by the
	// portType's target namespace, or a BPEL standard fault name.
	Name QName
	// Message carries the fault data, if any.
	Message *Message
	// Reason is a human-readable explanation, if any.
	Reason string
}

func (f *Fault) Error() string {
	if f.Reason != "" {
		return fmt.Sprintf("fault %s: %s", f.Name, f.Reason)
	}
	return "fault " + f.Name.String()
}

// UndeclaredFault is a SOAP fault a partner answered that its
// operation does not declare, such as a soapenv:Server fault whose
// detail holds an element: the partner client returns it wrapped in its
// error. The runtime decides what it is to the process (a BPEL fault
// named by the one detail element, or a partner failure).
type UndeclaredFault struct {
	// Code is the faultcode (SOAP 1.2: Code/Value) resolved to a QName.
	Code QName
	// Reason is the faultstring (or the first Reason/Text).
	Reason string
	// Detail holds the detail's child elements, self-contained; text in
	// the detail is not kept.
	Detail []*etree.Element
}

func (f *UndeclaredFault) Error() string { return f.Reason }

// Kind classifies a failure that is not a declared fault, so the front door
// can pick a SOAP fault code (Client/Sender or Server/Receiver).
type Kind int

const (
	// KindServer is a failure on orchd's side or a partner's: the sender is
	// not at fault.
	KindServer Kind = iota
	// KindClient means the request itself is wrong: resending it unchanged
	// will fail again.
	KindClient
	// KindUnavailable means the server is shutting down or overloaded.
	KindUnavailable
)

// Error is a failure with a kind, for the front door to map to a fault code.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ClientError wraps err as the requester's fault.
func ClientError(format string, args ...any) error {
	return &Error{Kind: KindClient, Err: fmt.Errorf(format, args...)}
}

// KindOf returns the kind of err: KindClient or KindUnavailable when err
// wraps an *Error saying so, KindServer otherwise.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindServer
}

// Exchange is one incoming request to a served endpoint. The front door
// builds it, the Dispatcher runs it in the caller's goroutine, and the
// runtime answers through Respond.
type Exchange struct {
	// Endpoint is the endpoint the request arrived at.
	Endpoint *Endpoint
	// Operation is the resolved operation.
	Operation *Operation
	// Input is the request message.
	Input *Message
	// Headers are the SOAP header blocks of the request that the binding
	// maps to no part of Input (those are in Input), kept as sent.
	Headers []*etree.Element

	// Received is when the front door started reading the request.
	Received time.Time
	// Dispatched is set by the front door just before Dispatch.
	Dispatched time.Time

	// Respond delivers the reply (out) or a declared fault (f) to the
	// requester. It is set by the front door; the runtime calls it at most
	// once, for request-response operations, and before Dispatch returns
	// (calls after that are ignored): at the reply activity, or, when the
	// reply must wait for the instance to be quiescent or its state to be
	// durable, at the end of the run. Respond must not keep out or f: the
	// sender may change them once it returns.
	Respond func(out *Message, f *Fault)
}

// Dispatcher runs exchanges. The process runtime implements it.
type Dispatcher interface {
	// Dispatch runs ex straight through in the calling goroutine. It
	// returns when the instance it started or reached is quiescent. A
	// non-nil error means the exchange failed without a reply; use KindOf
	// to classify it. A request-response exchange that returns nil without
	// having called Respond is a server error the front door reports.
	Dispatch(ctx context.Context, ex *Exchange) error
}

// Call is one outgoing partner invocation.
type Call struct {
	// Operation is the partner operation to invoke.
	Operation *Operation
	// Input is the request message.
	Input *Message
	// Headers are SOAP header blocks to send, if any, besides the parts of
	// Input the binding carries as header blocks.
	Headers []*etree.Element
	// Timeout bounds the call (deploy.xml's orchd:timeout for the partner
	// link and operation). Zero means the binding's default.
	Timeout time.Duration
	// ReplyTo, when set, is where the partner is to send its reply or
	// callback (a process's own endpoint, with reference parameters that
	// route the callback to the instance): the call carries it as
	// wsa:ReplyTo, with its wsa:ReferenceParameters, when it carries
	// WS-Addressing headers (Endpoint.Addressing, or reference
	// parameters); a call that carries none sends nothing of it.
	ReplyTo *EndpointReference
}

// Partner is a bound partner endpoint. The SOAP client and in-process
// bindings implement it.
type Partner interface {
	// Invoke calls the partner. For a request-response operation it returns
	// the response message; for a one-way operation it returns (nil, nil)
	// once the partner accepted the message. A declared fault is returned as
	// a *Fault error; anything else is a failure.
	Invoke(ctx context.Context, c *Call) (*Message, error)
}

// Addressed is implemented by a Partner that can say where its calls go:
// the address, credentials removed, for failure messages and the data of
// the fault a failed call raises.
type Addressed interface {
	Address() string
}

// InProcess is implemented by a Partner that may be served by this
// server: a process of the same engine (Apache ODE's calls between the
// processes of a bundle), or a human task's service. While InProcess
// reports true, its calls carry ODE's session header blocks, as a
// WS-Addressing partner's do.
type InProcess interface {
	InProcess() bool
}

// PartnerFunc adapts a function to the Partner interface.
type PartnerFunc func(ctx context.Context, c *Call) (*Message, error)

// Invoke calls f.
func (f PartnerFunc) Invoke(ctx context.Context, c *Call) (*Message, error) { return f(ctx, c) }
