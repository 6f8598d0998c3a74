package interp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/epr"
	"github.com/orchd/orchd/internal/process/plan"
)

// Session-based implicit correlation, as Apache ODE's "stateful exchange"
// (its MagicSession samples) did, in its minimal form:
//
//   - A call on a partner link that has a myRole too, to a partner that
//     speaks WS-Addressing (Endpoint.Addressing, or an assigned EPR with
//     reference parameters), carries ODE's callback header blocks, in
//     both of ODE's namespaces: <odesession:callback> holding the
//     myRole's wsa:Address and <odesession:session> with the instance's
//     session identifier: a random token of 128 bits (sessionID), not
//     the instance id, which for an in-memory instance is a counter any
//     client could guess and so steer a callback into another client's
//     instance.
//   - A request carrying <odesession:session> (or ODE's older
//     <intalio:session>) as a header block reaches the instance of that
//     identifier waiting at a receive or onMessage of its operation that
//     has no correlation set, before correlation-less routing picks
//     whichever instance waits there.
//
// An instance waiting at such an activity, once it handed out its
// session, is registered under the session key (RouteKeys): in memory as
// well as the plain one, in a persistent instance's checkpoint instead
// of it (the store binds a key to one instance, so under the plain key
// a second instance could not wait there). A persistent instance keeps
// its session in its frames (FramesSession). The EPR <from partnerLink
// endpointReference="myRole"/> yields carries the session identifier as
// a reference parameter (in ODE's namespace) when the process has such
// an activity on that myRole, so a WS-Addressing partner calling back
// with the EPR sends it as a header block. A one-way call on such a
// link, when the process waits for a message of its myRole (a callback),
// carries a wsa:ReplyTo: the myRole's address, and the session as a
// reference parameter when that message is routed without correlation
// sets (callbackEPR). A message carrying ODE's callback header block
// makes its endpoint the partner role's of the link it came on
// (takeCallback), so that the process calls its caller back with the
// caller's session. A call to a process of the same engine
// (exchange.InProcess) carries the session as a WS-Addressing partner's
// does.
const (
	nsODESession     = "http://www.apache.org/ode/type/session"
	nsIntalioSession = "http://www.intalio.com/type/session"
)

// sessionSep separates a correlation-less route key from the session
// identifier of the session key built on it.
const sessionSep = "\x1esession="

// SessionKey is the route key of an instance with session identifier
// sid waiting where the correlation-less key plain routes.
func SessionKey(plain, sid string) string { return plain + sessionSep + sid }

// SessionOf returns the session identifier a request's header blocks
// carry (ODE's namespace first, then Intalio's), or "".
func SessionOf(headers []*etree.Element) string {
	found := ""
	for _, h := range headers {
		if h.Tag != "session" {
			continue
		}
		switch h.NamespaceURI() {
		case nsODESession:
			return strings.TrimSpace(h.Text())
		case nsIntalioSession:
			if found == "" {
				found = strings.TrimSpace(h.Text())
			}
		}
	}
	return found
}

// sessionRouteKey is the session key of in waiting at ib, when ib is
// routed without correlation sets and the instance has handed out its
// session identifier (nobody could send one it never did).
func (in *Instance) sessionRouteKey(ib *plan.Inbound, plain string) (string, bool) {
	if len(ib.Route.Uses) != 0 || in.session == nil {
		return "", false
	}
	return SessionKey(plain, *in.session), true
}

// sessionBytes is the size of a session identifier's randomness: 128
// bits, as RFC 4122 version 4 UUIDs and session cookies have.
const sessionBytes = 16

// sessionID returns the instance's session identifier, minting it (from
// crypto/rand) the first time it is handed out.
func (in *Instance) sessionID() string {
	if in.session == nil {
		var b [sessionBytes]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go 1.24)
		in.SetSession(hex.EncodeToString(b[:]))
	}
	return *in.session
}

// Session is the instance's session identifier, "" when it has handed
// out none.
func (in *Instance) Session() string {
	if in.session == nil {
		return ""
	}
	return *in.session
}

// SetSession sets the instance's session identifier (a decoded
// instance's; "" for none).
func (in *Instance) SetSession(s string) {
	if s == "" {
		in.session = nil
		return
	}
	in.session = &s
}

// sessionPartner is a partner whose calls carry the callback header
// blocks of the instance's session, and, when the process waits for a
// callback on the partner link, its one-way calls a wsa:ReplyTo.
type sessionPartner struct {
	exchange.Partner
	headers []*etree.Element
	// replyTo is the myRole's EPR the partner is to call back at (nil
	// when the process takes no message on that myRole once started).
	replyTo *exchange.EndpointReference
}

// Invoke adds the session's header blocks to the call, and its ReplyTo
// to a one-way call: the reply of a request-response call comes on the
// HTTP response (anonymous ReplyTo), never as a callback.
func (s *sessionPartner) Invoke(ctx context.Context, c *exchange.Call) (*exchange.Message, error) {
	cc := *c
	cc.Headers = append(append([]*etree.Element(nil), s.headers...), c.Headers...)
	if s.replyTo != nil && c.ReplyTo == nil && c.Operation.OneWay() {
		cc.ReplyTo = s.replyTo
	}
	return s.Partner.Invoke(ctx, &cc)
}

// Address implements exchange.Addressed when the partner does.
func (s *sessionPartner) Address() string {
	if a, ok := s.Partner.(exchange.Addressed); ok {
		return a.Address()
	}
	return ""
}

