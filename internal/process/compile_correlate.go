package process

import (
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/wsdl"
)

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
			if !c.w.Props[q] {
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
		a, ok := c.w.Aliases[wsdl.AliasKey{Prop: prop, MessageType: m.Name}]
		if !ok {
			c.errorf(at, "no propertyAlias for property %s and message %s (correlation set %s)", prop, m.Name, cs.name)
			continue
		}
		pe := &propExtract{prop: prop, part: a.Part}
		if a.Query != "" {
			ns := map[string]string{}
			q, err := renamePrefixes(strings.TrimPrefix(a.Query, "/"), a.Ns, ns)
			if err == nil {
				pe.query, err = newExpr(a.Query, q, ns)
			}
			if err != nil {
				c.errs.Add(a.Pos, "propertyAlias", "query %q: %v", a.Query, err)
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
			// BPEL4WS 1.1's names (out, in, out-in) are what ODE also
			// accepted in 2.0 processes.
			switch u.pattern {
			case "request", "out":
				u.out = c.extractors(x, cs, out)
			case "response", "in":
				u.in = c.extractors(x, cs, in)
			case "request-response", "out-in":
				u.out = c.extractors(x, cs, out)
				u.in = c.extractors(x, cs, in)
			case "":
				// SA00046 wants a pattern on a request-response invoke's
				// correlation; ODE compiled it without one and applied it
				// to the outgoing message, as for a one-way invoke (which
				// must have none).
				u.out = c.extractors(x, cs, out)
			default:
				c.errorf(x, "a correlation on <invoke> has pattern %q; want request, response or request-response", u.pattern)
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

// registerInbound records how a message for ib's operation finds an
// instance waiting in ib, so Dispatch can compute route keys from it.
func (c *compiler) registerInbound(ib *inbound, start bool) {
	if ib.op == nil {
		return
	}
	sh := &routeShape{}
	for _, u := range ib.corrs {
		if u.initiate != "yes" {
			sh.uses = append(sh.uses, u)
		}
	}
	// A start activity with no routing correlation only creates
	// instances. Any other activity is routed by its sets; with none (as
	// ODE allowed) a message for its operation goes to an instance waiting
	// there, whichever it is, and an initiate="yes" on a set already
	// initiated is bpel:correlationViolation at run time.
	if len(sh.uses) > 0 || !start {
		ib.route = c.p.addRoute(ib.op.Name, sh)
	}
}
