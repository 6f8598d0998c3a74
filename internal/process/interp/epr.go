package interp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/orchd/orchd/internal/redact"
	"sort"
	"strings"
	"unicode"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// Endpoint references (WS-BPEL 2.0 sections 6 and 8.4). A <copy> from a
// partner link yields a sref:service-ref wrapping a WS-Addressing
// wsa:EndpointReference; a <copy> to a partner link takes the address out
// of what its <from> produced, as Apache ODE's EndpointFactory did: a
// service-ref, a wsa:EndpointReference (2005/08 or the 2004/08
// submission), a wsdl:service with a soap:address, or plain URL text. The
// address becomes the partner role's endpoint for that partner link
// instance: later invokes call it, sending the reference parameters of a
// wsa:EndpointReference as header blocks (epr_params.go); its metadata
// is not kept.

const (
	nsServiceRef = "http://docs.oasis-open.org/wsbpel/2.0/serviceref"
	nsWSA        = "http://www.w3.org/2005/08/addressing"
	nsWSA2004    = "http://schemas.xmlsoap.org/ws/2004/08/addressing"
)

// eprWrapDepth bounds how many wrapper elements eprAddress looks through
// (a message part element around a service-ref around an EPR is two).
const eprWrapDepth = 8

// errEPR is wrapped by every error eprAddress and eprText return;
// errNoAddress also by those of an empty or relative address.
var (
	errEPR       = errors.New("not an endpoint reference")
	errNoAddress = errors.New("no absolute address")
)

// eprAddress returns the address the endpoint reference el holds. el is a
// sref:service-ref, a wsa:EndpointReference, a wsdl:service, or an element
// wrapping exactly one of those or holding the address as text (ODE took a
// copied element's content as the service-ref's).
func eprAddress(el *etree.Element) (string, error) {
	addr, _, err := eprOf(el)
	return addr, err
}

// eprOf is eprAddress, with the reference parameters of a
// wsa:EndpointReference (self-contained copies; nil for none).
func eprOf(el *etree.Element) (string, []*etree.Element, error) {
	for depth := 0; depth <= eprWrapDepth; depth++ {
		ns := el.NamespaceURI()
		switch {
		case el.Tag == "EndpointReference" && (ns == nsWSA || ns == nsWSA2004):
			for _, c := range el.ChildElements() {
				if c.Tag == "Address" && c.NamespaceURI() == ns {
					addr, err := eprText(c.Text())
					return addr, refParams(el), err
				}
			}
			return "", nil, fmt.Errorf("%w: wsa:EndpointReference has no wsa:Address", errEPR)
		case el.Tag == "service" && ns == xmldoc.NSWSDL:
			addr, err := wsdlServiceAddress(el)
			return addr, nil, err
		}
		kids := el.ChildElements()
		switch len(kids) {
		case 0:
			addr, err := eprText(elementText(el))
			return addr, nil, err
		case 1:
			el = kids[0]
		default:
			return "", nil, fmt.Errorf("%w: <%s> holds %d elements, want one endpoint reference or an address", errEPR, el.FullTag(), len(kids))
		}
	}
	return "", nil, fmt.Errorf("%w: wrapped more than %d elements deep", errEPR, eprWrapDepth)
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
				return eprText(a.SelectAttrValue("location", ""))
			}
		}
	}
	return "", fmt.Errorf("%w: wsdl:service %q has no port with a soap:address", errEPR, svc.SelectAttrValue("name", ""))
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

// eprText checks that s (spaces around it ignored) is an absolute http or
// https URL and returns it trimmed.
func eprText(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("%w: empty address (%w)", errEPR, errNoAddress)
	}
	u, err := redact.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%w: address %q: %w", errEPR, redact.Address(s), err)
	}
	if u.Scheme == "" && u.Host == "" && strings.IndexFunc(s, unicode.IsSpace) < 0 && (strings.HasPrefix(s, "/") || strings.HasPrefix(s, ".")) {
		// A relative reference (RFC 3986 4.2: a path, ./ or ../).
		return "", fmt.Errorf("%w: address %q is not an absolute http or https URL (%w)", errEPR, redact.Address(s), errNoAddress)
	}
	if (!strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https")) || u.Host == "" {
		return "", fmt.Errorf("%w: address %q is not an absolute http or https URL", errEPR, redact.Address(s))
	}
	return s, nil
}

// serviceRefElement builds <sref:service-ref><wsa:EndpointReference><wsa:Address>
// for addr.
func serviceRefElement(addr string) *etree.Element {
	sr := etree.NewElement("sref:service-ref")
	sr.CreateAttr("xmlns:sref", nsServiceRef)
	epr := sr.CreateElement("wsa:EndpointReference")
	epr.CreateAttr("xmlns:wsa", nsWSA)
	epr.CreateElement("wsa:Address").SetText(addr)
	return sr
}

// AssignedEPR is a partner role endpoint assigned at run time; partner
// binds it, on first use.
type AssignedEPR struct {
	Addr string
	// Params are the EPR's reference parameters, sent with each call.
	Params  []*etree.Element
	partner exchange.Partner
}

