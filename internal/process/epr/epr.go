package epr

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/redact"
)

// Namespaces of the endpoint references Parse reads and ServiceRef writes.
const (
	NSServiceRef = "http://docs.oasis-open.org/wsbpel/2.0/serviceref"
	NSWSA        = "http://www.w3.org/2005/08/addressing"
	NSWSA2004    = "http://schemas.xmlsoap.org/ws/2004/08/addressing"
)

// eprWrapDepth bounds how many wrapper elements Parse looks through
// (a message part element around a service-ref around an EPR is two).
const eprWrapDepth = 8

// ErrNotEPR is wrapped by every error Parse and CheckAddress return;
// ErrNoAddress also by those of an empty or relative address.
var (
	ErrNotEPR    = errors.New("not an endpoint reference")
	ErrNoAddress = errors.New("no absolute address")
)

// Parse returns the address the endpoint reference el holds, with the
// reference parameters of a wsa:EndpointReference (self-contained copies;
// nil for none). el is a sref:service-ref, a wsa:EndpointReference, a
// wsdl:service, or an element wrapping exactly one of those or holding
// the address as text (ODE took a copied element's content as the
// service-ref's).
func Parse(el *etree.Element) (string, []*etree.Element, error) {
	for depth := 0; depth <= eprWrapDepth; depth++ {
		ns := el.NamespaceURI()
		switch {
		case el.Tag == "EndpointReference" && (ns == NSWSA || ns == NSWSA2004):
			for _, c := range el.ChildElements() {
				if c.Tag == "Address" && c.NamespaceURI() == ns {
					addr, err := CheckAddress(c.Text())
					return addr, refParams(el), err
				}
			}
			return "", nil, fmt.Errorf("%w: wsa:EndpointReference has no wsa:Address", ErrNotEPR)
		case el.Tag == "service" && ns == xmldoc.NSWSDL:
			addr, err := wsdlServiceAddress(el)
			return addr, nil, err
		}
		kids := el.ChildElements()
		switch len(kids) {
		case 0:
			addr, err := CheckAddress(elementText(el))
			return addr, nil, err
		case 1:
			el = kids[0]
		default:
			return "", nil, fmt.Errorf("%w: <%s> holds %d elements, want one endpoint reference or an address", ErrNotEPR, el.FullTag(), len(kids))
		}
	}
	return "", nil, fmt.Errorf("%w: wrapped more than %d elements deep", ErrNotEPR, eprWrapDepth)
}

// wsdlServiceAddress is the soap:address location of the first port of a
// wsdl:service that has one.
func wsdlServiceAddress(svc *etree.Element) (string, error) {
	for _, port := range svc.ChildElements() {
		if port.Tag != "port" || port.NamespaceURI() != xmldoc.NSWSDL {
			continue
		}
		for _, a := range port.ChildElements() {
			if a.Tag == "address" && (a.NamespaceURI() == xmldoc.NSSOAP11 || a.NamespaceURI() == xmldoc.NSSOAP12) {
				return CheckAddress(a.SelectAttrValue("location", ""))
			}
		}
	}
	return "", fmt.Errorf("%w: wsdl:service %q has no port with a soap:address", ErrNotEPR, svc.SelectAttrValue("name", ""))
}

// elementText is the concatenated character data directly inside e.
func elementText(e *etree.Element) string {
	var b strings.Builder
	for _, t := range e.Child {
		if cd, ok := t.(*etree.CharData); ok {
			b.WriteString(cd.Data)
		}
	}
	return b.String()
}

// CheckAddress checks that s (spaces around it ignored) is an absolute http or
// https URL and returns it trimmed.
func CheckAddress(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("%w: empty address (%w)", ErrNotEPR, ErrNoAddress)
	}
	u, err := redact.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%w: address %q: %w", ErrNotEPR, redact.Address(s), err)
	}
	if u.Scheme == "" && u.Host == "" && strings.IndexFunc(s, unicode.IsSpace) < 0 && (strings.HasPrefix(s, "/") || strings.HasPrefix(s, ".")) {
		// A relative reference (RFC 3986 4.2: a path, ./ or ../).
		return "", fmt.Errorf("%w: address %q is not an absolute http or https URL (%w)", ErrNotEPR, redact.Address(s), ErrNoAddress)
	}
	if (!strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https")) || u.Host == "" {
		return "", fmt.Errorf("%w: address %q is not an absolute http or https URL", ErrNotEPR, redact.Address(s))
	}
	return s, nil
}

// ServiceRef builds <sref:service-ref><wsa:EndpointReference><wsa:Address>
// for addr.
func ServiceRef(addr string) *etree.Element {
	sr := etree.NewElement("sref:service-ref")
	sr.CreateAttr("xmlns:sref", NSServiceRef)
	epr := sr.CreateElement("wsa:EndpointReference")
	epr.CreateAttr("xmlns:wsa", NSWSA)
	epr.CreateElement("wsa:Address").SetText(addr)
	return sr
}
