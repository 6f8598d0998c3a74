package compile

import (
	"github.com/beevik/etree"
	"github.com/orchd/orchd/internal/process/plan"
)

func (c *compiler) deadline(e *etree.Element) *plan.DeadlineSpec {
	d := &plan.DeadlineSpec{Pos: c.pos(e)}
	if f := bpelChild(e, "for"); f != nil {
		d.ForExpr = c.expression(f, f.Text(), true)
	} else if u := bpelChild(e, "until"); u != nil {
		d.UntilExpr = c.expression(u, u.Text(), true)
	} else {
		c.errorf(e, "<%s> needs <for> or <until>", e.Tag)
	}
	return d
}

func (c *compiler) pick(e *etree.Element, b plan.Base) plan.Activity {
	a := &plan.Pick{Base: b, Create: e.SelectAttrValue("createInstance", "no") == "yes"}
	for _, ce := range e.ChildElements() {
		if !isBPEL(ce) {
			continue
		}
		switch ce.Tag {
		case "onMessage":
			om := &plan.OnMessage{Inbound: c.inbound(ce, "variable")}
			c.registerInbound(&om.Inbound, a.Create)
			mark := c.beginSources()
			om.Act = c.onlyActivityExcept(ce, "correlations", "fromParts")
			a.MsgDead.Add(c.endSources(mark))
			if a.Create && om.Op != nil {
				c.addStart(ce, om.Op.Name, a)
			}
			a.Msgs = append(a.Msgs, om)
		case "onAlarm":
			if a.Create {
				c.errorf(ce, "a pick that creates instances cannot have onAlarm")
			}
			al := &plan.OnAlarm{Deadline: c.deadline(ce)}
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

func (c *compiler) addStart(e *etree.Element, op string, a plan.Activity) {
	if prev, dup := c.p.Starts[op]; dup && prev != a {
		c.errorf(e, "operation %s already starts instances at %s", op, prev.Where())
		return
	}
	c.p.Starts[op] = a
}

// onlyActivityExcept compiles the single activity of e, skipping the
// named non-activity children.
func (c *compiler) onlyActivityExcept(e *etree.Element, skip ...string) plan.Activity {
	var found plan.Activity
	for _, ce := range e.ChildElements() {
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
