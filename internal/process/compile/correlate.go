package compile

import (
	"fmt"
	"strings"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/check"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/wsdl"
)

// compileCorrelationSets reads the process's <correlationSets>.
func (c *compiler) correlationSets(sets *ast.CorrelationSets) {
	for _, n := range sets.CorrelationSets {
		ce := &n.Element
		cs := &plan.CorrSet{Name: ce.AttrOr("name", "")}
		for _, p := range strings.Fields(ce.AttrOr("properties", "")) {
			sp, local, err := resolveIn(ce, p)
			if err != nil {
				c.errorf(ce, "properties: %v", err)
				continue
			}
			q := exchange.QName{Space: sp, Local: local}
			if !c.w.Props[q] {
				c.errorf(ce, "property %s is not defined in any imported WSDL", q)
			}
			cs.Props = append(cs.Props, q)
		}
		if len(cs.Props) == 0 {
			c.errorf(ce, "correlationSet %q has no properties", cs.Name)
		}
		if c.p.CorrSets == nil {
			c.p.CorrSets = map[string]*plan.CorrSet{}
		}
		c.p.CorrSets[cs.Name] = cs
	}
}

// extractors compiles how to read the properties of cs from messages of
// type m, through the WSDL's propertyAliases.
func (c *compiler) extractors(at *ast.Element, cs *plan.CorrSet, m *exchange.MessageDesc) []*plan.PropExtract {
	if m == nil {
		return nil
	}
	var out []*plan.PropExtract
	for _, prop := range cs.Props {
		a, ok := c.w.Aliases[wsdl.AliasKey{Prop: prop, MessageType: m.Name}]
		if !ok {
			if c.compat == check.ODE {
				// ODE did not check (SA00021): the message that needs
				// the alias faults when it is sent or received.
				out = append(out, &plan.PropExtract{Prop: prop, Missing: fmt.Sprintf("no propertyAlias maps property %s for message %s (correlation set %s at %s, deployed with compat ode); add a vprop:propertyAlias for that message", prop, m.Name, cs.Name, c.pos(at))})
				continue
			}
			c.errorf(at, "no propertyAlias for property %s and message %s (correlation set %s)", prop, m.Name, cs.Name)
			continue
		}
		pe := &plan.PropExtract{Prop: prop, Part: a.Part}
		if a.Query != "" {
			ns := map[string]string{}
			q, err := expr.RenamePrefixes(strings.TrimPrefix(a.Query, "/"), a.Ns, ns)
			if err == nil {
				pe.Query, err = expr.NewExpr(a.Query, q, ns)
			}
			if err != nil {
				c.errs.Add(a.Pos, "propertyAlias", "query %q: %v", a.Query, err)
				continue
			}
			pe.Query.Fast = expr.CompileSimplePath(q, c, ns, true)
		}
		out = append(out, pe)
	}
	return out
}

// correlations compiles an activity's <correlations>. in and out are the
// messages the activity receives and sends (either may be nil).
func (c *compiler) correlations(e *ast.Element, in, out *exchange.MessageDesc) []*plan.CorrUse {
	cx := e.Child("correlations")
	if cx == nil {
		return nil
	}
	ce := cx.Node().(*ast.Correlations)
	_, invoke := e.Node().(*ast.Invoke)
	var uses []*plan.CorrUse
	for _, n := range ce.Correlations {
		x := &n.Element
		name := x.AttrOr("set", "")
		cs, ok := c.p.CorrSets[name]
		if !ok {
			c.errorf(x, "unknown correlation set %q", name)
			continue
		}
		u := &plan.CorrUse{Set: cs, Initiate: x.AttrOr("initiate", "no"), Pattern: x.AttrOr("pattern", "")}
		switch u.Initiate {
		case "yes", "join", "no":
		default:
			c.errorf(x, "initiate must be yes, join or no, not %q", u.Initiate)
		}
		if invoke {
			// BPEL4WS 1.1's names (out, in, out-in) are what ODE also
			// accepted in 2.0 processes.
			switch u.Pattern {
			case "request", "out":
				u.Out = c.extractors(x, cs, out)
			case "response", "in":
				u.In = c.extractors(x, cs, in)
			case "request-response", "out-in":
				u.Out = c.extractors(x, cs, out)
				u.In = c.extractors(x, cs, in)
			case "":
				// SA00046 wants a pattern on a request-response invoke's
				// correlation; ODE compiled it without one and applied it
				// to the outgoing message, as for a one-way invoke (which
				// must have none).
				u.Out = c.extractors(x, cs, out)
			default:
				c.errorf(x, "a correlation on <invoke> has pattern %q; want request, response or request-response", u.Pattern)
			}
		} else {
			u.In = c.extractors(x, cs, in)
			u.Out = c.extractors(x, cs, out)
		}
		uses = append(uses, u)
	}
	return uses
}

// compileInbound compiles the parts receive and onMessage share.
func (c *compiler) inbound(e *ast.Element, varAttr string) plan.Inbound {
	var ib plan.Inbound
	ib.Pl, ib.Op = c.partnerOp(e, true)
	if ib.Op == nil {
		return ib
	}
	ib.V = c.optVar(e, varAttr, ib.Op.Input)
	ib.Corrs = c.correlations(e, ib.Op.Input, nil)
	ib.FromParts = c.compileParts(e, "fromParts", ib.Op.Input)
	if ib.FromParts == nil {
		elementVarParts(&ib.V, ib.Op.Input, &ib.FromParts)
	}
	ib.Mex = e.AttrOr("messageExchange", "")
	return ib
}

// registerInbound records how a message for ib's operation finds an
// instance waiting in ib, so Dispatch can compute route keys from it.
func (c *compiler) registerInbound(ib *plan.Inbound, start bool) {
	if ib.Op == nil {
		return
	}
	sh := &plan.RouteShape{}
	for _, u := range ib.Corrs {
		if u.Initiate != "yes" {
			sh.Uses = append(sh.Uses, u)
		}
	}
	// A start activity with no routing correlation only creates
	// instances. Any other activity is routed by its sets; with none (as
	// ODE allowed) a message for its operation goes to an instance waiting
	// there, whichever it is, and an initiate="yes" on a set already
	// initiated is bpel:correlationViolation at run time.
	if len(sh.Uses) > 0 || !start {
		ib.Route = c.p.AddRoute(ib.Op.Name, sh)
	}
}

func resolveIn(e *ast.Element, q string) (string, string, error) {
	return e.ResolveQName(q, true)
}
