package check

import (
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/wsdl"
)

// variable is a declared or implicit variable and its type.
type variable struct {
	el                   *ast.Element // where it is declared
	name                 string
	msg, element, xsType qname // one of them set (none for a counter)
}

// lookupVar resolves a variable name at e by WS-BPEL's lexical scoping:
// the nearest scope that declares it, and on the way the implicit
// variables of <catch faultVariable>, <onEvent> and <forEach>.
func lookupVar(e *ast.Element, name string) *variable {
	for a := e; a != nil; a = a.Parent() {
		if !a.IsBPEL() {
			continue
		}
		switch n := a.Node().(type) {
		case *ast.Scope, *ast.Process:
			// every <variables> counts, as the compiler declares them all
			for _, v := range grandchildren(a, "variables", "variable") {
				if attr(v, "name") == name {
					return declared(v)
				}
			}
		case *ast.Catch:
			if n.FaultVariable == name {
				return implicit(a, name, "faultMessageType", "faultElement")
			}
		case *ast.OnEvent:
			if n.Variable == name {
				return implicit(a, name, "messageType", "element")
			}
			for _, fp := range grandchildren(a, "fromParts", "fromPart") {
				if attr(fp, "toVariable") == name {
					return &variable{el: fp, name: name}
				}
			}
		case *ast.ForEach:
			if n.CounterName == name {
				return &variable{el: a, name: name}
			}
		}
	}
	return nil
}

// implicit is the variable name that e declares, typed by its attributes
// msgAttr and elAttr.
func implicit(e *ast.Element, name, msgAttr, elAttr string) *variable {
	v := &variable{el: e, name: name}
	v.msg, _ = qattr(e, msgAttr)
	v.element, _ = qattr(e, elAttr)
	return v
}

func declared(v *ast.Element) *variable {
	x := &variable{el: v, name: attr(v, "name")}
	x.msg, _ = qattr(v, "messageType")
	x.element, _ = qattr(v, "element")
	x.xsType, _ = qattr(v, "type")
	return x
}

// lookupDecl resolves a partner link, correlation set or message exchange
// (wrapper "partnerLinks", tag "partnerLink", ...) at e. An <onEvent>
// resolves in its own scope first (SA00084, SA00088, SA00089): start is
// then that scope.
func lookupDecl(e *ast.Element, wrapper, tag, name string) *ast.Element {
	start := e
	if e.Tag == "onEvent" {
		if s := child(e, "scope"); s != nil {
			start = s
		}
	} else if e.Parent() != nil && e.Parent().Tag == "correlations" && e.Parent().Parent() != nil && e.Parent().Parent().Tag == "onEvent" {
		if s := child(e.Parent().Parent(), "scope"); s != nil {
			start = s
		}
	}
	for a := start; a != nil; a = a.Parent() {
		if !isScope(a) {
			continue
		}
		for _, d := range grandchildren(a, wrapper, tag) {
			if attr(d, "name") == name {
				return d
			}
		}
	}
	return nil
}

// operation is the WSDL operation a messaging element (receive, reply,
// invoke, onMessage, onEvent) names, through its partner link's type and
// role; nil when any step does not resolve (the compiler reports those).
func (p *pass) operation(e *ast.Element) (*exchange.Operation, *wsdl.PortType) {
	pt := p.rolePortType(e)
	if pt == nil {
		return nil, nil
	}
	return pt.Ops[attr(e, "operation")], pt
}

// rolePortType is the portType of the role e uses of its partner link:
// partnerRole for <invoke>, myRole for the others.
func (p *pass) rolePortType(e *ast.Element) *wsdl.PortType {
	pl := lookupDecl(e, "partnerLinks", "partnerLink", attr(e, "partnerLink"))
	if pl == nil {
		return nil
	}
	plt, ok := qattr(pl, "partnerLinkType")
	if !ok {
		return nil
	}
	roles, ok := p.w.Plinks[plt]
	if !ok {
		return nil
	}
	role := attr(pl, "myRole")
	if _, ok := e.Node().(*ast.Invoke); ok {
		role = attr(pl, "partnerRole")
	}
	if role == "" {
		return nil
	}
	return p.w.PortTypes[roles[role]]
}

// messaging are the elements that send or receive a message of an
// operation.
var messaging = []string{"receive", "reply", "invoke", "onMessage", "onEvent"}

// standardFaults are WS-BPEL 2.0's standard faults (section 5.2).
var standardFaults = []string{"ambiguousReceive", "completionConditionFailure", "conflictingReceive", "conflictingRequest",
	"correlationViolation", "invalidBranchCondition", "invalidExpressionValue", "invalidVariables", "joinFailure",
	"mismatchedAssignmentFailure", "missingReply", "missingRequest", "scopeInitializationFailure", "selectionFailure",
	"subLanguageExecutionFault", "uninitializedPartnerRole", "uninitializedVariable", "unsupportedReference",
	"xsltInvalidSource", "xsltStylesheetNotFound"}

// handlers are the elements whose activity runs as a fault,
// compensation or termination handler (FCT-handlers).
var handlers = []string{"catch", "catchAll", "compensationHandler", "terminationHandler"}

// isHandler reports whether e is an FCT-handler: a catch, catchAll,
// compensationHandler or terminationHandler.
func isHandler(e *ast.Element) bool {
	switch e.Node().(type) {
	case *ast.Catch, *ast.CatchAll, *ast.CompensationHandler, *ast.TerminationHandler:
		return true
	}
	return false
}

// nearestHandler is the innermost FCT-handler element above e, or nil.
func nearestHandler(e *ast.Element) *ast.Element {
	for a := e.Parent(); a != nil; a = a.Parent() {
		if isHandler(a) {
			return a
		}
	}
	return nil
}

// handlerScope is the scope (or process) an FCT-handler element belongs
// to: the parent of <faultHandlers>, or of the handler itself.
func handlerScope(h *ast.Element) *ast.Element {
	s := h.Parent()
	if s != nil && s.Tag == "faultHandlers" {
		s = s.Parent()
	}
	return s
}
