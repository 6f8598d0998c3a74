package soap

import (
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// WS-Addressing message addressing properties (WS-Addressing 1.0 Core and
// SOAP Binding, namespace 2005/08; and the 2004/08 member submission
// Apache ODE used). A request's wsa header blocks are parsed by
// parseAddressing; replies and partner calls get theirs from
// addressingHeaders, in the namespace the request used (2005/08 for
// partner calls).
const (
	// NSWSA is the WS-Addressing 1.0 namespace.
	NSWSA = "http://www.w3.org/2005/08/addressing"
	// NSWSA2004 is the WS-Addressing member submission's namespace.
	NSWSA2004 = "http://schemas.xmlsoap.org/ws/2004/08/addressing"

	wsaAnonymous     = NSWSA + "/anonymous"
	wsaNone          = NSWSA + "/none"
	wsaAnonymous2004 = NSWSA2004 + "/role/anonymous"
)

// Addressing holds the WS-Addressing properties of a request.
type Addressing struct {
	// NS is the namespace the request's headers are in (NSWSA or
	// NSWSA2004).
	NS        string
	To        string
	Action    string
	MessageID string
	// ReplyTo and FaultTo are nil when the request has none.
	ReplyTo, FaultTo *EPR
}

// EPR is a WS-Addressing endpoint reference: an address and the
// reference parameters to send, as header blocks, with every message to
// it (self-contained copies).
type EPR struct {
	Address string
	Params  []*etree.Element
}

// anonymous reports whether the EPR's address is the anonymous one (the
// HTTP response) or none (no message at all): nil is anonymous.
func (e *EPR) anonymous() bool {
	if e == nil {
		return true
	}
	switch e.Address {
	case "", wsaAnonymous, wsaAnonymous2004, NSWSA2004 + "/anonymous":
		return true
	}
	return false
}

// none reports whether the EPR's address is wsa:none: the message is not
// sent.
func (e *EPR) none() bool { return e != nil && e.Address == wsaNone }

// isWSA reports whether ns is a WS-Addressing namespace.
func isWSA(ns string) bool { return ns == NSWSA || ns == NSWSA2004 }

// understoodWSA reports whether header block h is a WS-Addressing
// property orchd processes (so a mustUnderstand on it is honoured).
func understoodWSA(h *etree.Element) bool {
	if !isWSA(h.NamespaceURI()) {
		return false
	}
	switch h.Tag {
	case "To", "Action", "MessageID", "ReplyTo", "FaultTo", "From", "RelatesTo":
		return true
	}
	return false
}

// parseAddressing returns the WS-Addressing properties among headers, or
// nil when there is none. A ReplyTo or FaultTo without an address is a
// client error.
func parseAddressing(headers []*etree.Element) (*Addressing, error) {
	var a *Addressing
	for _, h := range headers {
		ns := h.NamespaceURI()
		if !isWSA(ns) {
			continue
		}
		if a == nil {
			a = &Addressing{NS: ns}
		}
		var err error
		switch h.Tag {
		case "To":
			a.To = strings.TrimSpace(h.Text())
		case "Action":
			a.Action = strings.TrimSpace(h.Text())
		case "MessageID":
			a.MessageID = strings.TrimSpace(h.Text())
		case "ReplyTo":
			a.ReplyTo, err = parseEPR(h)
		case "FaultTo":
			a.FaultTo, err = parseEPR(h)
		}
		if err != nil {
			return nil, err
		}
	}
	return a, nil
}

// parseEPR reads an endpoint reference element (wsa:ReplyTo, wsa:FaultTo
// or wsa:EndpointReference): its wsa:Address and the children of its
// wsa:ReferenceParameters (and, in the 2004/08 namespace,
// wsa:ReferenceProperties), copied self-contained.
func parseEPR(el *etree.Element) (*EPR, error) {
	ns := el.NamespaceURI()
	e := &EPR{}
	found := false
	for _, c := range el.ChildElements() {
		if c.NamespaceURI() != ns {
			continue
		}
		switch c.Tag {
		case "Address":
			e.Address, found = strings.TrimSpace(c.Text()), true
		case "ReferenceParameters", "ReferenceProperties":
			e.Params = append(e.Params, copyChildren(c)...)
		}
	}
	if !found || e.Address == "" {
		return nil, fmt.Errorf("%w: wsa:%s has no wsa:Address", ErrMessage, el.Tag)
	}
	return e, nil
}

// newMessageID returns a fresh urn:uuid message identifier (a random,
// version 4 UUID).
func newMessageID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// addressingHeaders returns the header blocks of a message to the EPR
// to, in namespace ns: wsa:To, wsa:Action, wsa:MessageID, a wsa:RelatesTo
// when relatesTo is set, then to's reference parameters, each marked
// wsa:IsReferenceParameter="true" (2005/08; the 2004/08 submission has
// no marker). Each block is self-contained.
func addressingHeaders(ns string, to *EPR, action, relatesTo string) []*etree.Element {
	hs := make([]*etree.Element, 0, 4+len(to.Params))
	prop := func(local, text string) {
		el := etree.NewElement(local)
		el.Space = "wsa"
		el.CreateAttr("xmlns:wsa", ns)
		el.SetText(text)
		hs = append(hs, el)
	}
	prop("To", to.Address)
	if action != "" {
		prop("Action", action)
	}
	prop("MessageID", newMessageID())
	if relatesTo != "" {
		prop("RelatesTo", relatesTo)
	}
	for _, p := range to.Params {
		c := p.Copy()
		if ns == NSWSA {
			if _, ok := lookupPrefix(c, "wsa"); !ok {
				c.CreateAttr("xmlns:wsa", NSWSA)
				c.CreateAttr("wsa:IsReferenceParameter", "true")
			} else if uri, _ := lookupPrefix(c, "wsa"); uri == NSWSA {
				c.CreateAttr("wsa:IsReferenceParameter", "true")
			} else {
				c.CreateAttr("xmlns:wsa10", NSWSA)
				c.CreateAttr("wsa10:IsReferenceParameter", "true")
			}
		}
		hs = append(hs, c)
	}
	return hs
}

// callAddressing returns the header blocks of a call of op to ep that
// uses WS-Addressing (2005/08): wsa:To (ep's address), wsa:Action (the
// input's action, else the SOAPAction), a new wsa:MessageID, a
// wsa:ReplyTo when replyTo is set, and ep's reference parameters, then
// headers.
func callAddressing(ep *exchange.Endpoint, op *exchange.Operation, replyTo *exchange.EndpointReference, headers []*etree.Element) []*etree.Element {
	action := op.InputAction
	if action == "" {
		action = op.Action
	}
	hs := addressingHeaders(NSWSA, &EPR{Address: ep.Address, Params: ep.ReferenceParams}, action, "")
	if replyTo != nil {
		// After the properties (To, Action, MessageID), before the
		// reference parameters.
		at := len(hs) - len(ep.ReferenceParams)
		hs = append(hs[:at], append([]*etree.Element{eprElement(NSWSA, "ReplyTo", replyTo)}, hs[at:]...)...)
	}
	return append(hs, headers...)
}

// eprElement is the endpoint reference e as the element wsa:local of
// namespace ns (wsa:ReplyTo): its wsa:Address, and its reference
// parameters (copies) inside wsa:ReferenceParameters when it has any.
// It is self-contained.
func eprElement(ns, local string, e *exchange.EndpointReference) *etree.Element {
	el := etree.NewElement(local)
	el.Space = "wsa"
	el.CreateAttr("xmlns:wsa", ns)
	el.CreateElement("wsa:Address").SetText(e.Address)
	if len(e.ReferenceParams) > 0 {
		rp := el.CreateElement("wsa:ReferenceParameters")
		for _, p := range e.ReferenceParams {
			rp.AddChild(p.Copy())
		}
	}
	return el
}
