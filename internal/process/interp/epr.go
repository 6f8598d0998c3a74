package interp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/epr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

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
		return in.withMySession(pl, epr.ServiceRef(in.myRoleAddress(pl))), nil
	}
	if as := in.eprs[pl]; as != nil {
		return epr.WithParams(epr.ServiceRef(as.Addr), as.Params), nil
	}
	if pl.PartnerEP != nil && pl.PartnerEP.Address != "" {
		return epr.ServiceRef(pl.PartnerEP.Address), nil
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
			addr, params, err = epr.Parse(el)
		} else {
			addr, err = epr.CheckAddress(src.String())
		}
	} else {
		addr, err = epr.CheckAddress(src.String())
	}
	if in.undoing && in.undoWrite && (err == nil || errors.Is(err, epr.ErrNoAddress)) {
		old, had := in.eprs[pl]
		in.undo.Func(func() {
			if had {
				in.eprs[pl] = old
			} else {
				delete(in.eprs, pl)
			}
		})
	}
	if errors.Is(err, epr.ErrNoAddress) && pl.PartnerEP != nil && pl.PartnerEP.Address != "" {
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
	if pl.Provided != nil && in.sessionBound(pl) {
		return in.withSession(pl, true, in.proc.Partners[pl.Idx]), nil
	}
	return in.proc.Partners[pl.Idx], nil
}

// sessionBound reports whether calls over deploy.xml's binding of pl
// may carry the instance's session: its partner speaks WS-Addressing,
// or is a process of this engine (exchange.InProcess).
func (in *Instance) sessionBound(pl *plan.PartnerLink) bool {
	ip, local := in.proc.Partners[pl.Idx].(exchange.InProcess)
	return pl.PartnerEP != nil && (pl.PartnerEP.Addressing || local && ip.InProcess())
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
		b = appendString(b, epr.Encode(in.eprs[in.proc.Plist[i]].Addr, in.eprs[in.proc.Plist[i]].Params))
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
		s, params, err := epr.Decode(s)
		if err != nil {
			return fmt.Errorf("%w (%w)", ErrBadFrames, err)
		}
		addr, err := epr.CheckAddress(s)
		if err != nil {
			return fmt.Errorf("%w (%w)", ErrBadFrames, err)
		}
		in.eprs[in.proc.Plist[idx]] = &AssignedEPR{Addr: addr, Params: params}
	}
	return r.Err
}
