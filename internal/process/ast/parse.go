package ast

import (
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/bpel"
)

// Parse builds the syntax tree of the process document d. It never fails:
// what the language does not define (an unknown tag, another namespace's
// element, a missing attribute) is kept as written, as a bare *Element or
// an empty field, for check and compile to report with its position. The
// returned Process's element is d's root whatever its tag; a caller that
// needs a WS-BPEL process checks Process.Is("process").
func Parse(d *bpel.Document) *Process {
	p := &Process{Doc: d}
	build(d, d.Root, nil, p)
	return p
}

// build makes the node of src (n when given, else by src's tag), its
// subtree, and then its typed fields.
func build(d *bpel.Document, src *etree.Element, parent *Element, n Node) *Element {
	space := src.NamespaceURI()
	bpelNS := space == bpel.NSBPEL || space == bpel.NSBPEL2004
	if n == nil {
		n = newNode(src.Tag, bpelNS)
	}
	e := n.Elem()
	e.Pos, e.Space, e.Prefix, e.Tag, e.Src, e.parent, e.node = d.Pos(src), space, src.Space, src.Tag, src, parent, n
	if len(src.Attr) > 0 {
		e.Attrs = make([]Attr, len(src.Attr))
		for i, a := range src.Attr {
			e.Attrs[i] = Attr{Space: a.Space, Key: a.Key, Value: a.Value}
		}
	}
	kids := src.ChildElements()
	if len(kids) > 0 {
		e.kids = make([]*Element, len(kids))
		for i, c := range kids {
			e.kids[i] = build(d, c, e, nil)
		}
	}
	if bpelNS {
		if f, ok := n.(filler); ok {
			f.fill()
		}
	}
	return e
}

// newNode is the typed node of a WS-BPEL element tag (a bare *Element
// for another namespace's or an unknown tag). This switch is the list of
// the language's elements.
func newNode(tag string, bpelNS bool) Node {
	if !bpelNS {
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

// filler is a node whose typed fields are read from its attributes and
// children once they are built.
type filler interface{ fill() }

// first is the first BPEL child of e whose node is a T, or the zero T.
func first[T Node](e *Element) T {
	for _, c := range e.kids {
		if t, ok := c.Node().(T); ok && c.IsBPEL() {
			return t
		}
	}
	var zero T
	return zero
}

// all are the BPEL children of e whose nodes are T.
func all[T Node](e *Element) []T {
	var out []T
	for _, c := range e.kids {
		if t, ok := c.Node().(T); ok && c.IsBPEL() {
			out = append(out, t)
		}
	}
	return out
}

// firstTagged is the first BPEL child of e named tag whose node is a T.
func firstTagged[T Node](e *Element, tag string) T {
	if c := e.Child(tag); c != nil {
		if t, ok := c.Node().(T); ok {
			return t
		}
	}
	var zero T
	return zero
}

// activities are e's child activities in document order.
func activities(e *Element) []Activity { return all[Activity](e) }

// firstActivity is e's first child activity, nil when it has none.
func firstActivity(e *Element) Activity { return first[Activity](e) }

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
