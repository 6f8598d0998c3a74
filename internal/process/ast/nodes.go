package ast

import "github.com/orchd/orchd/internal/process/bpel"

// This file is the list of WS-BPEL 2.0's constructs: one type per element
// the language defines, with its attributes as fields (the text as
// written: "yes", a QName's prefix, ...) and its children as typed
// fields. What a construct means is for check and compile.

// Activity is one of WS-BPEL's activities.
type Activity interface {
	Node
	// Base is what every activity has: name, suppressJoinFailure and its
	// link ends.
	Base() *ActivityBase
}

// ActivityBase is embedded by every activity: the standard attributes and
// elements of section 10.1.
type ActivityBase struct {
	Element
	Name                string
	SuppressJoinFailure string // "yes", "no" or "" (inherited)
	Targets             *Targets
	Sources             *Sources
}

// Base returns b itself; it makes the embedding types Activities.
func (b *ActivityBase) Base() *ActivityBase { return b }

// Process is the root <process>.
type Process struct {
	Element
	Name, TargetNamespace                    string
	QueryLanguage, ExpressionLanguage        string
	SuppressJoinFailure, ExitOnStandardFault string
	Imports                                  []*Import
	Extensions                               *Extensions
	PartnerLinks                             *PartnerLinks
	MessageExchanges                         *MessageExchanges
	Variables                                *Variables
	CorrelationSets                          *CorrelationSets
	FaultHandlers                            *FaultHandlers
	EventHandlers                            *EventHandlers
	// Activity is the process's first activity (a valid process has
	// exactly one; compile reports the others).
	Activity Activity
	// Doc is the positioned XML document the tree was parsed from.
	Doc *bpel.Document
}

// Import is an <import> of a WSDL or XML Schema document.
type Import struct {
	Element
	Namespace, Location, ImportType string
}

// Documentation is a <documentation> element; its content is Src's.
type Documentation struct{ Element }

// Extensions is <extensions>.
type Extensions struct {
	Element
	Extensions []*Extension
}

// Extension declares an extension namespace.
type Extension struct {
	Element
	Namespace, MustUnderstand string
}

// PartnerLinks is a <partnerLinks> of a process or scope.
type PartnerLinks struct {
	Element
	PartnerLinks []*PartnerLink
}

// PartnerLink declares a partner link.
type PartnerLink struct {
	Element
	Name, PartnerLinkType, MyRole, PartnerRole, InitializePartnerRole string
}

// MessageExchanges is a <messageExchanges>.
type MessageExchanges struct {
	Element
	MessageExchanges []*MessageExchange
}

// MessageExchange declares a message exchange.
type MessageExchange struct {
	Element
	Name string
}

// Variables is a <variables> of a process or scope.
type Variables struct {
	Element
	Variables []*Variable
}

// Variable declares a variable of a messageType, element or type, with an
// optional in-line initialization.
type Variable struct {
	Element
	Name, MessageType, Type string
	// ElementName is the element attribute.
	ElementName string
	From        *From
}

// CorrelationSets is a <correlationSets>.
type CorrelationSets struct {
	Element
	CorrelationSets []*CorrelationSet
}

// CorrelationSet declares a correlation set of properties.
type CorrelationSet struct {
	Element
	Name, Properties string
}

// Correlations is the <correlations> of a messaging activity.
type Correlations struct {
	Element
	Correlations []*Correlation
}

// Correlation is one use of a correlation set.
type Correlation struct {
	Element
	Set, Initiate, Pattern string
}

// FaultHandlers is a <faultHandlers>.
type FaultHandlers struct {
	Element
	Catches  []*Catch
	CatchAll *CatchAll
}

// Catch is a <catch> of a fault handler (or of an invoke's in-line one).
type Catch struct {
	Element
	FaultName, FaultVariable, FaultMessageType, FaultElement string
	Activity                                                 Activity
}

// CatchAll is a <catchAll>.
type CatchAll struct {
	Element
	Activity Activity
}

