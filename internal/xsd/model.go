package xsd

import (
	"strconv"
	"strings"

	"github.com/beevik/etree"
)

// Element is an element declaration.
type Element struct {
	Name     QName
	c        *comp
	typ      *Type
	nillable bool
	fixed    *string
	state    uint8
	err      error
}

// Type is a simple or complex type definition.
type Type struct {
	Name    QName // zero for an anonymous type
	c       *comp
	complex bool
	// simple is the type of the text: a simple type's own definition, or
	// the simple content of a complex type; nil for complex content.
	simple *simpleType
	mixed  bool
	// content is the content model of complex content, nil when empty.
	content *particle
	// elems are the element declarations content uses, by name (a
	// content model may use a name once, with one type); wilds its
	// element wildcards.
	elems   map[QName]*Element
	wilds   []*wildcard
	attrs   []*attrUse
	anyAttr *wildcard
	state   uint8
	err     error
}

type particleKind uint8

const (
	pElem particleKind = iota
	pSeq
	pChoice
	pAll
	pAny
)

// particle is a term of a content model with its occurrence range; max
// is -1 for unbounded.
type particle struct {
	kind     particleKind
	min, max int
	elem     *Element
	kids     []*particle
	wc       *wildcard
}

// wildcard is an xsd:any or xsd:anyAttribute.
type wildcard struct {
	any     bool
	other   string // not this namespace (nor absent), when notOther
	isOther bool
	list    map[string]bool
	process string // strict, lax, skip
}

func (w *wildcard) allows(ns string) bool {
	switch {
	case w.any:
		return true
	case w.isOther:
		return ns != w.other && ns != ""
	}
	return w.list[ns]
}

type attrUse struct {
	name       QName
	typ        *Type
	required   bool
	prohibited bool
	fixed      *string
}

type attrDecl struct {
	name  QName
	c     *comp
	typ   *Type
	fixed *string
	state uint8
	err   error
}

const (
	unfilled uint8 = iota
	filling
	filled
)

// compileAll compiles every global component once.
func (s *Set) compileAll() {
	for _, d := range s.elements {
		s.fillElement(d)
	}
	for _, t := range s.types {
		s.fillType(t)
	}
	for _, a := range s.attrs {
		s.fillAttr(a)
	}
}

func setErr(errp *error, err error) {
	if *errp == nil {
		*errp = err
	}
}

func (s *Set) fillElement(d *Element) {
	if d.state != unfilled {
		return
	}
	d.state = filling
	if d.c.unsupported != "" {
		d.err = d.c.sd.unsupported(d.c.e, d.c.unsupported)
	}
	s.elementDecl(d, d.c.sd, d.c.e, &d.err)
	d.state = filled
}

// elementDecl fills d from the declaration e (global or local).
func (s *Set) elementDecl(d *Element, sd *schemaDoc, e *etree.Element, errp *error) {
	d.nillable = e.SelectAttrValue("nillable", "") == "true"
	if a := e.SelectAttr("fixed"); a != nil {
		v := a.Value
		d.fixed = &v
	}
	if tn := e.SelectAttrValue("type", ""); tn != "" {
		d.typ = s.typeRef(sd, e, tn, errp)
	}
	for _, c := range e.ChildElements() {
		if c.NamespaceURI() != NS {
			continue
		}
		switch c.Tag {
		case "simpleType", "complexType":
			d.typ = s.anonymous(sd, c)
		case "key", "keyref", "unique":
			setErr(errp, sd.unsupported(c, "identity constraint <xsd:"+c.Tag+">"))
		}
	}
	if d.typ == nil {
		if h := e.SelectAttrValue("substitutionGroup", ""); h != "" {
			if hq, err := sd.qname(e, h); err == nil && s.elements[hq] != nil {
				head := s.elements[hq]
				s.fillElement(head)
				d.typ = head.typ
			}
		}
	}
	if d.typ == nil {
		d.typ = s.builtins["anyType"]
	}
}

// typeRef resolves a type name written in e; an unknown one is an error
// in errp and anyType stands in.
func (s *Set) typeRef(sd *schemaDoc, e *etree.Element, name string, errp *error) *Type {
	q, err := sd.qname(e, name)
	if err != nil {
		setErr(errp, sd.errorf(e, "%v", err))
		return s.builtins["anyType"]
	}
	t := s.lookupType(q)
	if t == nil {
		setErr(errp, sd.errorf(e, "unknown type %s", q))
		return s.builtins["anyType"]
	}
	s.fillType(t)
	return t
}

