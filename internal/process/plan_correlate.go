package process

import (
	"github.com/orchd/orchd/internal/exchange"
)

// corrSet is a declared correlation set.
type corrSet struct {
	name  string
	props []qname
}

// corrUse is one <correlation> of a messaging activity: which set, how it
// is initiated, and how to read the set's properties from the message the
// activity receives (in) or, for invoke, sends (out) and receives (in).
type corrUse struct {
	set      *corrSet
	initiate string // "yes", "join" or "no"
	pattern  string // invoke only: "request", "response", "request-response"
	in, out  []*propExtract
}

// propExtract reads one property from a message: the part, then the alias
// query relative to the part.
type propExtract struct {
	prop  qname
	part  string
	query *expr
}

// routeShape is one combination of correlation sets (the uses with
// initiate "no" or "join" of an activity) by which a message finds a
// waiting instance. A message must match every initiated set of the
// activity it goes to (9.2), so an instance is registered under one key
// holding all of them, never under each set alone: two instances sharing
// one set's value but not another's are told apart.
type routeShape struct {
	uses []*corrUse
	// masks are the subsets of uses a waiting instance can be registered
	// under, largest first: every "no" use, and any of the "join" uses
	// (a join set may not be initiated yet when the activity waits).
	masks []uint32
}

// inbound is what receive and onMessage share: the operation they take
// and where the message goes.
type inbound struct {
	pl    *partnerLink
	op    *exchange.Operation
	v     *variable
	corrs []*corrUse
	// route is how a message finds the instance waiting here (nil when
	// no correlation routes it).
	route     *routeShape
	fromParts []partMap
	// mex is the messageExchange attribute: pairs the request with its
	// reply when one operation has several open at once.
	mex string
}

// maxJoinRoutes bounds how many "join" sets of one activity take part in
// its route keys (2^n subsets are tried per message).
const maxJoinRoutes = 4

func sameSets(a, b []*corrUse) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].set != b[i].set || a[i].initiate != b[i].initiate {
			return false
		}
	}
	return true
}