// CompensationHandler is a <compensationHandler>.
type CompensationHandler struct {
	Element
	Activity Activity
}

// TerminationHandler is a <terminationHandler>.
type TerminationHandler struct {
	Element
	Activity Activity
}

// EventHandlers is an <eventHandlers>.
type EventHandlers struct {
	Element
	OnEvents []*OnEvent
	OnAlarms []*OnAlarm
}

// OnEvent is an event handler for a message; its Scope declares the
// implicit variable.
type OnEvent struct {
	Element
	PartnerLink, PortType, Operation, Variable, MessageExchange string
	MessageType                                                 string
	// ElementName is the element attribute.
	ElementName  string
	Correlations *Correlations
	FromParts    *FromParts
	Scope        *Scope
}

// OnAlarm is an <onAlarm> of a pick (with an activity) or of event
// handlers (with a scope, as Activity).
type OnAlarm struct {
	Element
	For, Until, RepeatEvery *Expression
	Activity                Activity
}

// OnMessage is an <onMessage> of a pick.
type OnMessage struct {
	Element
	PartnerLink, PortType, Operation, Variable, MessageExchange string
	Correlations                                                *Correlations
	FromParts                                                   *FromParts
	Activity                                                    Activity
}

// Expression is an element whose text is an expression: condition, for,
// until, repeatEvery, startCounterValue, finalCounterValue, branches,
// joinCondition, transitionCondition (Tag says which).
type Expression struct {
	Element
	ExpressionLanguage string
}

// Query is a <query> of a from-spec, to-spec or property alias.
type Query struct {
	Element
	QueryLanguage string
}

// Literal is a <literal> of a from-spec; its content is Src's.
type Literal struct {
	Element
	// Elements counts its child elements; HasText is whether it holds
	// character data other than white space.
	Elements int
	HasText  bool
}

// Sources is the <sources> of an activity.
type Sources struct {
	Element
	Sources []*Source
}

// Source is a link leaving an activity.
type Source struct {
	Element
	LinkName            string
	TransitionCondition *Expression
}

// Targets is the <targets> of an activity.
type Targets struct {
	Element
	JoinCondition *Expression
	Targets       []*Target
}

// Target is a link entering an activity.
type Target struct {
	Element
	LinkName string
}

// Links is the <links> of a flow.
type Links struct {
	Element
	Links []*Link
}

// Link declares a link.
type Link struct {
	Element
	Name string
}

// FromParts is a <fromParts>.
type FromParts struct {
	Element
	FromParts []*FromPart
}

// FromPart copies a message part into a variable.
type FromPart struct {
	Element
	Part, ToVariable string
}

// ToParts is a <toParts>.
type ToParts struct {
	Element
	ToParts []*ToPart
}

// ToPart copies a variable into a message part.
type ToPart struct {
	Element
	Part, FromVariable string
}

// Copy is a <copy> of an assign.
type Copy struct {
	Element
	KeepSrcElementName, IgnoreMissingFromData string
	From                                      *From
	To                                        *To
}

// From is a from-spec (of a copy or a variable's initialization): a
// variable (with part and query), a partner link's endpoint reference, a
// property, a literal or an expression (the element's text).
type From struct {
	Element
	Variable, Part, PartnerLink, EndpointReference, Property string
	ExpressionLanguage                                       string
	Query                                                    *Query
	Literal                                                  *Literal
}

// To is a to-spec: a variable (with part and query), a partner link, a
// property or an expression lvalue (the element's text).
type To struct {
	Element
	Variable, Part, PartnerLink, Property, ExpressionLanguage string
	Query                                                     *Query
}

// ExtensionAssignOperation is an <extensionAssignOperation> of an assign;
// its extension element is Src's.
type ExtensionAssignOperation struct{ Element }

// Then is the <then> of WS-BPEL's 2.0 drafts' <if>, which ODE also read.
type Then struct {
	Element
	Activity Activity
}

