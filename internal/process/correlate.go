package process

import (
	"fmt"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/bpel"
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

// inbound is what receive and onMessage share: the operation they take
// and where the message goes.
type inbound struct {
	pl        *partnerLink
	op        *exchange.Operation
	v         *variable
	corrs     []*corrUse
	fromParts []partMap
	// mex is the messageExchange attribute: pairs the request with its
	// reply when one operation has several open at once.
	mex string
}

// compileCorrelationSets reads the process's <correlationSets>.
func (c *compiler) correlationSets(e *etree.Element) {
	for _, ce := range e.ChildElements() {
		if !isBPEL(ce) || ce.Tag != "correlationSet" {
			continue
		}
		cs := &corrSet{name: ce.SelectAttrValue("name", "")}
		for _, p := range strings.Fields(ce.SelectAttrValue("properties", "")) {
			sp, local, err := resolveIn(ce, p)
			if err != nil {
				c.errorf(ce, "properties: %v", err)
				continue
			}
			q := qname{Space: sp, Local: local}
			if !c.w.props[q] {
				c.errorf(ce, "property %s is not defined in any imported WSDL", q)
			}
			cs.props = append(cs.props, q)
		}
		if len(cs.props) == 0 {
			c.errorf(ce, "correlationSet %q has no properties", cs.name)
		}
		if c.p.corrSets == nil {
			c.p.corrSets = map[string]*corrSet{}
		}
		c.p.corrSets[cs.name] = cs
	}
}

// extractors compiles how to read the properties of cs from messages of
// type m, through the WSDL's propertyAliases.
func (c *compiler) extractors(at *etree.Element, cs *corrSet, m *exchange.MessageDesc) []*propExtract {
	if m == nil {
		return nil
	}
	var out []*propExtract
	for _, prop := range cs.props {
		a, ok := c.w.aliases[aliasKey{prop: prop, messageType: m.Name}]
		if !ok {
			c.errorf(at, "no propertyAlias for property %s and message %s (correlation set %s)", prop, m.Name, cs.name)
			continue
		}
		pe := &propExtract{prop: prop, part: a.part}
		if a.query != "" {
			ns := map[string]string{}
			q, err := renamePrefixes(strings.TrimPrefix(a.query, "/"), a.ns, ns)
			if err == nil {
				pe.query, err = newExpr(a.query, q, ns)
			}
			if err != nil {
				c.errs.add(a.pos, "propertyAlias", "query %q: %v", a.query, err)
				continue
			}
			pe.query.fast = compileSimplePath(q, c, ns, true)
		}
		out = append(out, pe)
	}
	return out
}

// correlations compiles an activity's <correlations>. in and out are the
// messages the activity receives and sends (either may be nil).
func (c *compiler) correlations(e *etree.Element, in, out *exchange.MessageDesc) []*corrUse {
	ce := bpelChild(e, "correlations")
	if ce == nil {
		return nil
	}
	var uses []*corrUse
	for _, x := range ce.ChildElements() {
		if !isBPEL(x) || x.Tag != "correlation" {
			continue
		}
		name := x.SelectAttrValue("set", "")
		cs, ok := c.p.corrSets[name]
		if !ok {
			c.errorf(x, "unknown correlation set %q", name)
			continue
		}
		u := &corrUse{set: cs, initiate: x.SelectAttrValue("initiate", "no"), pattern: x.SelectAttrValue("pattern", "")}
		switch u.initiate {
		case "yes", "join", "no":
		default:
			c.errorf(x, "initiate must be yes, join or no, not %q", u.initiate)
		}
		if e.Tag == "invoke" {
			switch u.pattern {
			case "request":
				u.out = c.extractors(x, cs, out)
			case "response":
				u.in = c.extractors(x, cs, in)
			case "request-response":
				u.out = c.extractors(x, cs, out)
				u.in = c.extractors(x, cs, in)
			case "":
				if in != nil {
					c.errorf(x, "a correlation on a request-response <invoke> needs pattern request, response or request-response")
					break
				}
				// A one-way invoke's correlation has no pattern (SA00046):
				// it applies to the outgoing message.
				u.out = c.extractors(x, cs, out)
			default:
				c.errorf(x, "a correlation on <invoke> needs pattern request, response or request-response")
			}
		} else {
			u.in = c.extractors(x, cs, in)
			u.out = c.extractors(x, cs, out)
		}
		uses = append(uses, u)
	}
	return uses
}

// compileInbound compiles the parts receive and onMessage share.
func (c *compiler) inbound(e *etree.Element, varAttr string) inbound {
	var ib inbound
	ib.pl, ib.op = c.partnerOp(e, true)
	if ib.op == nil {
		return ib
	}
	ib.v = c.optVar(e, varAttr, ib.op.Input)
	ib.corrs = c.correlations(e, ib.op.Input, nil)
	ib.fromParts = c.compileParts(e, "fromParts", ib.op.Input)
	ib.mex = e.SelectAttrValue("messageExchange", "")
	return ib
}

// registerRoute records that op is taken by a waiting activity correlated
// on the corr uses, so Dispatch can compute route keys from a message.
func (c *compiler) registerInbound(ib *inbound, start bool, e *etree.Element) {
	if ib.op == nil {
		return
	}
	routed := false
	for _, u := range ib.corrs {
		if u.initiate != "yes" {
			c.p.routes[ib.op.Name] = append(c.p.routes[ib.op.Name], u)
			routed = true
		}
	}
	if !start && !routed {
		c.errorf(e, "a %s into a running instance needs a <correlation> with initiate=\"no\" or \"join\" to be routed", e.Tag)
	}
}

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
			nodes, ok := r.([]node)
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
		}
	}
	return nil
}