// endpointRef is the service-ref a <from partnerLink> yields: this
// engine's address of the process's service (myRole), or the partner
// role's endpoint (assigned, else deploy.xml's).
func (in *Instance) endpointRef(s *plan.EprSpec, at xmldoc.Pos) (*etree.Element, error) {
	pl := s.Pl
	if s.MyRole {
		return in.withMySession(pl, serviceRefElement(in.myRoleAddress(pl))), nil
	}
	if as := in.eprs[pl]; as != nil {
		return withRefParams(serviceRefElement(as.Addr), as.Params), nil
	}
	if pl.PartnerEP != nil && pl.PartnerEP.Address != "" {
		return serviceRefElement(pl.PartnerEP.Address), nil
	}
	return nil, in.faultf(at, "uninitializedPartnerRole", "partnerLink %s: its partnerRole has no endpoint (deploy.xml binds none and none was assigned)", pl.Name)
}

// myRoleAddress is this engine's address of pl's myRole service.
func (in *Instance) myRoleAddress(pl *plan.PartnerLink) string {
	addr := pl.Provided.Address
	if base := in.host.BaseURL(); base != "" || addr == "" {
		addr = strings.TrimSuffix(base, "/") + pl.Provided.Path
	}
	return addr
}

// assignEPR makes the address src holds the partner role endpoint of pl.
func (in *Instance) assignEPR(pl *plan.PartnerLink, src source, at xmldoc.Pos) error {
	var addr string
	var params []*etree.Element
	var err error
	if src.node.Tok != nil && src.node.Attr < 0 {
		if el, ok := src.node.Tok.(*etree.Element); ok {
			addr, params, err = eprOf(el)
		} else {
			addr, err = eprText(src.String())
		}
	} else {
		addr, err = eprText(src.String())
	}
	if errors.Is(err, errNoAddress) && pl.PartnerEP != nil && pl.PartnerEP.Address != "" {
		// An endpoint reference without an address of its own (empty, or
		// relative) leaves the partner role at deploy.xml's binding, as
		// ODE did: the binding is where such a reference points.
		delete(in.eprs, pl)
		return nil
	}
	if err != nil {
		return in.faultf(at, "mismatchedAssignmentFailure", "<to partnerLink=%q>: %v", pl.Name, err)
	}
	if in.eprs == nil {
		in.eprs = map[*plan.PartnerLink]*AssignedEPR{}
	}
	in.eprs[pl] = &AssignedEPR{Addr: addr, Params: params}
	return nil
}

// partnerOf is the binding an invoke on pl calls: the assigned endpoint,
// else deploy.xml's. A partner role with neither faults
// bpel:uninitializedPartnerRole.
func (in *Instance) partnerOf(pl *plan.PartnerLink, at xmldoc.Pos) (exchange.Partner, error) {
	if in.eprs != nil {
		if as := in.eprs[pl]; as != nil {
			if as.partner == nil {
				as.partner = in.host.Addressed(pl, as.Addr, as.Params, in.proc.PartnerAllow)
				as.partner = in.withSession(pl, pl.PartnerDesc.Addressing || len(as.Params) > 0, as.partner)
			}
			return as.partner, nil
		}
	}
	if pl.PartnerEP == nil {
		return nil, in.faultf(at, "uninitializedPartnerRole", "partnerLink %s: its partnerRole has no endpoint (deploy.xml binds none and none was assigned)", pl.Name)
	}
	if pl.Provided != nil && pl.PartnerEP.Addressing {
		return in.withSession(pl, true, in.proc.Partners[pl.Idx]), nil
	}
	return in.proc.Partners[pl.Idx], nil
}

// appendEPRs encodes the assigned endpoints, in partner link order.
func (in *Instance) appendEPRs(b []byte) []byte {
	idx := make([]int, 0, len(in.eprs))
	for pl := range in.eprs {
		idx = append(idx, pl.Idx)
	}
	sort.Ints(idx)
	b = binary.AppendUvarint(b, uint64(len(idx)))
	for _, i := range idx {
		b = binary.AppendUvarint(b, uint64(i))
		b = appendString(b, appendParams(in.eprs[in.proc.Plist[i]]))
	}
	return b
}

// ReadEPRs decodes what appendEPRs wrote.
func (in *Instance) ReadEPRs(r *persist.Reader) error {
	n := r.Uvarint()
	if r.Err != nil || n > uint64(len(in.proc.Plist)) {
		return ErrBadFrames
	}
	in.eprs = make(map[*plan.PartnerLink]*AssignedEPR, n)
	for i := uint64(0); i < n && r.Err == nil; i++ {
		idx, s := r.Uvarint(), r.String()
		if r.Err != nil || idx >= uint64(len(in.proc.Plist)) {
			return ErrBadFrames
		}
		s, params, err := readParams(s)
		if err != nil {
			return fmt.Errorf("%w (%w)", ErrBadFrames, err)
		}
		addr, err := eprText(s)
		if err != nil {
			return fmt.Errorf("%w (%w)", ErrBadFrames, err)
		}
		in.eprs[in.proc.Plist[idx]] = &AssignedEPR{Addr: addr, Params: params}
	}
	return r.Err
}
