package wssec

import (
	"fmt"
	"sync/atomic"
)

// Gate bounds the bcrypt comparisons of PasswordText checks running at
// once, over every Authenticator that shares it (orchd serve's
// --wssec-max-checks): each costs tens of milliseconds of CPU, and a
// client needs no password to make the server run one. A check that
// finds every slot taken is refused at once (an AuthError whose
// Unavailable is true: the front door answers HTTP 503) and counted.
// A token already verified within textTTL, a PasswordDigest and a
// {PLAIN} secret that matches need no slot. A nil *Gate bounds nothing.
type Gate struct {
	slots   chan struct{}
	refused atomic.Uint64
}

// NewGate returns a Gate of n slots (n < 1: one).
func NewGate(n int) *Gate {
	return &Gate{slots: make(chan struct{}, max(n, 1))}
}

// Size is the number of slots (0 for nil: no bound).
func (g *Gate) Size() int {
	if g == nil {
		return 0
	}
	return cap(g.slots)
}

// Refused is how many checks found every slot taken.
func (g *Gate) Refused() uint64 {
	if g == nil {
		return 0
	}
	return g.refused.Load()
}

// run runs f in a slot, or returns a busy AuthError for user.
func (g *Gate) run(user string, f func() bool) (bool, error) {
	if g == nil {
		return f(), nil
	}
	select {
	case g.slots <- struct{}{}:
	default:
		g.refused.Add(1)
		return false, &AuthError{User: user, Busy: true,
			Reason: fmt.Sprintf("%d password checks already running (--wssec-max-checks)", cap(g.slots))}
	}
	defer func() { <-g.slots }()
	return f(), nil
}
