package exchange

import "context"

// Wait says what an idle exchange waits for.
type Wait uint8

const (
	// WaitPartner is a wait for a partner's answer (SOAP or REST): work
	// the exchange caused, which a front door bounding all exchanges in
	// flight keeps counting.
	WaitPartner Wait = iota
	// WaitMessage is a wait for another message to this server (the
	// reply a later run gives, the instance a held message waits for):
	// an exchange waiting so must not hold what that message needs to
	// be admitted.
	WaitMessage
	// WaitCommit is a wait for the store to make the exchange's
	// checkpoint durable (a group commit): I/O, like a partner's answer,
	// which a bound of the CPU work must not count.
	WaitCommit
)

// Idler is what a front door that bounds the exchanges running at once
// puts in an exchange's context (WithIdler): the runtime calls Idle
// before its goroutine waits for something other than the CPU (a
// partner's answer, a reply a later run gives, an instance a held
// message waits for) and Busy, with the same Wait, when it runs again,
// so that waiting exchanges do not count against a bound of the CPU
// work. Calls pair up and may come from several goroutines of one
// exchange (parallel partner calls).
type Idler interface {
	Idle(w Wait)
	Busy(w Wait)
}

type idlerKey struct{}

// WithIdler returns ctx carrying id.
func WithIdler(ctx context.Context, id Idler) context.Context {
	return context.WithValue(ctx, idlerKey{}, id)
}

// IdlerOf returns the Idler ctx carries, or nil.
func IdlerOf(ctx context.Context) Idler {
	id, _ := ctx.Value(idlerKey{}).(Idler)
	return id
}
