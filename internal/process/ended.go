package process

import (
	"sync"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/interp"
)

// endedFaults remembers, for a while, the correlation values of instances
// that ended with an uncaught fault, and the fault: a request that comes
// for such an instance afterwards (it was on its way, or the client did
// not know yet) is answered with the fault that ended it, by its name,
// rather than "no instance". Bounded in entries and in time; per engine
// (a node of a cluster knows the instances that ended on it).
type endedFaults struct {
	mu    sync.Mutex
	byKey map[string]endedFault
	// order holds the keys oldest first, to forget the oldest.
	order []string
}

type endedFault struct {
	f  *exchange.Fault
	at time.Time
}

const (
	// endedKeep is how long an ended instance's fault answers requests.
	endedKeep = time.Minute
	// endedMax bounds the instances remembered.
	endedMax = 4096
)

func endedKey(p *interp.Version, set, values string) string {
	return p.Name.String() + "\x1e" + set + "=" + values
}

// note remembers that the instance of p with initiated sets corr ended
// with f.
func (t *endedFaults) note(p *interp.Version, corr map[string]string, f *exchange.Fault, now time.Time) {
	if len(corr) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byKey == nil {
		t.byKey = map[string]endedFault{}
	}
	for set, v := range corr {
		k := endedKey(p, set, v)
		if _, ok := t.byKey[k]; !ok {
			t.order = append(t.order, k)
		}
		t.byKey[k] = endedFault{f: f, at: now}
	}
	for len(t.order) > endedMax {
		delete(t.byKey, t.order[0])
		t.order = t.order[1:]
	}
}

// lookup is the fault that ended a recent instance of p whose correlation
// values are among tried ("set=values", as shapeValues notes them), or nil.
func (t *endedFaults) lookup(p *interp.Version, tried []string, now time.Time) *exchange.Fault {
	if len(tried) == 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.byKey) == 0 {
		return nil
	}
	for len(t.order) > 0 {
		// Forget what is too old (the keys are oldest first, but a key
		// noted again keeps its first place: check its own time).
		k := t.order[0]
		if en, ok := t.byKey[k]; ok && now.Sub(en.at) < endedKeep {
			break
		}
		delete(t.byKey, k)
		t.order = t.order[1:]
	}
	prefix := p.Name.String() + "\x1e"
	for _, tv := range tried {
		if en, ok := t.byKey[prefix+tv]; ok && now.Sub(en.at) < endedKeep {
			return en.f
		}
	}
	return nil
}

// answerEnded answers a request-response ex that found no instance with
// the fault of a recently faulted instance it was meant for (when only is
// set, only if that fault is named only); it reports whether it did.
func (e *Engine) answerEnded(p *interp.Version, ex *exchange.Exchange, tried []string, only exchange.QName) bool {
	if ex.Operation.OneWay() || ex.Respond == nil || len(tried) == 0 {
		return false // (every request of a start operation comes here: no clock read, no lock)
	}
	f := e.ended.lookup(p, tried, e.now())
	if f == nil || (only != exchange.QName{} && f.Name != only) {
		return false
	}
	ex.Respond(nil, &exchange.Fault{Name: f.Name, Message: interp.CopyMessage(f.Message), Reason: "the instance this request is for ended with this fault: " + f.Reason})
	return true
}