func (s *Set) anonymous(sd *schemaDoc, e *etree.Element) *Type {
	t := &Type{c: &comp{e: e, sd: sd}, complex: e.Tag == "complexType"}
	s.fillType(t)
	return t
}

func (s *Set) fillType(t *Type) {
	switch t.state {
	case filled:
		return
	case filling:
		setErr(&t.err, t.c.sd.errorf(t.c.e, "type %s is derived from itself", t.Name))
		return
	}
	if t.c == nil { // a built-in
		t.state = filled
		return
	}
	t.state = filling
	sd, e := t.c.sd, t.c.e
	if t.c.unsupported != "" {
		t.err = sd.unsupported(e, t.c.unsupported)
	}
	if t.complex {
		s.complexDef(t, sd, e)
	} else {
		t.simple = s.simpleDef(sd, e, t.Name)
	}
	t.state = filled
}

func (s *Set) complexDef(t *Type, sd *schemaDoc, e *etree.Element) {
	t.mixed = e.SelectAttrValue("mixed", "") == "true"
	for _, c := range e.ChildElements() {
		if c.NamespaceURI() != NS {
			continue
		}
		switch c.Tag {
		case "simpleContent", "complexContent":
			s.derived(t, sd, c)
		case "sequence", "choice", "all", "group":
			t.content = s.particle(sd, c, &t.err, 0)
		case "attribute", "attributeGroup", "anyAttribute":
			s.attrDecls(sd, c, &t.attrs, &t.anyAttr, &t.err, 0)
		case "annotation":
		default:
			setErr(&t.err, sd.unsupported(c, "<xsd:"+c.Tag+"> in a complexType"))
		}
	}
	s.collect(t, t.content)
}

// derived compiles the simpleContent or complexContent of t.
func (s *Set) derived(t *Type, sd *schemaDoc, cc *etree.Element) {
	if m := cc.SelectAttrValue("mixed", ""); m != "" {
		t.mixed = m == "true"
	}
	var d *etree.Element
	for _, c := range cc.ChildElements() {
		if c.NamespaceURI() == NS && (c.Tag == "extension" || c.Tag == "restriction") {
			d = c
		}
	}
	if d == nil {
		setErr(&t.err, sd.errorf(cc, "needs an <xsd:extension> or <xsd:restriction>"))
		return
	}
	base := s.typeRef(sd, d, d.SelectAttrValue("base", ""), &t.err)
	if base == t {
		return
	}
	if base.err != nil {
		setErr(&t.err, base.err)
	}
	ext := d.Tag == "extension"
	simpleContent := cc.Tag == "simpleContent"
	if ext || simpleContent {
		t.attrs = append(t.attrs, base.attrs...)
		t.anyAttr = base.anyAttr
	} else {
		// A restriction inherits the attributes it does not redeclare.
		t.attrs = append(t.attrs, base.attrs...)
	}
	if simpleContent {
		if base.simple == nil {
			setErr(&t.err, sd.errorf(d, "simpleContent base %s has no simple content", base.Name))
			t.simple = s.builtins["anySimpleType"].simple
		} else if ext {
			t.simple = base.simple
		} else {
			t.simple = s.restriction(sd, d, base.simple, QName{})
		}
	} else if ext {
		if !base.complex {
			setErr(&t.err, sd.errorf(d, "complexContent base %s is a simple type", base.Name))
		}
		t.content = base.content
		t.mixed = t.mixed || base.mixed
	}
	var own *particle
	for _, c := range d.ChildElements() {
		if c.NamespaceURI() != NS {
			continue
		}
		switch c.Tag {
		case "sequence", "choice", "all", "group":
			own = s.particle(sd, c, &t.err, 0)
		case "attribute", "attributeGroup", "anyAttribute":
			s.attrDecls(sd, c, &t.attrs, &t.anyAttr, &t.err, 0)
		}
	}
	if !simpleContent {
		switch {
		case !ext:
			t.content = own
		case own != nil && t.content != nil:
			t.content = &particle{kind: pSeq, min: 1, max: 1, kids: []*particle{t.content, own}}
		case own != nil:
			t.content = own
		}
	}
	// Later declarations of a name override earlier ones (a restriction
	// redeclares or prohibits what it inherits).
	seen := map[QName]int{}
	out := t.attrs[:0:0]
	for _, a := range t.attrs {
		if i, ok := seen[a.name]; ok {
			out[i] = a
			continue
		}
		seen[a.name] = len(out)
		out = append(out, a)
	}
	t.attrs = out
}