// withSession wraps partner, the binding of pl's partner role, so that
// its calls carry the instance's callback header blocks, when pl has a
// myRole and the partner speaks WS-Addressing (addressing); otherwise it
// returns partner.
func (in *Instance) withSession(pl *plan.PartnerLink, addressing bool, partner exchange.Partner) exchange.Partner {
	if partner == nil || pl.Provided == nil || !addressing {
		return partner
	}
	hs, replyTo := in.sessionCall(pl)
	return &sessionPartner{Partner: partner, headers: hs, replyTo: replyTo}
}

// sessionCall is what a call over pl carries of the instance's session
// (pl has a myRole and its partner speaks WS-Addressing): ODE's and
// Intalio's callback header blocks, and the ReplyTo of a one-way call
// when the process waits for a callback there (callbackEPR).
func (in *Instance) sessionCall(pl *plan.PartnerLink) ([]*etree.Element, *exchange.EndpointReference) {
	addr := in.myRoleAddress(pl)
	hs := make([]*etree.Element, 0, 2)
	for _, ns := range []string{nsODESession, nsIntalioSession} {
		cb := etree.NewElement("s:callback")
		cb.CreateAttr("xmlns:s", ns)
		a := cb.CreateElement("wsa:Address")
		a.CreateAttr("xmlns:wsa", epr.NSWSA)
		a.SetText(addr)
		cb.CreateElement("s:session").SetText(in.sessionID())
		hs = append(hs, cb)
	}
	return hs, in.callbackEPR(pl, addr)
}

// callbackEPR is the wsa:ReplyTo of pl's one-way calls, at addr (the
// myRole's address), when the process waits for a callback there: a
// receive or onMessage of an operation of pl's myRole in a running
// instance. Its reference parameters carry the instance's session
// (odesession:session) when such a message is routed without
// correlation sets (sessionRouted), so that the callback reaches this
// instance by that header alone; otherwise the correlation sets route
// it, and the EPR is the address alone. Nil when nothing waits there.
func (in *Instance) callbackEPR(pl *plan.PartnerLink, addr string) *exchange.EndpointReference {
	waits := false
	for _, op := range pl.Provided.Operations {
		if len(in.proc.Routes[op.Name]) > 0 {
			waits = true
			break
		}
	}
	if !waits {
		return nil
	}
	ref := &exchange.EndpointReference{Address: addr}
	if in.sessionRouted(pl) {
		sess := etree.NewElement("odesession:session")
		sess.CreateAttr("xmlns:odesession", nsODESession)
		sess.SetText(in.sessionID())
		ref.ReferenceParams = []*etree.Element{sess}
	}
	return ref
}

// withMySession adds the instance's session identifier to the service-ref
// sr of pl's myRole as a wsa:ReferenceParameters child, when a message
// for an operation of that myRole is routed without correlation sets
// (sessionRouted); otherwise it returns sr as it is.
func (in *Instance) withMySession(pl *plan.PartnerLink, sr *etree.Element) *etree.Element {
	if !in.sessionRouted(pl) {
		return sr
	}
	sess := etree.NewElement("odesession:session")
	sess.CreateAttr("xmlns:odesession", nsODESession)
	sess.SetText(in.sessionID())
	return epr.WithParams(sr, []*etree.Element{sess})
}

// sessionRouted reports whether an operation of pl's myRole is received
// somewhere without correlation sets (other than to start an instance).
func (in *Instance) sessionRouted(pl *plan.PartnerLink) bool {
	if pl.Provided == nil {
		return false
	}
	for _, op := range pl.Provided.Operations {
		for _, sh := range in.proc.Routes[op.Name] {
			if len(sh.Uses) == 0 {
				return true
			}
		}
	}
	return false
}

// takeCallback makes the endpoint in ODE's callback header block that a
// message on pl carried (<odesession:callback>, or Intalio's, holding a
// wsa:Address and the caller's session) pl's partner role endpoint, as
// ODE did, when pl has a partner role the process has not assigned: a
// call back over pl then goes to that address with the caller's session
// as an odesession:session header block, and reaches the caller's
// instance.
func (in *Instance) takeCallback(pl *plan.PartnerLink, headers []*etree.Element) {
	if pl == nil || pl.PartnerPT == nil || len(headers) == 0 || in.eprs[pl] != nil {
		return
	}
	for _, ns := range []string{nsODESession, nsIntalioSession} {
		for _, h := range headers {
			a := h.FindElement("Address")
			if h.Tag != "callback" || h.NamespaceURI() != ns || a == nil {
				continue
			}
			addr, err := epr.CheckAddress(strings.TrimSpace(a.Text()))
			if err != nil {
				return
			}
			as := &AssignedEPR{Addr: addr}
			if s := h.FindElement("session"); s != nil && strings.TrimSpace(s.Text()) != "" {
				sess := etree.NewElement("odesession:session")
				sess.CreateAttr("xmlns:odesession", nsODESession)
				sess.SetText(strings.TrimSpace(s.Text()))
				as.Params = []*etree.Element{sess}
			}
			if in.eprs == nil {
				in.eprs = map[*plan.PartnerLink]*AssignedEPR{}
			}
			in.eprs[pl] = as
			return
		}
	}
}

// AdoptLegacySession gives an instance decoded from frames without a
// session identifier its id as its session, when it is registered under
// a session key built on its id: it was stored before session
// identifiers were tokens, its partners hold that id, and their
// callbacks keep reaching it after its next checkpoint. (Persistent ids
// are not a counter: keeping it guesses nothing new.)
func (in *Instance) AdoptLegacySession() {
	for _, k := range in.regRoutes {
		if in.id != "" && strings.HasSuffix(k, sessionSep+in.id) {
			in.SetSession(in.id)
			return
		}
	}
}
