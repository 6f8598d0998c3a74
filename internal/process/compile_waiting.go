package process

import (
	"github.com/beevik/etree"
)

func (c *compiler) deadline(e *etree.Element) *deadlineSpec {
	d := &deadlineSpec{pos: c.pos(e)}
	if f := bpelChild(e, "for"); f != nil {
		d.forExpr = c.expression(f, f.Text(), true)
	} else if u := bpelChild(e, "until"); u != nil {
		d.untilExpr = c.expression(u, u.Text(), true)
	} else {
		c.errorf(e, "<%s> needs <for> or <until>", e.Tag)
	}
	return d
}

func (c *compiler) pick(e *etree.Element, b base) activity {
	a := &pick{base: b, create: e.SelectAttrValue("createInstance", "no") == "yes"}
	for _, ce := range e.ChildElements() {
		if !isBPEL(ce) {
			continue
		}
		switch ce.Tag {
		case "onMessage":
			om := &onMessage{inbound: c.inbound(ce, "variable")}
			c.registerInbound(&om.inbound, a.create)
			mark := c.beginSources()
			om.act = c.onlyActivityExcept(ce, "correlations", "fromParts")
			a.msgDead.add(c.endSources(mark))
			if a.create && om.op != nil {
				c.addStart(ce, om.op.Name, a)
			}
			a.msgs = append(a.msgs, om)
		case "onAlarm":
			if a.create {
				c.errorf(ce, "a pick that creates instances cannot have onAlarm")
			}
			al := &onAlarm{deadline: c.deadline(ce)}
			mark := c.beginSources()
			al.act = c.onlyActivityExcept(ce, "for", "until")
			a.alarmDead.add(c.endSources(mark))
			a.alarms = append(a.alarms, al)
		}
	}
	if len(a.msgs) == 0 {
		c.errorf(e, "<pick> needs at least one <onMessage>")
	}
	return a
}

func (c *compiler) addStart(e *etree.Element, op string, a activity) {
	if prev, dup := c.p.starts[op]; dup && prev != a {
		c.errorf(e, "operation %s already starts instances at %s", op, prev.where())
		return
	}
	c.p.starts[op] = a
}

// onlyActivityExcept compiles the single activity of e, skipping the
// named non-activity children.
func (c *compiler) onlyActivityExcept(e *etree.Element, skip ...string) activity {
	var found activity
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
		return &empty{base: base{pos: c.pos(e)}}
	}
	return found
}