// collect records the element declarations and wildcards of p in t.
func (s *Set) collect(t *Type, p *particle) {
	if p == nil {
		return
	}
	switch p.kind {
	case pElem:
		if t.elems == nil {
			t.elems = map[QName]*Element{}
		}
		if _, ok := t.elems[p.elem.Name]; !ok {
			t.elems[p.elem.Name] = p.elem
		}
	case pAny:
		t.wilds = append(t.wilds, p.wc)
	default:
		for _, k := range p.kids {
			s.collect(t, k)
		}
	}
}

func occurs(sd *schemaDoc, e *etree.Element, errp *error) (int, int) {
	lo, hi := 1, 1
	if v := e.SelectAttrValue("minOccurs", ""); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			setErr(errp, sd.errorf(e, "minOccurs %q is not a non-negative integer", v))
		} else {
			lo = n
		}
	}
	if v := strings.TrimSpace(e.SelectAttrValue("maxOccurs", "")); v != "" {
		if v == "unbounded" {
			hi = -1
		} else if n, err := strconv.Atoi(v); err != nil || n < 0 {
			setErr(errp, sd.errorf(e, "maxOccurs %q is not a non-negative integer or unbounded", v))
		} else {
			hi = n
		}
	}
	if hi >= 0 && lo > hi {
		setErr(errp, sd.errorf(e, "minOccurs %d is above maxOccurs %d", lo, hi))
		lo = hi
	}
	return lo, hi
}

// maxGroupDepth bounds nested group references (a group that includes
// itself is an error in the schema).
const maxGroupDepth = 64

func (s *Set) particle(sd *schemaDoc, e *etree.Element, errp *error, depth int) *particle {
	if depth > maxGroupDepth {
		setErr(errp, sd.errorf(e, "model groups nest too deep (a group that refers to itself?)"))
		return nil
	}
	p := &particle{}
	p.min, p.max = occurs(sd, e, errp)
	switch e.Tag {
	case "element":
		p.kind = pElem
		if ref := e.SelectAttrValue("ref", ""); ref != "" {
			q, err := sd.qname(e, ref)
			if err != nil {
				setErr(errp, sd.errorf(e, "%v", err))
				return nil
			}
			d := s.elements[q]
			if d == nil {
				setErr(errp, sd.errorf(e, "unknown element %s", q))
				return nil
			}
			if s.heads[q] {
				setErr(errp, sd.unsupported(e, "substitution group (head "+q.String()+")"))
			}
			s.fillElement(d)
			p.elem = d
			return p
		}
		q := QName{Local: e.SelectAttrValue("name", "")}
		if f := e.SelectAttrValue("form", ""); f == "qualified" || (f == "" && sd.qualElems) {
			q.Space = sd.tns
		}
		d := &Element{Name: q, state: filled}
		s.elementDecl(d, sd, e, errp)
		p.elem = d
		return p
	case "sequence", "choice", "all":
		p.kind = map[string]particleKind{"sequence": pSeq, "choice": pChoice, "all": pAll}[e.Tag]
		for _, c := range e.ChildElements() {
			if c.NamespaceURI() != NS || c.Tag == "annotation" {
				continue
			}
			if k := s.particle(sd, c, errp, depth); k != nil {
				p.kids = append(p.kids, k)
			}
		}
		if p.kind == pAll {
			for _, k := range p.kids {
				if k.kind != pElem || k.max > 1 || k.max < 0 {
					setErr(errp, sd.errorf(e, "an <xsd:all> holds only elements with maxOccurs 0 or 1"))
				}
			}
		}
		return p
	case "group":
		q, err := sd.qname(e, e.SelectAttrValue("ref", ""))
		if err != nil {
			setErr(errp, sd.errorf(e, "%v", err))
			return nil
		}
		g := s.groups[q]
		if g == nil {
			setErr(errp, sd.errorf(e, "unknown group %s", q))
			return nil
		}
		if g.unsupported != "" {
			setErr(errp, g.sd.unsupported(g.e, g.unsupported))
		}
		p.kind = pSeq
		for _, c := range g.e.ChildElements() {
			if c.NamespaceURI() == NS && (c.Tag == "sequence" || c.Tag == "choice" || c.Tag == "all") {
				if k := s.particle(g.sd, c, errp, depth+1); k != nil {
					p.kids = append(p.kids, k)
				}
			}
		}
		return p
	case "any":
		p.kind = pAny
		p.wc = wildcardOf(sd, e)
		return p
	}
	setErr(errp, sd.unsupported(e, "<xsd:"+e.Tag+"> in a content model"))
	return nil
}

