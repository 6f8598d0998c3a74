package wsdl

import (
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// WS-Addressing metadata in WSDL: the action of a portType operation's
// messages (WS-Addressing 1.0 Metadata section 4.4: wsam:Action, or the
// WSDL binding's older wsaw:Action) and whether a binding uses
// WS-Addressing (wsaw:UsingAddressing, wsam:Addressing in a policy).
const (
	nsWSAM    = "http://www.w3.org/2007/05/addressing/metadata"
	nsWSAW    = "http://www.w3.org/2006/05/addressing/wsdl"
	nsWSA2004 = "http://schemas.xmlsoap.org/ws/2004/08/addressing"
)

// wsaActions sets op's InputAction, OutputAction and FaultActions from
// its portType operation element oe of portType pt in namespace tns. It
// reports whether the input's action is explicit (false: the default
// pattern, which a binding's soapAction overrides).
func wsaActions(op *exchange.Operation, oe *etree.Element, tns, pt string) bool {
	delim := "/"
	if strings.HasPrefix(strings.ToLower(tns), "urn:") {
		delim = ":"
	}
	base := strings.TrimSuffix(tns, delim) + delim + pt + delim
	action := func(e *etree.Element, dflt string) string {
		if a := explicitAction(e); a != "" {
			return a
		}
		if n := e.SelectAttrValue("name", ""); n != "" {
			dflt = n
		}
		return base + dflt
	}
	explicit := false
	if in := oe.SelectElement("input"); in != nil {
		explicit = explicitAction(in) != ""
		name := op.Name
		if oe.SelectElement("output") != nil {
			name += "Request"
		}
		op.InputAction = action(in, name)
	}
	if out := oe.SelectElement("output"); out != nil {
		op.OutputAction = action(out, op.Name+"Response")
	}
	for _, fe := range oe.SelectElements("fault") {
		if op.FaultActions == nil {
			op.FaultActions = map[string]string{}
		}
		name := fe.SelectAttrValue("name", "")
		if a := explicitAction(fe); a != "" {
			op.FaultActions[name] = a
		} else {
			op.FaultActions[name] = base + op.Name + delim + "Fault" + delim + name
		}
	}
	return explicit
}

// explicitAction is the wsam:Action (or wsaw:Action, or the 2004/08
// submission's wsa:Action) attribute of e, or "".
func explicitAction(e *etree.Element) string {
	for _, a := range e.Attr {
		if a.Key != "Action" || a.Space == "" {
			continue
		}
		switch a.NamespaceURI() {
		case nsWSAM, nsWSAW, nsWSA2004:
			return strings.TrimSpace(a.Value)
		}
	}
	return ""
}

// usesAddressing reports whether a WSDL binding (or port) element says
// its messages carry WS-Addressing headers: a wsaw:UsingAddressing child,
// or a wsam:Addressing assertion in a policy in it or in a top-level
// wsp:Policy a wsp:PolicyReference in it names by wsu:Id ("#id").
func usesAddressing(e *etree.Element) bool {
	found := false
	var walk func(el *etree.Element, depth int)
	walk = func(el *etree.Element, depth int) {
		for _, c := range el.ChildElements() {
			if found {
				return
			}
			ns := c.NamespaceURI()
			switch {
			case c.Tag == "UsingAddressing" && (ns == nsWSAW || ns == nsWSA2004):
				found = true
			case c.Tag == "Addressing" && ns == nsWSAM:
				found = true
			case c.Tag == "PolicyReference" && depth < 4:
				if p := policyByID(e, strings.TrimPrefix(c.SelectAttrValue("URI", ""), "#")); p != nil {
					walk(p, depth+1)
				}
			case depth < 4 && c.Tag != "operation":
				walk(c, depth+1) // wsp:Policy, wsp:ExactlyOne, wsp:All
			}
		}
	}
	walk(e, 0)
	return found
}

// policyByID is the wsp:Policy child of the document element above e
// whose wsu:Id (or Id) is id, or nil.
func policyByID(e *etree.Element, id string) *etree.Element {
	if id == "" {
		return nil
	}
	root := e
	for root.Parent() != nil && root.Parent().Tag != "" {
		root = root.Parent()
	}
	for _, c := range root.ChildElements() {
		if c.Tag != "Policy" {
			continue
		}
		for _, a := range c.Attr {
			if a.Key == "Id" && a.Value == id {
				return c
			}
		}
	}
	return nil
}
