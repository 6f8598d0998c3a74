package diagram

import (
	"strings"

	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
)

// node is one box of the tree being laid out.
type node struct {
	box Box
	// vertical stacks the children top to bottom (a sequence, a loop's
	// body, a branch or handler around its activity); otherwise they
	// stand side by side (a flow, an if's or a pick's branches).
	vertical bool
	// seq marks a sequence: its children are joined by arrows.
	seq  bool
	kids []*node
	// side are the handler compartments of a scope, to the right of its
	// body.
	side []*node
	// sources and targets are the flow links the activity is a source
	// and a target of.
	sources, targets []*plan.Link
}

// tagger is what every plan activity's Base provides: its element and
// name (constructs the compiler made have no element).
type tagger interface {
	EvTag() (tag, name, pos string)
}

func tagOf(a plan.Activity) (tag, name string) {
	if t, ok := a.(tagger); ok {
		tag, name, _ = t.EvTag()
	}
	return tag, name
}

// builder turns a plan's activities into nodes.
type builder struct{}

// process is the root node: the process itself, its activity and its
// handlers.
func (b *builder) process(p *plan.Plan) *node {
	n := &node{box: Box{ID: -1, Role: RoleActivity, Kind: "process", Name: p.Name.Local}, vertical: true}
	root := p.Root
	if root != nil {
		n.box.ID = root.ID()
		n.box.Pos = root.Where().String()
	}
	if sc, ok := root.(*plan.Scope); ok && sc.IsProcess {
		if k := b.act(sc.Body); k != nil {
			n.kids = append(n.kids, k)
		}
		h := sc.Handlers
		if h == nil {
			h = p.Handlers
		}
		n.side = b.handlers(h, sc.Events, nil, nil)
		return n
	}
	if k := b.act(root); k != nil {
		n.kids = append(n.kids, k)
	}
	n.side = b.handlers(p.Handlers, nil, nil, nil)
	return n
}

// act is activity a's node, nil when there is nothing to draw.
func (b *builder) act(a plan.Activity) *node {
	if a == nil {
		return nil
	}
	tag, name := tagOf(a)
	n := &node{box: Box{ID: a.ID(), Role: RoleActivity, Kind: tag, Name: name, Pos: a.Where().String()}}
	switch x := a.(type) {
	case *plan.Linked:
		k := b.act(x.Act)
		if k == nil {
			return nil
		}
		for _, s := range x.Sources {
			k.sources = append(k.sources, s.L)
		}
		k.targets = append(k.targets, x.Targets...)
		return k
	case *plan.Sequence:
		if tag == "" && len(x.Children) == 1 {
			return b.act(x.Children[0])
		}
		n.vertical, n.seq = true, true
		n.kids = b.list(x.Children)
	case *plan.Flow:
		n.kids = b.list(x.Children)
	case *plan.IfAct:
		for i, br := range x.Branches {
			word := "if "
			if i > 0 {
				word = "elseif "
			}
			n.kids = append(n.kids, b.branch(word+src(x.Conds, i), br))
		}
		if x.Els != nil {
			n.kids = append(n.kids, b.branch("else", x.Els))
		}
	case *plan.Pick:
		for _, om := range x.Msgs {
			n.kids = append(n.kids, b.branch("onMessage "+inbound(&om.Inbound), om.Act))
		}
		for _, al := range x.Alarms {
			n.kids = append(n.kids, b.branch("onAlarm "+deadline(al.Deadline), al.Act))
		}
	case *plan.While:
		n.vertical, n.box.Loop, n.box.Label = true, true, "while "+exprSrc(x.Cond)
		n.kids = b.list([]plan.Activity{x.Body})
	case *plan.RepeatUntil:
		n.vertical, n.box.Loop, n.box.Label = true, true, "until "+exprSrc(x.Cond)
		n.kids = b.list([]plan.Activity{x.Body})
	case *plan.ForEach:
		n.vertical, n.box.Loop = true, true
		n.box.Label = "for $" + varName(x.Counter) + " = " + exprSrc(x.Start) + " to " + exprSrc(x.Final)
		if x.Parallel {
			n.box.Label += " (parallel)"
		}
		if x.Body != nil {
			n.kids = b.list([]plan.Activity{x.Body})
		}
	case *plan.Scope:
		n.vertical = true
		n.kids = b.list([]plan.Activity{x.Body})
		n.side = b.handlers(x.Handlers, x.Events, x.Comp, x.Term)
		if tag == "" {
			if len(n.side) == 0 && len(n.kids) == 1 {
				return n.kids[0] // a construct around one activity
			}
			n.box.Kind, n.box.Role = "", RoleHandler
			n.box.Label = "handlers"
		}
	default:
		if tag == "" {
			return nil // a construct with nothing to show (an empty handler)
		}
		n.box.Detail = detail(a)
	}
	return n
}

