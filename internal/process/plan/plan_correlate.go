package plan

import (
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/expr"
)

// CorrSet is a declared correlation set.
type CorrSet struct {
	Name  string
	Props []qname
}

// CorrUse is one <correlation> of a messaging activity: which set, how it
// is initiated, and how to read the set's properties from the message the
// activity receives (in) or, for invoke, sends (out) and receives (in).
type CorrUse struct {
	Set      *CorrSet
	Initiate string // "yes", "join" or "no"
	Pattern  string // invoke only: "request", "response", "request-response"
	In, Out  []*PropExtract
}

// PropExtract reads one property from a message: the part, then the alias
// query relative to the part.
type PropExtract struct {
	Prop  qname
	Part  string
	Query *expr.Expr
	// Missing, when set, says that no propertyAlias maps Prop for the
	// message (deployed under compatibility mode ODE, which did not
	// check, SA00021): reading the property is
	// bpel:correlationViolation with this reason.
	Missing string
}

// RouteShape is one combination of correlation sets (the uses with
// initiate "no" or "join" of an activity) by which a message finds a
// waiting instance. A message must match every initiated set of the
// activity it goes to (9.2), so an instance is registered under one key
// holding all of them, never under each set alone: two instances sharing
// one set's value but not another's are told apart.
type RouteShape struct {
	Uses []*CorrUse
	// Masks are the subsets of uses a waiting instance can be registered
	// under, largest first: every "no" use, and any of the "join" uses
	// (a join set may not be initiated yet when the activity waits).
	Masks []uint32
}

// Inbound is what receive and onMessage share: the operation they take
// and where the message goes.
type Inbound struct {
	Pl    *PartnerLink
	Op    *exchange.Operation
	V     *expr.Var
	Corrs []*CorrUse
	// Route is how a message finds the instance waiting here (nil when
	// no correlation routes it).
	Route     *RouteShape
	FromParts []PartMap
	// Mex is the messageExchange attribute: pairs the request with its
	// reply when one operation has several open at once.
	Mex string
}

// maxJoinRoutes bounds how many "join" sets of one activity take part in
// its route keys (2^n subsets are tried per message).
const maxJoinRoutes = 4

func sameSets(a, b []*CorrUse) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Set != b[i].Set || a[i].Initiate != b[i].Initiate {
			return false
		}
	}
	return true
}
