package process

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
