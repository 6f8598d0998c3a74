package ast

import (
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

// This file is the list of WS-BPEL 2.0's constructs: one type per element
// the language defines, with its attributes as fields (the text as
// written: "yes", a QName's prefix, ...) and its children as typed
// fields; newNode, the one switch from tag to type; and each type's fill,
// which reads those fields once the node's children are built. What a
// construct means is for check and compile. A new activity is a type, a
// case and a fill here, and nothing else in this package.

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
	Doc *xmldoc.Document
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

// RestActivity is one of ODE's bpel4restlight activities, the element of
// an <extensionActivity> in that namespace: its tag is the HTTP method
// (<GET>, <POST>, <PUT>, <DELETE>; compile refuses another).
type RestActivity struct{ Element }

// FailureHandling is ODE's activity recovery element of an invoke
// (<ext:failureHandling>): how a failed partner call is retried or
// suspended. deploy reads its content.
type FailureHandling struct{ Element }

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
	// FailureHandling is ODE's <ext:failureHandling>, nil when absent.
	FailureHandling *FailureHandling
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

// newNode is the typed node of an element tag in namespace space (a bare
// *Element for an unknown tag or namespace). This switch is the list of
// the language's elements, and of the ODE extensions orchd runs.
func newNode(tag, space string) Node {
	switch space {
	case xmldoc.NSBPEL, xmldoc.NSBPEL2004:
	case xmldoc.NSBPEL4RestLight:
		return &RestActivity{}
	case xmldoc.NSODEActivityRecovery:
		if tag == "failureHandling" {
			return &FailureHandling{}
		}
		return &Element{}
	default:
		return &Element{}
	}
	switch tag {
	// activities
	case "assign":
		return &Assign{}
	case "compensate":
		return &Compensate{}
	case "compensateScope":
		return &CompensateScope{}
	case "empty":
		return &Empty{}
	case "exit":
		return &Exit{}
	case "extensionActivity":
		return &ExtensionActivity{}
	case "flow":
		return &Flow{}
	case "forEach":
		return &ForEach{}
	case "if":
		return &If{}
	case "invoke":
		return &Invoke{}
	case "pick":
		return &Pick{}
	case "receive":
		return &Receive{}
	case "repeatUntil":
		return &RepeatUntil{}
	case "reply":
		return &Reply{}
	case "rethrow":
		return &Rethrow{}
	case "scope":
		return &Scope{}
	case "sequence":
		return &Sequence{}
	case "throw":
		return &Throw{}
	case "validate":
		return &Validate{}
	case "wait":
		return &Wait{}
	case "while":
		return &While{}
	// constructs
	case "process":
		return &Process{}
	case "import":
		return &Import{}
	case "documentation":
		return &Documentation{}
	case "extensions":
		return &Extensions{}
	case "extension":
		return &Extension{}
	case "partnerLinks":
		return &PartnerLinks{}
	case "partnerLink":
		return &PartnerLink{}
	case "messageExchanges":
		return &MessageExchanges{}
	case "messageExchange":
		return &MessageExchange{}
	case "variables":
		return &Variables{}
	case "variable":
		return &Variable{}
	case "correlationSets":
		return &CorrelationSets{}
	case "correlationSet":
		return &CorrelationSet{}
	case "correlations":
		return &Correlations{}
	case "correlation":
		return &Correlation{}
	case "faultHandlers":
		return &FaultHandlers{}
	case "catch":
		return &Catch{}
	case "catchAll":
		return &CatchAll{}
	case "compensationHandler":
		return &CompensationHandler{}
	case "terminationHandler":
		return &TerminationHandler{}
	case "eventHandlers":
		return &EventHandlers{}
	case "onEvent":
		return &OnEvent{}
	case "onAlarm":
		return &OnAlarm{}
	case "onMessage":
		return &OnMessage{}
	case "condition", "for", "until", "repeatEvery", "startCounterValue", "finalCounterValue",
		"branches", "joinCondition", "transitionCondition":
		return &Expression{}
	case "query":
		return &Query{}
	case "literal":
		return &Literal{}
	case "sources":
		return &Sources{}
	case "source":
		return &Source{}
	case "targets":
		return &Targets{}
	case "target":
		return &Target{}
	case "links":
		return &Links{}
	case "link":
		return &Link{}
	case "fromParts":
		return &FromParts{}
	case "fromPart":
		return &FromPart{}
	case "toParts":
		return &ToParts{}
	case "toPart":
		return &ToPart{}
	case "copy":
		return &Copy{}
	case "from":
		return &From{}
	case "to":
		return &To{}
	case "extensionAssignOperation":
		return &ExtensionAssignOperation{}
	case "then":
		return &Then{}
	case "elseif":
		return &ElseIf{}
	case "else":
		return &Else{}
	case "completionCondition":
		return &CompletionCondition{}
	}
	return &Element{}
}

// Reading the fields.

func (b *ActivityBase) fillBase() {
	b.Name = b.Attr("name")
	b.SuppressJoinFailure = b.Attr("suppressJoinFailure")
	b.Targets = first[*Targets](&b.Element)
	b.Sources = first[*Sources](&b.Element)
}

func (p *Process) fill() {
	e := &p.Element
	p.Name, p.TargetNamespace = e.Attr("name"), e.Attr("targetNamespace")
	p.QueryLanguage, p.ExpressionLanguage = e.Attr("queryLanguage"), e.Attr("expressionLanguage")
	p.SuppressJoinFailure, p.ExitOnStandardFault = e.Attr("suppressJoinFailure"), e.Attr("exitOnStandardFault")
	p.Imports = all[*Import](e)
	p.Extensions = first[*Extensions](e)
	p.PartnerLinks = first[*PartnerLinks](e)
	p.MessageExchanges = first[*MessageExchanges](e)
	p.Variables = first[*Variables](e)
	p.CorrelationSets = first[*CorrelationSets](e)
	p.FaultHandlers = first[*FaultHandlers](e)
	p.EventHandlers = first[*EventHandlers](e)
	p.Activity = firstActivity(e)
}

func (x *Import) fill() {
	x.Namespace, x.Location, x.ImportType = x.Attr("namespace"), x.Attr("location"), x.Attr("importType")
}

func (x *Extensions) fill() { x.Extensions = all[*Extension](&x.Element) }
func (x *Extension) fill() {
	x.Namespace, x.MustUnderstand = x.Attr("namespace"), x.Attr("mustUnderstand")
}
func (x *PartnerLinks) fill() { x.PartnerLinks = all[*PartnerLink](&x.Element) }
func (x *PartnerLink) fill() {
	x.Name, x.PartnerLinkType, x.MyRole, x.PartnerRole = x.Attr("name"), x.Attr("partnerLinkType"), x.Attr("myRole"), x.Attr("partnerRole")
	x.InitializePartnerRole = x.Attr("initializePartnerRole")
}
func (x *MessageExchanges) fill() { x.MessageExchanges = all[*MessageExchange](&x.Element) }
func (x *MessageExchange) fill()  { x.Name = x.Attr("name") }
func (x *Variables) fill()        { x.Variables = all[*Variable](&x.Element) }
func (x *Variable) fill() {
	x.Name, x.MessageType, x.Type, x.ElementName = x.Attr("name"), x.Attr("messageType"), x.Attr("type"), x.Attr("element")
	x.From = first[*From](&x.Element)
}
func (x *CorrelationSets) fill() { x.CorrelationSets = all[*CorrelationSet](&x.Element) }
func (x *CorrelationSet) fill()  { x.Name, x.Properties = x.Attr("name"), x.Attr("properties") }
func (x *Correlations) fill()    { x.Correlations = all[*Correlation](&x.Element) }
func (x *Correlation) fill() {
	x.Set, x.Initiate, x.Pattern = x.Attr("set"), x.Attr("initiate"), x.Attr("pattern")
}
func (x *FaultHandlers) fill() {
	x.Catches, x.CatchAll = all[*Catch](&x.Element), first[*CatchAll](&x.Element)
}
func (x *Catch) fill() {
	x.FaultName, x.FaultVariable = x.Attr("faultName"), x.Attr("faultVariable")
	x.FaultMessageType, x.FaultElement = x.Attr("faultMessageType"), x.Attr("faultElement")
	x.Activity = firstActivity(&x.Element)
}
func (x *CatchAll) fill()            { x.Activity = firstActivity(&x.Element) }
func (x *CompensationHandler) fill() { x.Activity = firstActivity(&x.Element) }
func (x *TerminationHandler) fill()  { x.Activity = firstActivity(&x.Element) }
func (x *EventHandlers) fill() {
	x.OnEvents, x.OnAlarms = all[*OnEvent](&x.Element), all[*OnAlarm](&x.Element)
}
func (x *OnEvent) fill() {
	x.PartnerLink, x.PortType, x.Operation = x.Attr("partnerLink"), x.Attr("portType"), x.Attr("operation")
	x.Variable, x.MessageExchange = x.Attr("variable"), x.Attr("messageExchange")
	x.MessageType, x.ElementName = x.Attr("messageType"), x.Attr("element")
	x.Correlations, x.FromParts = first[*Correlations](&x.Element), first[*FromParts](&x.Element)
	x.Scope = first[*Scope](&x.Element)
}
func (x *OnAlarm) fill() {
	e := &x.Element
	x.For, x.Until = firstTagged[*Expression](e, "for"), firstTagged[*Expression](e, "until")
	x.RepeatEvery = firstTagged[*Expression](e, "repeatEvery")
	x.Activity = firstActivity(e)
}
func (x *OnMessage) fill() {
	x.PartnerLink, x.PortType, x.Operation = x.Attr("partnerLink"), x.Attr("portType"), x.Attr("operation")
	x.Variable, x.MessageExchange = x.Attr("variable"), x.Attr("messageExchange")
	x.Correlations, x.FromParts = first[*Correlations](&x.Element), first[*FromParts](&x.Element)
	x.Activity = firstActivity(&x.Element)
}
func (x *Expression) fill() { x.ExpressionLanguage = x.Attr("expressionLanguage") }
func (x *Query) fill()      { x.QueryLanguage = x.Attr("queryLanguage") }
func (x *Literal) fill() {
	x.Elements = len(x.kids)
	for _, t := range x.Src.Child {
		if cd, ok := t.(*etree.CharData); ok && strings.TrimSpace(cd.Data) != "" {
			x.HasText = true
		}
	}
}
func (x *Sources) fill() { x.Sources = all[*Source](&x.Element) }
func (x *Source) fill() {
	x.LinkName = x.Attr("linkName")
	x.TransitionCondition = firstTagged[*Expression](&x.Element, "transitionCondition")
}
func (x *Targets) fill() {
	x.JoinCondition = firstTagged[*Expression](&x.Element, "joinCondition")
	x.Targets = all[*Target](&x.Element)
}
func (x *Target) fill()    { x.LinkName = x.Attr("linkName") }
func (x *Links) fill()     { x.Links = all[*Link](&x.Element) }
func (x *Link) fill()      { x.Name = x.Attr("name") }
func (x *FromParts) fill() { x.FromParts = all[*FromPart](&x.Element) }
func (x *FromPart) fill()  { x.Part, x.ToVariable = x.Attr("part"), x.Attr("toVariable") }
func (x *ToParts) fill()   { x.ToParts = all[*ToPart](&x.Element) }
func (x *ToPart) fill()    { x.Part, x.FromVariable = x.Attr("part"), x.Attr("fromVariable") }
func (x *Copy) fill() {
	x.KeepSrcElementName, x.IgnoreMissingFromData = x.Attr("keepSrcElementName"), x.Attr("ignoreMissingFromData")
	x.From, x.To = first[*From](&x.Element), first[*To](&x.Element)
}
func (x *From) fill() {
	x.Variable, x.Part, x.PartnerLink = x.Attr("variable"), x.Attr("part"), x.Attr("partnerLink")
	x.EndpointReference, x.Property, x.ExpressionLanguage = x.Attr("endpointReference"), x.Attr("property"), x.Attr("expressionLanguage")
	x.Query, x.Literal = first[*Query](&x.Element), first[*Literal](&x.Element)
}
func (x *To) fill() {
	x.Variable, x.Part, x.PartnerLink = x.Attr("variable"), x.Attr("part"), x.Attr("partnerLink")
	x.Property, x.ExpressionLanguage = x.Attr("property"), x.Attr("expressionLanguage")
	x.Query = first[*Query](&x.Element)
}
func (x *Then) fill() { x.Activity = firstActivity(&x.Element) }
func (x *ElseIf) fill() {
	x.Condition = firstTagged[*Expression](&x.Element, "condition")
	x.Activity = firstActivity(&x.Element)
}
func (x *Else) fill() { x.Activity = firstActivity(&x.Element) }
func (x *CompletionCondition) fill() {
	x.Branches = firstTagged[*Expression](&x.Element, "branches")
}

// Activities.

func (x *Receive) fill() {
	x.fillBase()
	x.PartnerLink, x.PortType, x.Operation = x.Attr("partnerLink"), x.Attr("portType"), x.Attr("operation")
	x.Variable, x.MessageExchange, x.CreateInstance = x.Attr("variable"), x.Attr("messageExchange"), x.Attr("createInstance")
	x.Correlations, x.FromParts = first[*Correlations](&x.Element), first[*FromParts](&x.Element)
}
func (x *Reply) fill() {
	x.fillBase()
	x.PartnerLink, x.PortType, x.Operation = x.Attr("partnerLink"), x.Attr("portType"), x.Attr("operation")
	x.Variable, x.FaultName, x.MessageExchange = x.Attr("variable"), x.Attr("faultName"), x.Attr("messageExchange")
	x.Correlations, x.ToParts = first[*Correlations](&x.Element), first[*ToParts](&x.Element)
}
func (x *Invoke) fill() {
	x.fillBase()
	e := &x.Element
	x.PartnerLink, x.PortType, x.Operation = x.Attr("partnerLink"), x.Attr("portType"), x.Attr("operation")
	x.InputVariable, x.OutputVariable = x.Attr("inputVariable"), x.Attr("outputVariable")
	x.Correlations, x.ToParts, x.FromParts = first[*Correlations](e), first[*ToParts](e), first[*FromParts](e)
	x.Catches, x.CatchAll = all[*Catch](e), first[*CatchAll](e)
	x.CompensationHandler = first[*CompensationHandler](e)
	for _, c := range e.kids {
		if f, ok := c.Node().(*FailureHandling); ok {
			x.FailureHandling = f
			break
		}
	}
}
func (x *Assign) fill() {
	x.fillBase()
	x.Validate = x.Attr("validate")
	x.Copies = all[*Copy](&x.Element)
}
func (x *Validate) fill() { x.fillBase(); x.Variables = x.Attr("variables") }
func (x *Wait) fill() {
	x.fillBase()
	x.For, x.Until = firstTagged[*Expression](&x.Element, "for"), firstTagged[*Expression](&x.Element, "until")
}
func (x *Empty) fill()      { x.fillBase() }
func (x *Exit) fill()       { x.fillBase() }
func (x *Rethrow) fill()    { x.fillBase() }
func (x *Compensate) fill() { x.fillBase() }
func (x *Throw) fill() {
	x.fillBase()
	x.FaultName, x.FaultVariable = x.Attr("faultName"), x.Attr("faultVariable")
}
func (x *CompensateScope) fill() { x.fillBase(); x.Target = x.Attr("target") }
func (x *ExtensionActivity) fill() {
	x.fillBase()
	for _, c := range x.kids {
		if !c.IsBPEL() {
			x.Content = c
			break
		}
	}
}
func (x *Sequence) fill() { x.fillBase(); x.Activities = activities(&x.Element) }
func (x *Flow) fill() {
	x.fillBase()
	x.Links, x.Activities = first[*Links](&x.Element), activities(&x.Element)
}
func (x *If) fill() {
	x.fillBase()
	e := &x.Element
	x.Condition = firstTagged[*Expression](e, "condition")
	x.Activity, x.Then = firstActivity(e), first[*Then](e)
	x.ElseIfs, x.Else = all[*ElseIf](e), first[*Else](e)
}
func (x *While) fill() {
	x.fillBase()
	x.Condition, x.Activity = firstTagged[*Expression](&x.Element, "condition"), firstActivity(&x.Element)
}
func (x *RepeatUntil) fill() {
	x.fillBase()
	x.Condition, x.Activity = firstTagged[*Expression](&x.Element, "condition"), firstActivity(&x.Element)
}
func (x *ForEach) fill() {
	x.fillBase()
	e := &x.Element
	x.CounterName, x.Parallel = x.Attr("counterName"), x.Attr("parallel")
	x.StartCounterValue = firstTagged[*Expression](e, "startCounterValue")
	x.FinalCounterValue = firstTagged[*Expression](e, "finalCounterValue")
	x.CompletionCondition, x.Scope = first[*CompletionCondition](e), first[*Scope](e)
}
func (x *Pick) fill() {
	x.fillBase()
	x.CreateInstance = x.Attr("createInstance")
	x.OnMessages, x.OnAlarms = all[*OnMessage](&x.Element), all[*OnAlarm](&x.Element)
}
func (x *Scope) fill() {
	x.fillBase()
	e := &x.Element
	x.Isolated, x.ExitOnStandardFault = x.Attr("isolated"), x.Attr("exitOnStandardFault")
	x.PartnerLinks, x.MessageExchanges = first[*PartnerLinks](e), first[*MessageExchanges](e)
	x.Variables, x.CorrelationSets = first[*Variables](e), first[*CorrelationSets](e)
	x.FaultHandlers, x.EventHandlers = first[*FaultHandlers](e), first[*EventHandlers](e)
	x.CompensationHandler, x.TerminationHandler = first[*CompensationHandler](e), first[*TerminationHandler](e)
	x.Activity = firstActivity(e)
}