// list is the nodes of activities, skipping those with nothing to draw.
func (b *builder) list(acts []plan.Activity) []*node {
	var out []*node
	for _, a := range acts {
		if k := b.act(a); k != nil {
			out = append(out, k)
		}
	}
	return out
}

// branch is a pseudo box labelled label around activity a.
func (b *builder) branch(label string, a plan.Activity) *node {
	return &node{box: Box{ID: -1, Role: RoleBranch, Label: label}, vertical: true, kids: b.list([]plan.Activity{a})}
}

// handlers are a scope's handler compartments: its fault handlers, event
// handlers, compensation and termination handlers.
func (b *builder) handlers(h *plan.FaultHandlers, ev *plan.EventHandlers, comp, term plan.Activity) []*node {
	var out []*node
	add := func(label string, a plan.Activity) {
		out = append(out, &node{box: Box{ID: -1, Role: RoleHandler, Label: label}, vertical: true, kids: b.list([]plan.Activity{a})})
	}
	if h != nil {
		for _, c := range h.Catches {
			label := "catch"
			if c.FaultName.Local != "" {
				label += " " + c.FaultName.Local
			}
			if c.V != nil {
				label += " ($" + c.V.Name + ")"
			}
			add(label, c.Act)
		}
		if h.CatchAll != nil {
			add("catchAll", h.CatchAll)
		}
	}
	if ev != nil {
		for _, e := range ev.Events {
			add("onEvent "+inbound(&e.Inbound), e.Body)
		}
		for _, al := range ev.Alarms {
			label := "onAlarm " + deadline(al.Deadline)
			if al.Repeat != nil {
				label += " repeatEvery " + al.Repeat.Src
			}
			add(label, al.Body)
		}
	}
	if comp != nil {
		add("compensationHandler", comp)
	}
	if term != nil {
		add("terminationHandler", term)
	}
	return out
}

// detail is a leaf activity's second line: what it talks to or waits
// for.
func detail(a plan.Activity) string {
	switch x := a.(type) {
	case *plan.Invoke:
		if x.Op != nil {
			return plOp(x.Pl, x.Op.Name)
		}
	case *plan.Receive:
		return inbound(&x.Inbound)
	case *plan.Reply:
		if x.Op != nil {
			return plOp(x.Pl, x.Op.Name)
		}
	case *plan.Wait:
		return deadline(x.Deadline)
	case *plan.Throw:
		return x.FaultName.Local
	case *plan.Compensate:
		if x.Target != nil && x.Target.Name != "" {
			return "scope " + x.Target.Name
		}
	case *plan.RestActivity:
		return x.Method
	}
	return ""
}

func plOp(pl *plan.PartnerLink, op string) string {
	if pl == nil {
		return op
	}
	return pl.Name + " · " + op
}

func inbound(ib *plan.Inbound) string {
	if ib.Op == nil {
		return ""
	}
	return plOp(ib.Pl, ib.Op.Name)
}

func deadline(d *plan.DeadlineSpec) string {
	switch {
	case d == nil:
		return ""
	case d.ForExpr != nil:
		return "for " + d.ForExpr.Src
	case d.UntilExpr != nil:
		return "until " + d.UntilExpr.Src
	}
	return ""
}

func exprSrc(x *expr.Expr) string {
	if x == nil {
		return ""
	}
	return strings.Join(strings.Fields(x.Src), " ")
}

func src(conds []*expr.Expr, i int) string {
	if i < len(conds) {
		return exprSrc(conds[i])
	}
	return ""
}

func varName(v *expr.Var) string {
	if v == nil {
		return ""
	}
	return v.Name
}
