package interp

import (
	"fmt"
	"strings"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/corrval"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// KeyRouteShape is the route key of the uses in mask with their values (vals[i]
// for uses[i]). One set gives routeKey(p, op, set, value).
func KeyRouteShape(sh *plan.RouteShape, p *Version, op string, mask uint32, vals []string) string {
	var sets, values strings.Builder
	for i, u := range sh.Uses {
		if mask&(1<<i) == 0 {
			continue
		}
		if sets.Len() > 0 {
			sets.WriteByte(',')
			values.WriteByte(0x1d)
		}
		sets.WriteString(u.Set.Name)
		values.WriteString(vals[i])
	}
	return RouteKey(p, op, sets.String(), values.String())
}

// InstanceKeyRouteShape is the key under which in, waiting in an activity
// correlated as sh, is found: every use whose set in has initiated.
func InstanceKeyRouteShape(sh *plan.RouteShape, in *Instance, op string) (string, bool) {
	var mask uint32
	vals := make([]string, len(sh.Uses))
	for i, u := range sh.Uses {
		if v, ok := in.corr[u.Set.Name]; ok {
			mask |= 1 << i
			vals[i] = v
		}
	}
	for _, m := range sh.Masks {
		if m == mask {
			return KeyRouteShape(sh, in.proc, op, mask, vals), true
		}
	}
	return "", false
}

// RouteKey is the key under which an instance waiting for op, correlated
// on set with the given values, is found.
func RouteKey(p *Version, op, set, values string) string {
	return p.Name.String() + "\x1e" + op + "\x1e" + set + "\x1e" + values
}

// ApplyCorrelations checks or initiates the instance's correlation sets
// for a message m read with the in (received) or out (sent) extractors.
func (in *Instance) ApplyCorrelations(uses []*plan.CorrUse, m *exchange.Message, sent bool, at xmldoc.Pos) error {
	for _, u := range uses {
		ex := u.In
		if sent {
			ex = u.Out
		}
		if len(ex) == 0 {
			continue
		}
		v, err := corrval.Values(m, ex)
		if err != nil {
			return &faultValue{Name: BpelFault("correlationViolation"), Reason: fmt.Sprintf("set %s: %v", u.Set.Name, err)}
		}
		have, set := in.corr[u.Set.Name]
		switch {
		case u.Initiate == "yes" && set:
			return &faultValue{Name: BpelFault("correlationViolation"), Reason: fmt.Sprintf("correlation set %s is already initiated (at %s)", u.Set.Name, at)}
		case u.Initiate == "no" && !set:
			return &faultValue{Name: BpelFault("correlationViolation"), Reason: fmt.Sprintf("correlation set %s is not initiated (at %s)", u.Set.Name, at)}
		case set && have != v:
			return &faultValue{Name: BpelFault("correlationViolation"), Reason: fmt.Sprintf("message does not match correlation set %s (at %s)", u.Set.Name, at)}
		case !set:
			if in.corr == nil {
				in.corr = map[string]string{}
			}
			in.corr[u.Set.Name] = v
			if in.EvOn(events.Correlation) {
				in.Emit(events.Event{Kind: events.CorrelationSetInitialized, CorrelationSet: u.Set.Name, Value: v, Position: at.String()})
			}
		}
	}
	return nil
}
