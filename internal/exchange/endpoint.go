package exchange

import "github.com/beevik/etree"

// SOAPVersion is the SOAP protocol version of a binding.
type SOAPVersion int

const (
	// SOAP11 is SOAP 1.1 (http://schemas.xmlsoap.org/soap/envelope/).
	SOAP11 SOAPVersion = 11
	// SOAP12 is SOAP 1.2 (http://www.w3.org/2003/05/soap-envelope).
	SOAP12 SOAPVersion = 12
)

// BindingStyle is the WSDL SOAP binding style of an operation.
type BindingStyle int

const (
	// Document is document/literal: each body child is an element-typed part.
	Document BindingStyle = iota
	// RPC is rpc/literal: the body holds a wrapper element named after the
	// operation, whose unqualified children are the parts.
	RPC
)

// Endpoint describes one served or called port, derived from a WSDL
// service port and its binding. It is immutable once built.
type Endpoint struct {
	// Process is the QName of the process serving it (empty for a partner).
	Process QName
	// Service and Port name the WSDL service port.
	Service QName
	Port    string
	// Address is the soap:address location from the WSDL.
	Address string
	// Path is the URL path the front door serves it at.
	Path string
	// Version is the SOAP version of the binding.
	Version SOAPVersion
	// Operations lists the binding's operations.
	Operations []*Operation
	// BasicAuth, when set, are the HTTP basic credentials calls to Address
	// carry (deploy.xml's orchd:basicAuth for a partner). Copies of the
	// endpoint made for an address assigned at run time drop them.
	BasicAuth *BasicAuth
	// Auth, when set, checks the WS-Security header of every request
	// to a provided endpoint; a request it refuses gets the
	// wsse:FailedAuthentication fault.
	Auth Authenticator
	// Security, when set, makes the WS-Security header every call to a
	// partner carries. Like BasicAuth, copies of the endpoint for an
	// address assigned at run time drop it.
	Security SecurityHeader
	// Addressing is set when calls to the endpoint carry WS-Addressing
	// headers (wsa:To, wsa:Action, wsa:MessageID): its WSDL binding says
	// wsaw:UsingAddressing or wsam:Addressing, or deploy.xml's
	// orchd:addressing asks for them.
	Addressing bool
	// ReferenceParams are the reference parameters of the endpoint
	// reference a process assigned to the partner link (WS-BPEL 2.0
	// section 6.3): each call sends them as header blocks, with the
	// WS-Addressing headers (WS-Addressing 1.0 Core section 3.3). They
	// are self-contained and never modified.
	ReferenceParams []*etree.Element
	// WSDL returns the WSDL documents for ?wsdl. Main is the file name of
	// the document that defines the service; Docs maps file names relative
	// to the bundle to their content (imports included).
	WSDL *WSDLDocs
}

// EndpointReference is a WS-Addressing endpoint reference orchd hands a
// partner (WS-Addressing 1.0 Core section 2): an address and the
// reference parameters the partner is to send back, as header blocks,
// with every message to it. The parameters are self-contained and never
// modified.
type EndpointReference struct {
	Address         string
	ReferenceParams []*etree.Element
}

// WSDLDocs are the WSDL and XSD files that describe an endpoint.
type WSDLDocs struct {
	Main string
	Docs map[string][]byte
}

// Operation describes one operation of a binding.
type Operation struct {
	// Name is the operation name; PortType qualifies it.
	Name     string
	PortType QName
	// Action is the SOAPAction (SOAP 1.1) or action parameter (SOAP 1.2),
	// without quotes; may be empty.
	Action string
	// InputAction and OutputAction are the WS-Addressing actions of the
	// input and output messages: the portType's wsam:Action (or
	// wsaw:Action), else the default action pattern of WS-Addressing 1.0
	// Metadata section 4.4.4. FaultActions maps fault names to theirs.
	InputAction, OutputAction string
	FaultActions              map[string]string
	// Style is document or rpc.
	Style BindingStyle
	// Namespace is the soap:body namespace (rpc wrapper namespace).
	Namespace string
	// Input and Output describe the messages; Output is nil for a one-way
	// operation.
	Input  *MessageDesc
	Output *MessageDesc
	// InputParts and OutputParts say where the binding carries the parts
	// of Input and Output in a SOAP envelope (soap:body parts, soap:header).
	// Nil, the common case, means every part in the body, in the message's
	// order.
	InputParts  *SOAPParts
	OutputParts *SOAPParts
	// Faults maps WSDL fault names to their messages.
	Faults map[string]*MessageDesc
}

// OneWay reports whether the operation has no output.
func (o *Operation) OneWay() bool { return o.Output == nil }

// FaultName returns the QName a fault named name of this operation carries:
// the fault name qualified by the portType's namespace.
func (o *Operation) FaultName(name string) QName {
	return QName{Space: o.PortType.Space, Local: name}
}

// SOAPParts is where a binding carries a message's parts: some in the
// SOAP body, some as SOAP header blocks. A part in neither is not carried.
type SOAPParts struct {
	// Body lists the parts carried in the body, in order.
	Body []PartDesc
	// Headers lists the parts carried as header blocks, in binding order.
	Headers []HeaderPart
}

// HeaderPart is a message part a binding carries as a SOAP header block
// (soap:header): its element, or for a type-typed part an unqualified
// element named after the part.
type HeaderPart struct {
	PartDesc
	// Optional is set by wsdl:required="false": a message without this
	// header block is accepted, and the part stays unset.
	Optional bool
}

// Parts returns where the binding carries the parts of the operation's
// input (response false) or output (response true), or nil when every
// part is in the body.
func (o *Operation) Parts(response bool) *SOAPParts {
	if response {
		return o.OutputParts
	}
	return o.InputParts
}

// MessageDesc describes a WSDL message.
type MessageDesc struct {
	Name  QName
	Parts []PartDesc
}

// PartDesc describes one part of a WSDL message: Element for an
// element-typed part, Type for a type-typed part.
type PartDesc struct {
	Name    string
	Element QName
	Type    QName
}

// BasicAuth are HTTP basic credentials for a partner.
type BasicAuth struct {
	User     string
	Password Secret
}

// Secret is a password: it prints as [redacted], so a log line or an
// error that formats the value it sits in does not give it away.
type Secret string

// String returns "[redacted]".
func (Secret) String() string { return "[redacted]" }

// GoString returns "[redacted]".
func (Secret) GoString() string { return "[redacted]" }
