package compile

import (
	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/plan"
)

// deadline compiles the <for> or <until> of e (a wait or onAlarm).
func (c *compiler) deadline(e *ast.Element, forX, until *ast.Expression) *plan.DeadlineSpec {
	d := &plan.DeadlineSpec{Pos: c.pos(e)}
	if forX != nil {
		d.ForExpr = c.exprOf(forX)
	} else if until != nil {
		d.UntilExpr = c.exprOf(until)
	} else {
		c.errorf(e, "<%s> needs <for> or <until>", e.Tag)
	}
	return d
}

// pick lowers a <pick>: its onMessages and onAlarms in document order.
func (c *compiler) pick(n *ast.Pick, b plan.Base) plan.Activity {
	e := &n.Element
	a := &plan.Pick{Base: b, Create: e.AttrOr("createInstance", "no") == "yes"}
	for _, ce := range e.Children() {
		if !isBPEL(ce) {
			continue
		}
		switch x := ce.Node().(type) {
		case *ast.OnMessage:
			om := &plan.OnMessage{Inbound: c.inbound(ce, "variable")}
			c.registerInbound(&om.Inbound, a.Create)
			mark := c.beginSources()
			om.Act = c.onlyActivityExcept(ce, "correlations", "fromParts")
			a.MsgDead.Add(c.endSources(mark))
			if a.Create && om.Op != nil {
				c.addStart(ce, om.Op.Name, a)
			}
			a.Msgs = append(a.Msgs, om)
		case *ast.OnAlarm:
			if a.Create {
				c.errorf(ce, "a pick that creates instances cannot have onAlarm")
			}
			al := &plan.OnAlarm{Deadline: c.deadline(ce, x.For, x.Until)}
			mark := c.beginSources()
			al.Act = c.onlyActivityExcept(ce, "for", "until")
			a.AlarmDead.Add(c.endSources(mark))
			a.Alarms = append(a.Alarms, al)
		}
	}
	if len(a.Msgs) == 0 {
		c.errorf(e, "<pick> needs at least one <onMessage>")
	}
	return a
}

func (c *compiler) addStart(e *ast.Element, op string, a plan.Activity) {
	if prev, dup := c.p.Starts[op]; dup && prev != a {
		c.errorf(e, "operation %s already starts instances at %s", op, prev.Where())
		return
	}
	c.p.Starts[op] = a
}

// onlyActivityExcept compiles the single activity of e, skipping the
// named non-activity children.
func (c *compiler) onlyActivityExcept(e *ast.Element, skip ...string) plan.Activity {
	var found plan.Activity
	for _, ce := range e.Children() {
		if !isBPEL(ce) || ce.Tag == "documentation" {
			continue
		}
		skipped := false
		for _, s := range skip {
			if ce.Tag == s {
				skipped = true
			}
		}
		if skipped {
			continue
		}
		if found != nil {
			c.errorf(ce, "<%s> holds exactly one activity", e.Tag)
			break
		}
		found = c.activity(ce)
	}
	if found == nil {
		c.errorf(e, "<%s> holds no activity", e.Tag)
		return &plan.Empty{Base: plan.Base{Pos: c.pos(e)}}
	}
	return found
}