func wildcardOf(sd *schemaDoc, e *etree.Element) *wildcard {
	w := &wildcard{process: e.SelectAttrValue("processContents", "strict")}
	switch ns := strings.TrimSpace(e.SelectAttrValue("namespace", "##any")); ns {
	case "##any":
		w.any = true
	case "##other":
		w.isOther, w.other = true, sd.tns
	default:
		w.list = map[string]bool{}
		for _, u := range strings.Fields(ns) {
			switch u {
			case "##targetNamespace":
				w.list[sd.tns] = true
			case "##local":
				w.list[""] = true
			default:
				w.list[u] = true
			}
		}
	}
	return w
}

func (s *Set) attrDecls(sd *schemaDoc, e *etree.Element, uses *[]*attrUse, any **wildcard, errp *error, depth int) {
	switch e.Tag {
	case "anyAttribute":
		*any = wildcardOf(sd, e)
	case "attributeGroup":
		if depth > maxGroupDepth {
			setErr(errp, sd.errorf(e, "attribute groups nest too deep"))
			return
		}
		q, err := sd.qname(e, e.SelectAttrValue("ref", ""))
		if err != nil {
			setErr(errp, sd.errorf(e, "%v", err))
			return
		}
		g := s.agroups[q]
		if g == nil {
			setErr(errp, sd.errorf(e, "unknown attributeGroup %s", q))
			return
		}
		if g.unsupported != "" {
			setErr(errp, g.sd.unsupported(g.e, g.unsupported))
		}
		for _, c := range g.e.ChildElements() {
			if c.NamespaceURI() == NS {
				s.attrDecls(g.sd, c, uses, any, errp, depth+1)
			}
		}
	case "attribute":
		u := &attrUse{}
		switch e.SelectAttrValue("use", "optional") {
		case "required":
			u.required = true
		case "prohibited":
			u.prohibited = true
		}
		if a := e.SelectAttr("fixed"); a != nil {
			v := a.Value
			u.fixed = &v
		}
		if ref := e.SelectAttrValue("ref", ""); ref != "" {
			q, err := sd.qname(e, ref)
			if err != nil {
				setErr(errp, sd.errorf(e, "%v", err))
				return
			}
			d := s.attrs[q]
			if q.Space == nsXML {
				d = &attrDecl{name: q, typ: s.builtins["string"], state: filled}
			}
			if d == nil {
				setErr(errp, sd.errorf(e, "unknown attribute %s", q))
				return
			}
			s.fillAttr(d)
			if d.err != nil {
				setErr(errp, d.err)
			}
			u.name, u.typ = d.name, d.typ
			if u.fixed == nil {
				u.fixed = d.fixed
			}
		} else {
			u.name = QName{Local: e.SelectAttrValue("name", "")}
			if f := e.SelectAttrValue("form", ""); f == "qualified" || (f == "" && sd.qualAttrs) {
				u.name.Space = sd.tns
			}
			u.typ = s.attrType(sd, e, errp)
		}
		*uses = append(*uses, u)
	case "annotation":
	default:
		setErr(errp, sd.unsupported(e, "<xsd:"+e.Tag+"> among attributes"))
	}
}

func (s *Set) attrType(sd *schemaDoc, e *etree.Element, errp *error) *Type {
	if tn := e.SelectAttrValue("type", ""); tn != "" {
		t := s.typeRef(sd, e, tn, errp)
		if t.simple == nil || t.complex {
			setErr(errp, sd.errorf(e, "attribute type %s is not a simple type", t.Name))
			return s.builtins["anySimpleType"]
		}
		return t
	}
	for _, c := range e.ChildElements() {
		if c.NamespaceURI() == NS && c.Tag == "simpleType" {
			return s.anonymous(sd, c)
		}
	}
	return s.builtins["anySimpleType"]
}

func (s *Set) fillAttr(d *attrDecl) {
	if d.state != unfilled {
		return
	}
	d.state = filled
	d.name = QName{d.c.sd.tns, d.c.e.SelectAttrValue("name", "")}
	if d.c.unsupported != "" {
		d.err = d.c.sd.unsupported(d.c.e, d.c.unsupported)
	}
	if a := d.c.e.SelectAttr("fixed"); a != nil {
		v := a.Value
		d.fixed = &v
	}
	d.typ = s.attrType(d.c.sd, d.c.e, &d.err)
}