// ElseIf is an <elseif> of an if.
type ElseIf struct {
	Element
	Condition *Expression
	Activity  Activity
}

// Else is the <else> of an if.
type Else struct {
	Element
	Activity Activity
}

// CompletionCondition is a forEach's <completionCondition>.
type CompletionCondition struct {
	Element
	Branches *Expression
}

// The activities.

// Receive is <receive>.
type Receive struct {
	ActivityBase
	PartnerLink, PortType, Operation, Variable, MessageExchange string
	CreateInstance                                              string
	Correlations                                                *Correlations
	FromParts                                                   *FromParts
}

// Reply is <reply>.
type Reply struct {
	ActivityBase
	PartnerLink, PortType, Operation, Variable, FaultName, MessageExchange string
	Correlations                                                           *Correlations
	ToParts                                                                *ToParts
}

// Invoke is <invoke>, with its in-line fault and compensation handlers.
type Invoke struct {
	ActivityBase
	PartnerLink, PortType, Operation, InputVariable, OutputVariable string
	Correlations                                                    *Correlations
	ToParts                                                         *ToParts
	FromParts                                                       *FromParts
	Catches                                                         []*Catch
	CatchAll                                                        *CatchAll
	CompensationHandler                                             *CompensationHandler
}

// Assign is <assign>: its copies and extension assign operations, in
// document order, are its children.
type Assign struct {
	ActivityBase
	Validate string
	Copies   []*Copy
}

// Validate is <validate>.
type Validate struct {
	ActivityBase
	Variables string
}

// Wait is <wait>.
type Wait struct {
	ActivityBase
	For, Until *Expression
}

// Empty is <empty>.
type Empty struct{ ActivityBase }

// Exit is <exit>.
type Exit struct{ ActivityBase }

// Throw is <throw>.
type Throw struct {
	ActivityBase
	FaultName, FaultVariable string
}

// Rethrow is <rethrow>.
type Rethrow struct{ ActivityBase }

// Compensate is <compensate>.
type Compensate struct{ ActivityBase }

// CompensateScope is <compensateScope>.
type CompensateScope struct {
	ActivityBase
	Target string
}

// ExtensionActivity is <extensionActivity>; Content is the extension's
// element in it (nil when there is none).
type ExtensionActivity struct {
	ActivityBase
	Content *Element
}

// Sequence is <sequence>.
type Sequence struct {
	ActivityBase
	Activities []Activity
}

// Flow is <flow>.
type Flow struct {
	ActivityBase
	Links      *Links
	Activities []Activity
}

// If is <if>: a condition and its activity (or the drafts' Then), then
// else-ifs and an else.
type If struct {
	ActivityBase
	Condition *Expression
	Activity  Activity
	Then      *Then
	ElseIfs   []*ElseIf
	Else      *Else
}

// While is <while>.
type While struct {
	ActivityBase
	Condition *Expression
	Activity  Activity
}

// RepeatUntil is <repeatUntil>.
type RepeatUntil struct {
	ActivityBase
	Activity  Activity
	Condition *Expression
}

// ForEach is <forEach>.
type ForEach struct {
	ActivityBase
	CounterName, Parallel                string
	StartCounterValue, FinalCounterValue *Expression
	CompletionCondition                  *CompletionCondition
	Scope                                *Scope
}

// Pick is <pick>.
type Pick struct {
	ActivityBase
	CreateInstance string
	OnMessages     []*OnMessage
	OnAlarms       []*OnAlarm
}

// Scope is <scope>.
type Scope struct {
	ActivityBase
	Isolated, ExitOnStandardFault string
	PartnerLinks                  *PartnerLinks
	MessageExchanges              *MessageExchanges
	Variables                     *Variables
	CorrelationSets               *CorrelationSets
	FaultHandlers                 *FaultHandlers
	EventHandlers                 *EventHandlers
	CompensationHandler           *CompensationHandler
	TerminationHandler            *TerminationHandler
	Activity                      Activity
}
