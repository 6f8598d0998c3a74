package humantask

import (
	"encoding/xml"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

// ParseHT reads one .ht file (htd:humanInteractions) into defs: its
// logical people groups, tasks and notifications, named in its
// targetNamespace. Every problem is reported with the file, element and
// line (an *xmldoc.Errors); a task or notification named twice in the
// bundle is one of them.
func ParseHT(file string, data []byte, defs *Definitions) error {
	doc, err := xmldoc.Parse(file, data)
	if err != nil {
		return err
	}
	p := &htParser{doc: doc, defs: defs}
	p.humanInteractions(doc.Root)
	return p.errs.Err()
}

// htParser reads one .ht document.
type htParser struct {
	doc  *xmldoc.Document
	defs *Definitions
	errs xmldoc.Errors
	tns  string
}

func (p *htParser) pos(e *etree.Element) string { return p.doc.Pos(e).String() }

func (p *htParser) errorf(e *etree.Element, format string, args ...any) {
	p.errs.Add(p.doc.Pos(e), e.Tag, format, args...)
}

// htd returns the children of e in the htd namespace named tag.
func htd(e *etree.Element, tag string) []*etree.Element {
	var out []*etree.Element
	for _, c := range e.ChildElements() {
		if c.Tag == tag && c.NamespaceURI() == NS {
			out = append(out, c)
		}
	}
	return out
}

// htd1 returns the first child of e in the htd namespace named tag.
func htd1(e *etree.Element, tag string) *etree.Element {
	if cs := htd(e, tag); len(cs) > 0 {
		return cs[0]
	}
	return nil
}

func (p *htParser) humanInteractions(root *etree.Element) {
	if root.Tag != "humanInteractions" || root.NamespaceURI() != NS {
		p.errorf(root, "want htd:humanInteractions in namespace %s, not {%s}%s", NS, root.NamespaceURI(), root.Tag)
		return
	}
	p.tns = root.SelectAttrValue("targetNamespace", "")
	if p.defs.Tasks == nil {
		p.defs.Tasks = map[xml.Name]*TaskDef{}
	}
	if p.defs.Notifications == nil {
		p.defs.Notifications = map[xml.Name]*TaskDef{}
	}
	if p.defs.Groups == nil {
		p.defs.Groups = map[xml.Name]*LogicalPeopleGroup{}
	}
	// The groups first: tasks refer to them.
	for _, lpgs := range htd(root, "logicalPeopleGroups") {
		for _, g := range htd(lpgs, "logicalPeopleGroup") {
			n := xml.Name{Space: p.tns, Local: g.SelectAttrValue("name", "")}
			if n.Local == "" {
				p.errorf(g, "a logicalPeopleGroup needs a name")
				continue
			}
			if q := p.defs.Groups[n]; q != nil {
				p.errorf(g, "logicalPeopleGroup %q is defined twice (first at %s)", n.Local, q.Pos)
				continue
			}
			lpg := &LogicalPeopleGroup{Name: n, Pos: p.pos(g)}
			for _, par := range htd(g, "parameter") {
				lpg.Parameters = append(lpg.Parameters, par.SelectAttrValue("name", ""))
			}
			p.defs.Groups[n] = lpg
		}
	}
	for _, ts := range htd(root, "tasks") {
		for _, t := range htd(ts, "task") {
			p.add(p.task(t, false), p.defs.Tasks, t)
		}
	}
	for _, ns := range htd(root, "notifications") {
		for _, n := range htd(ns, "notification") {
			p.add(p.task(n, true), p.defs.Notifications, n)
		}
	}
	for _, c := range root.ChildElements() {
		if c.NamespaceURI() != NS {
			continue
		}
		switch c.Tag {
		case "import", "documentation", "extensions", "logicalPeopleGroups", "tasks", "notifications":
		default:
			p.errorf(c, "unknown element htd:%s in humanInteractions", c.Tag)
		}
	}
}

func (p *htParser) add(d *TaskDef, into map[xml.Name]*TaskDef, e *etree.Element) {
	if d == nil {
		return
	}
	if q := p.defs.Tasks[d.Name]; q != nil {
		p.errorf(e, "%q is defined twice (first at %s)", d.Name.Local, q.Pos)
		return
	}
	if q := p.defs.Notifications[d.Name]; q != nil {
		p.errorf(e, "%q is defined twice (first at %s)", d.Name.Local, q.Pos)
		return
	}
	into[d.Name] = d
}

// task reads an htd:task or htd:notification (or a notification inline
// in an escalation).
func (p *htParser) task(t *etree.Element, notification bool) *TaskDef {
	name := t.SelectAttrValue("name", "")
	if name == "" {
		p.errorf(t, "a %s needs a name", t.Tag)
		return nil
	}
	d := &TaskDef{Name: xml.Name{Space: p.tns, Local: name}, Notification: notification, Pos: p.pos(t),
		People: map[Role][]PeopleRef{}, Namespaces: xmldoc.Namespaces(t)}
	switch strings.TrimSpace(t.SelectAttrValue("isSkipable", "no")) {
	case "yes", "true":
		d.Skipable = true
	case "no", "false":
	default:
		p.errorf(t, "isSkipable must be yes or no")
	}
	if in := htd1(t, "interface"); in == nil {
		p.errorf(t, "%s %q has no htd:interface", t.Tag, name)
	} else {
		d.Interface.PortType = p.qname(in, "portType", true)
		d.Interface.Operation = in.SelectAttrValue("operation", "")
		if d.Interface.Operation == "" {
			p.errorf(in, "interface needs an operation")
		}
		if in.SelectAttr("responsePortType") != nil || in.SelectAttr("responseOperation") != nil {
			if notification {
				p.errorf(in, "a notification has no response (responsePortType, responseOperation)")
			}
			d.Interface.ResponsePortType = p.qname(in, "responsePortType", true)
			d.Interface.ResponseOperation = in.SelectAttrValue("responseOperation", "")
			if d.Interface.ResponseOperation == "" {
				p.errorf(in, "responsePortType needs a responseOperation")
			}
		}
	}
	if pr := htd1(t, "priority"); pr != nil {
		d.Priority = strings.TrimSpace(pr.Text())
		if d.Priority == "" {
			p.errorf(pr, "priority is empty")
		} else {
			p.checkExpr(pr, d.Priority, d.Namespaces)
		}
	}
	if pa := htd1(t, "peopleAssignments"); pa != nil {
		p.people(pa, d)
	}
	if notification && len(d.People[Recipients]) == 0 {
		p.errorf(t, "notification %q has no recipients", name)
	}
	if !notification && len(d.People[PotentialOwners]) == 0 {
		p.errorf(t, "task %q has no potentialOwners", name)
	}
	if pe := htd1(t, "presentationElements"); pe != nil {
		p.presentation(pe, d)
	}
	if dl := htd1(t, "deadlines"); dl != nil {
		if notification {
			p.errorf(dl, "a notification has no deadlines")
		}
		for _, c := range dl.ChildElements() {
			switch c.Tag {
			case "startDeadline":
				p.deadline(c, d, StartDeadline)
			case "completionDeadline":
				p.deadline(c, d, CompletionDeadline)
			case "documentation":
			default:
				p.errorf(c, "unknown element in deadlines (want startDeadline or completionDeadline)")
			}
		}
	}
	return d
}

// qname reads attribute attr of e as a QName; required makes a missing
// one an error.
func (p *htParser) qname(e *etree.Element, attr string, required bool) xml.Name {
	v := strings.TrimSpace(e.SelectAttrValue(attr, ""))
	if v == "" {
		if required {
			p.errorf(e, "%s is missing", attr)
		}
		return xml.Name{}
	}
	space, local, err := xmldoc.ResolveQName(e, v, false)
	if err != nil {
		p.errorf(e, "%s: %v", attr, err)
	}
	return xml.Name{Space: space, Local: local}
}

// roleNames are the elements of htd:peopleAssignments.
var roleNames = []Role{PotentialOwners, ExcludedOwners, BusinessAdministrators, TaskInitiator, TaskStakeholders, Recipients}

func (p *htParser) people(pa *etree.Element, d *TaskDef) {
	for _, c := range pa.ChildElements() {
		r := Role(c.Tag)
		if !containsRole(roleNames, r) {
			p.errorf(c, "unknown generic human role %q (want potentialOwners, excludedOwners, businessAdministrators, taskInitiator, taskStakeholders or recipients)", c.Tag)
			continue
		}
		if r == Recipients && !d.Notification {
			p.errorf(c, "recipients belong to notifications; a task has potentialOwners")
			continue
		}
		d.People[r] = append(d.People[r], p.froms(c)...)
	}
}

func containsRole(rs []Role, r Role) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// froms reads the htd:from children of a role (or reassignment) element.
func (p *htParser) froms(c *etree.Element) []PeopleRef {
	var refs []PeopleRef
	fs := htd(c, "from")
	if len(fs) == 0 {
		p.errorf(c, "%s has no htd:from", c.Tag)
	}
	for _, f := range fs {
		var ref PeopleRef
		switch {
		case f.SelectAttr("logicalPeopleGroup") != nil:
			ref.Group = p.qname(f, "logicalPeopleGroup", true)
			if ref.Group.Space == "" {
				ref.Group.Space = p.tns
			}
			if p.defs.Groups[ref.Group] == nil && p.defs.Groups[xml.Name{Space: p.tns, Local: ref.Group.Local}] == nil {
				p.errorf(f, "logicalPeopleGroup %q is not defined", ref.Group.Local)
			}
			for _, a := range htd(f, "argument") {
				if ref.Args == nil {
					ref.Args = map[string]string{}
				}
				ref.Args[a.SelectAttrValue("name", "")] = strings.TrimSpace(a.Text())
			}
		case htd1(f, "literal") != nil:
			ref.Literal = literal(htd1(f, "literal"))
			if ref.Literal.Empty() {
				p.errorf(f, "literal names no user or group")
			}
		default:
			ref.Expr = strings.TrimSpace(f.Text())
			if ref.Expr == "" {
				p.errorf(f, "from needs a logicalPeopleGroup, a literal or an expression")
			} else {
				p.checkExpr(f, ref.Expr, xmldoc.Namespaces(f))
			}
		}
		refs = append(refs, ref)
	}
	return refs
}

// literal reads the users and groups of an htd:literal: an
// htt:organizationalEntity with htt:users/htt:user and
// htt:groups/htt:group (any namespace is accepted for htt).
func literal(l *etree.Element) Entities {
	var e Entities
	for _, x := range l.FindElements(".//*") {
		switch x.Tag {
		case "user":
			if s := strings.TrimSpace(x.Text()); s != "" {
				e.Users = append(e.Users, s)
			}
		case "group":
			if s := strings.TrimSpace(x.Text()); s != "" {
				e.Groups = append(e.Groups, s)
			}
		}
	}
	return e
}

func (p *htParser) presentation(pe *etree.Element, d *TaskDef) {
	first := func(tag string) string {
		if x := htd1(pe, tag); x != nil {
			return strings.TrimSpace(x.Text())
		}
		return ""
	}
	d.Presentation.Name = first("name")
	d.Presentation.Subject = first("subject")
	d.Presentation.Description = first("description")
	for _, pps := range htd(pe, "presentationParameters") {
		for _, pp := range htd(pps, "presentationParameter") {
			par := Parameter{Name: pp.SelectAttrValue("name", ""), Type: pp.SelectAttrValue("type", ""), Expr: strings.TrimSpace(pp.Text())}
			if par.Name == "" || par.Expr == "" {
				p.errorf(pp, "a presentationParameter needs a name and an expression")
				continue
			}
			p.checkExpr(pp, par.Expr, d.Namespaces)
			d.Presentation.Parameters = append(d.Presentation.Parameters, par)
		}
	}
}

func (p *htParser) deadline(c *etree.Element, d *TaskDef, kind DeadlineKind) {
	dl := Deadline{Name: c.SelectAttrValue("name", ""), Kind: kind, Pos: p.pos(c)}
	if f := htd1(c, "for"); f != nil {
		dl.For = strings.TrimSpace(f.Text())
	}
	if u := htd1(c, "until"); u != nil {
		dl.Until = strings.TrimSpace(u.Text())
	}
	if (dl.For == "") == (dl.Until == "") {
		p.errorf(c, "a %s needs one of htd:for and htd:until", c.Tag)
	}
	if dl.For != "" {
		if _, err := evalDuration(dl.For, nil, d.Namespaces); err != nil {
			p.errorf(htd1(c, "for"), "%v", err)
		}
	}
	for _, esc := range htd(c, "escalation") {
		x := Escalation{Name: esc.SelectAttrValue("name", "")}
		if cond := htd1(esc, "condition"); cond != nil {
			x.Condition = strings.TrimSpace(cond.Text())
			p.checkExpr(cond, x.Condition, d.Namespaces)
		}
		if ra := htd1(esc, "reassignment"); ra != nil {
			po := htd1(ra, "potentialOwners")
			if po == nil {
				p.errorf(ra, "a reassignment needs potentialOwners")
			} else {
				x.Reassign = p.froms(po)
			}
		}
		if n := htd1(esc, "notification"); n != nil {
			x.Notify = p.task(n, true)
		}
		if lr := htd1(esc, "localNotification"); lr != nil {
			ref := p.qname(lr, "reference", true)
			x.Notify = &TaskDef{Name: ref, Notification: true} // resolved at deploy
		}
		if x.Reassign == nil && x.Notify == nil {
			p.errorf(esc, "an escalation needs a reassignment or a notification")
		}
		dl.Escalations = append(dl.Escalations, x)
	}
	d.Deadlines = append(d.Deadlines, dl)
}

// checkExpr reports an expression that does not compile.
func (p *htParser) checkExpr(e *etree.Element, src string, ns map[string]string) {
	if _, err := compileExpr(src, ns); err != nil {
		p.errorf(e, "expression %q: %v", src, err)
	}
}
