package exchange

import "context"

// Idler is what a front door that bounds the exchanges running at once
// puts in an exchange's context (WithIdler): the runtime calls Idle
// before its goroutine waits for something other than the CPU (a
// partner's answer, a reply a later run gives, an instance a held
// message waits for) and Busy when it runs again, so that waiting
// exchanges do not count against the bound. Calls pair up and may come
// from several goroutines of one exchange (parallel partner calls).
type Idler interface {
	Idle()
	Busy()
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
