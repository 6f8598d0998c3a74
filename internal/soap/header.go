package soap

import (
	"fmt"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// Roles (SOAP 1.2) and actors (SOAP 1.1) that address a header block to
// orchd, the message's ultimate receiver.
const (
	actorNext11        = "http://schemas.xmlsoap.org/soap/actor/next"
	roleNext12         = "http://www.w3.org/2003/05/soap-envelope/role/next"
	roleUltimateRecv12 = "http://www.w3.org/2003/05/soap-envelope/role/ultimateReceiver"
)

// notUnderstoodError is a request with header blocks addressed to orchd
// and marked mustUnderstand that the operation's binding maps to no part.
type notUnderstoodError struct {
	op     string
	blocks []exchange.QName
}

func (e *notUnderstoodError) Error() string {
	names := make([]string, len(e.blocks))
	for i, b := range e.blocks {
		names[i] = b.String()
	}
	return fmt.Sprintf("%s: %s: header block %s is marked mustUnderstand and the binding maps no part of the input to it",
		ErrMustUnderstand, e.op, strings.Join(names, ", "))
}

func (e *notUnderstoodError) Unwrap() error { return ErrMustUnderstand }

// notUnderstoodBlocks returns the SOAP 1.2 NotUnderstood header blocks
// that name the blocks of e, self-contained.
func (e *notUnderstoodError) notUnderstoodBlocks() []*etree.Element {
	out := make([]*etree.Element, len(e.blocks))
	for i, b := range e.blocks {
		el := etree.NewElement("NotUnderstood")
		el.Space = "env"
		el.CreateAttr("xmlns:env", NS12)
		if b.Space == "" {
			el.CreateAttr("qname", b.Local)
		} else {
			el.CreateAttr("xmlns:nu", b.Space)
			el.CreateAttr("qname", "nu:"+b.Local)
		}
		out[i] = el
	}
	return out
}

// checkUnderstood returns a *notUnderstoodError when a header block of
// headers is addressed to orchd (no actor/role, or next, or the ultimate
// receiver), is marked mustUnderstand, and is not one the binding sp maps
// to a part. Header blocks addressed to other roles are not orchd's to
// understand.
func checkUnderstood(v exchange.SOAPVersion, op *exchange.Operation, headers []*etree.Element, sp *exchange.SOAPParts) error {
	var missed []exchange.QName
	for _, h := range headers {
		if !mustUnderstand(v, h) || mapsHeader(sp, qnameOf(h)) || understoodWSA(h) {
			continue
		}
		missed = append(missed, qnameOf(h))
	}
	if len(missed) == 0 {
		return nil
	}
	return &notUnderstoodError{op: op.Name, blocks: missed}
}

// mustUnderstand reports whether header block h is addressed to orchd and
// marked mustUnderstand (SOAP 1.1: "1"; SOAP 1.2: "true" or "1").
func mustUnderstand(v exchange.SOAPVersion, h *etree.Element) bool {
	ns := envNS(v)
	must := false
	for i := range h.Attr {
		a := &h.Attr[i]
		if a.Space == "" || a.Space == "xmlns" || a.NamespaceURI() != ns {
			continue
		}
		val := strings.TrimSpace(a.Value)
		switch a.Key {
		case "mustUnderstand":
			must = val == "1" || val == "true"
		case "actor":
			if v == exchange.SOAP11 && val != "" && val != actorNext11 {
				return false
			}
		case "role":
			if v == exchange.SOAP12 && val != roleNext12 && val != roleUltimateRecv12 && val != "" {
				return false
			}
		}
	}
	return must
}

// mapsHeader reports whether the binding sp carries a part as header block
// q.
func mapsHeader(sp *exchange.SOAPParts, q exchange.QName) bool {
	if sp == nil {
		return false
	}
	for _, hp := range sp.Headers {
		if partElementName(hp.PartDesc) == q {
			return true
		}
	}
	return false
}
