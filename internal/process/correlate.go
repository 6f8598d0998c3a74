package process

import (
	"fmt"
	"strings"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/bpel"
)

// values reads the correlation values of u's set from m with the given
// extractors, as one key string.
func corrValues(m *exchange.Message, ex []*propExtract) (string, error) {
	var b strings.Builder
	for i, pe := range ex {
		part := m.Part(pe.part)
		if part == nil {
			return "", fmt.Errorf("message has no part %q for property %s", pe.part, pe.prop)
		}
		var v string
		if pe.query == nil {
			v = stringValue(part)
		} else {
			r := pe.query.eval(&docTree{root: part}, part)
			var buf [1]node
			nodes, ok := nodesIn(r, &buf)
			if ok && len(nodes) != 1 {
				return "", fmt.Errorf("property %s: alias query selects %d nodes, want one", pe.prop, len(nodes))
			}
			v = xpathString(r)
		}
		if i > 0 {
			b.WriteByte(0x1f)
		}
		b.WriteString(strings.TrimSpace(v))
	}
	return b.String(), nil
}

// keyRouteShape is the route key of the uses in mask with their values (vals[i]
// for uses[i]). One set gives routeKey(p, op, set, value).
func keyRouteShape(sh *routeShape, p *Process, op string, mask uint32, vals []string) string {
	var sets, values strings.Builder
	for i, u := range sh.uses {
		if mask&(1<<i) == 0 {
			continue
		}
		if sets.Len() > 0 {
			sets.WriteByte(',')
			values.WriteByte(0x1d)
		}
		sets.WriteString(u.set.name)
		values.WriteString(vals[i])
	}
	return routeKey(p, op, sets.String(), values.String())
}

// instanceKeyRouteShape is the key under which in, waiting in an activity
// correlated as sh, is found: every use whose set in has initiated.
func instanceKeyRouteShape(sh *routeShape, in *instance, op string) (string, bool) {
	var mask uint32
	vals := make([]string, len(sh.uses))
	for i, u := range sh.uses {
		if v, ok := in.corr[u.set.name]; ok {
			mask |= 1 << i
			vals[i] = v
		}
	}
	for _, m := range sh.masks {
		if m == mask {
			return keyRouteShape(sh, in.p, op, mask, vals), true
		}
	}
	return "", false
}

// routeKey is the key under which an instance waiting for op, correlated
// on set with the given values, is found.
func routeKey(p *Process, op, set, values string) string {
	return p.Name.String() + "\x1e" + op + "\x1e" + set + "\x1e" + values
}

// applyCorrelations checks or initiates the instance's correlation sets
// for a message m read with the in (received) or out (sent) extractors.
func (in *instance) applyCorrelations(uses []*corrUse, m *exchange.Message, sent bool, at bpel.Pos) error {
	for _, u := range uses {
		ex := u.in
		if sent {
			ex = u.out
		}
		if len(ex) == 0 {
			continue
		}
		v, err := corrValues(m, ex)
		if err != nil {
			return &faultValue{name: bpelFault("correlationViolation"), reason: fmt.Sprintf("set %s: %v", u.set.name, err)}
		}
		have, set := in.corr[u.set.name]
		switch {
		case u.initiate == "yes" && set:
			return &faultValue{name: bpelFault("correlationViolation"), reason: fmt.Sprintf("correlation set %s is already initiated (at %s)", u.set.name, at)}
		case u.initiate == "no" && !set:
			return &faultValue{name: bpelFault("correlationViolation"), reason: fmt.Sprintf("correlation set %s is not initiated (at %s)", u.set.name, at)}
		case set && have != v:
			return &faultValue{name: bpelFault("correlationViolation"), reason: fmt.Sprintf("message does not match correlation set %s (at %s)", u.set.name, at)}
		case !set:
			if in.corr == nil {
				in.corr = map[string]string{}
			}
			in.corr[u.set.name] = v
			if in.evOn(events.Correlation) {
				in.emit(events.Event{Kind: events.CorrelationSetInitialized, CorrelationSet: u.set.name, Value: v, Position: at.String()})
			}
		}
	}
	return nil
}
