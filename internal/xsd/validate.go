package xsd

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

// Error is a validation failure: where in the instance (a path such as
// /po:order/po:item[2]/po:qty, or /po:order/@currency; empty for the
// value itself) and what is wrong.
type Error struct {
	Path string
	Msg  string
	// Unchecked is set when el could not be checked (an xsi:type or a
	// wildcard's declaration needs what the validator does not
	// support), rather than found invalid.
	Unchecked bool
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

func fail(path, format string, args ...any) *Error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// unchecked marks e as a check that could not be made.
func unchecked(e *Error) *Error {
	e.Unchecked = true
	return e
}

// Validate checks that el is a valid instance of the declaration d (from
// s.Element): its name, then its content and attributes.
func (s *Set) Validate(d *Element, el *etree.Element) error {
	w := &where{root: el, named: true}
	if q := (QName{el.NamespaceURI(), el.Tag}); q != d.Name {
		return fail(w.at(el), "element is %s, want %s", q, d.Name)
	}
	if e := s.element(d, el, w); e != nil {
		return e
	}
	return nil
}

// ValidateType checks the content and attributes of el (whose name is not
// looked at: it holds a value of t, from s.Type) against t. Paths in
// errors are relative to el ("" for el itself).
func (s *Set) ValidateType(t *Type, el *etree.Element) error {
	if e := s.typed(t, el, &where{root: el}); e != nil {
		return e
	}
	return nil
}

// step is el's path step: its name as written, with its position among
// same-named siblings when it has any.
func step(el *etree.Element) string {
	name := el.FullTag()
	par := el.Parent()
	if par == nil {
		return name
	}
	n, pos := 0, 0
	for _, c := range par.ChildElements() {
		if c.Tag == el.Tag && c.Space == el.Space {
			n++
			if c == el {
				pos = n
			}
		}
	}
	if n > 1 {
		return name + "[" + strconv.Itoa(pos) + "]"
	}
	return name
}

func xsiAttr(el *etree.Element, key string) (string, bool) {
	for _, a := range el.Attr {
		if a.Key == key && a.Space != "" && a.NamespaceURI() == NSXSI {
			return a.Value, true
		}
	}
	return "", false
}

func (s *Set) element(d *Element, el *etree.Element, w *where) *Error {
	t := d.typ
	if v, ok := xsiAttr(el, "type"); ok {
		sp, local, err := xmldoc.ResolveQName(el, strings.TrimSpace(v), true)
		if err != nil {
			return fail(w.at(el), "xsi:type: %v", err)
		}
		q := QName{sp, local}
		xt := s.lookupType(q)
		if xt == nil {
			return fail(w.at(el), "xsi:type %s is not declared in the bundle's schemas", q)
		}
		if err := s.check(nil, xt, map[any]bool{}); err != nil {
			return unchecked(fail(w.at(el), "xsi:type %s cannot be checked: %v", q, err))
		}
		t = xt
	}
	if v, ok := xsiAttr(el, "nil"); ok && (strings.TrimSpace(v) == "true" || strings.TrimSpace(v) == "1") {
		if !d.nillable {
			return fail(w.at(el), "xsi:nil on an element that is not nillable")
		}
		if len(el.ChildElements()) > 0 || strings.TrimSpace(text(el)) != "" {
			return fail(w.at(el), "an element with xsi:nil=\"true\" must be empty")
		}
		return s.attributes(t, el, w)
	}
	if d.fixed != nil && t.simple != nil && normalize(text(el), t.simple.ws) != normalize(*d.fixed, t.simple.ws) {
		return fail(w.at(el), "'%s' is not the fixed value '%s'", text(el), *d.fixed)
	}
	return s.typed(t, el, w)
}

// where renders the path of an element or attribute where validation
// failed, only then: from root ("/" and root's step when named, else
// relative to root, "" for root itself) down to the element.
type where struct {
	root  *etree.Element
	named bool
}

// at is el's path.
func (w *where) at(el *etree.Element) string {
	var steps []string
	for e := el; e != nil && e != w.root; e = e.Parent() {
		steps = append(steps, step(e))
	}
	var b strings.Builder
	if w.named {
		b.WriteString("/" + step(w.root))
	}
	for i := len(steps) - 1; i >= 0; i-- {
		b.WriteString("/" + steps[i])
	}
	return b.String()
}

// attr is the path of el's attribute a.
func (w *where) attr(el *etree.Element, a *etree.Attr) string {
	return w.at(el) + "/@" + a.FullKey()
}

// hasText reports whether el holds character data other than
// whitespace.
func hasText(el *etree.Element) bool {
	for _, c := range el.Child {
		if cd, ok := c.(*etree.CharData); ok && strings.TrimSpace(cd.Data) != "" {
			return true
		}
	}
	return false
}

// seqMatches reports whether names match p, a sequence (once) of
// element particles, taking each particle's elements greedily. A match
// found so is one; when there is none (or p is of another shape) the
// general matcher decides, and says what is wrong. XML Schema's Unique
// Particle Attribution makes the greedy match the one there is for the
// valid content of such a sequence, so valid answers rarely need more.
func seqMatches(p *particle, names []QName) bool {
	if p.kind != pSeq || p.min != 1 || p.max != 1 {
		return false
	}
	i := 0
	for _, k := range p.kids {
		if k.kind != pElem {
			return false
		}
		n := 0
		for i < len(names) && (k.max < 0 || n < k.max) && names[i] == k.elem.Name {
			i++
			n++
		}
		if n < k.min {
			return false
		}
	}
	return i == len(names)
}

// text is the character data directly inside el.
func text(el *etree.Element) string {
	var one *etree.CharData
	n := 0
	for _, t := range el.Child {
		if cd, ok := t.(*etree.CharData); ok {
			one = cd
			n++
		}
	}
	switch n {
	case 0:
		return ""
	case 1:
		return one.Data
	}
	var b strings.Builder
	for _, t := range el.Child {
		if cd, ok := t.(*etree.CharData); ok {
			b.WriteString(cd.Data)
		}
	}
	return b.String()
}

func (s *Set) typed(t *Type, el *etree.Element, w *where) *Error {
	if e := s.attributes(t, el, w); e != nil {
		return e
	}
	if t.simple != nil {
		for _, c := range el.Child {
			if k, ok := c.(*etree.Element); ok {
				return fail(w.at(el), "element %s is not allowed: the content is a simple value", k.FullTag())
			}
		}
		if why := t.simple.validate(text(el), el); why != "" {
			return fail(w.at(el), "%s", why)
		}
		return nil
	}
	if !t.mixed && hasText(el) {
		if tx := strings.TrimSpace(text(el)); tx != "" {
			if len(tx) > 40 {
				tx = tx[:40] + "..."
			}
			return fail(w.at(el), "text '%s' is not allowed in element-only content", tx)
		}
	}
	// The children and their names, in arrays on the stack for the
	// few children a partner's answer has (validating one allocates
	// nothing then, unless it needs the general matcher).
	var kb [16]*etree.Element
	kids := kb[:0]
	for _, c := range el.Child {
		if k, ok := c.(*etree.Element); ok {
			kids = append(kids, k)
		}
	}
	if len(kids) == 0 {
		if t.content == nil || nullable(t.content) {
			return nil
		}
	}
	if t.content == nil {
		return fail(w.at(kids[0]), "element is not allowed: the content must be empty")
	}
	var nb [16]QName
	names := nb[:0]
	for _, k := range kids {
		names = append(names, QName{k.NamespaceURI(), k.Tag})
	}
	if seqMatches(t.content, names) {
		// matched without the general matcher's position sets
	} else if ends, m := matchAll(t.content, el, kids, names); !contains(ends, len(kids)) {
		at := m.far
		for _, e := range ends {
			if e > at {
				at, m.expected = e, nil
			}
		}
		exp := ""
		if len(m.expected) > 0 {
			exp = strings.Join(dedupe(m.expected), " or ")
		}
		if at >= len(kids) {
			return fail(w.at(el), "missing element %s", exp)
		}
		if exp == "" {
			return fail(w.at(kids[at]), "element is not allowed here (no more elements may follow)")
		}
		return fail(w.at(kids[at]), "element is not allowed here; expected %s", exp)
	}
	for i, k := range kids {
		if d, ok := t.elems[names[i]]; ok {
			if e := s.element(d, k, w); e != nil {
				return e
			}
			continue
		}
		for _, wc := range t.wilds {
			if !wc.allows(names[i].Space) {
				continue
			}
			if wc.process == "skip" {
				break
			}
			d := s.elements[names[i]]
			if d == nil {
				if wc.process == "strict" {
					return fail(w.at(k), "no global declaration of %s for the strict wildcard", names[i])
				}
				break
			}
			if err := s.check(d, nil, map[any]bool{}); err != nil {
				return unchecked(fail(w.at(k), "cannot be checked: %v", err))
			}
			if e := s.element(d, k, w); e != nil {
				return e
			}
			break
		}
	}
	return nil
}

func (s *Set) attributes(t *Type, el *etree.Element, w *where) *Error {
	var seen []*attrUse
	for i := range el.Attr {
		a := &el.Attr[i]
		if a.Space == "xmlns" || (a.Space == "" && a.Key == "xmlns") {
			continue
		}
		ns := ""
		if a.Space == "xml" {
			ns = nsXML
		} else if a.Space != "" {
			ns = a.NamespaceURI()
		}
		if ns == NSXSI && (a.Key == "type" || a.Key == "nil" || a.Key == "schemaLocation" || a.Key == "noNamespaceSchemaLocation") {
			// The four xsi attributes are allowed everywhere (XSD 1.0
			// Part 1, 3.4.4, Element Locally Valid (Complex Type) clause
			// 3); any other attribute in a namespace, xsi's others
			// included, needs a declaration or a wildcard (clause 3.2).
			continue
		}
		q := QName{ns, a.Key}
		var u *attrUse
		for _, x := range t.attrs {
			if x.name == q {
				u = x
				break
			}
		}
		if u == nil || u.prohibited {
			wc := t.anyAttr
			if wc == nil || !wc.allows(ns) {
				return fail(w.attr(el, a), "attribute is not allowed")
			}
			if wc.process == "skip" {
				continue
			}
			d := s.attrs[q]
			if d == nil {
				if wc.process == "strict" {
					return fail(w.attr(el, a), "no global declaration of attribute %s for the strict wildcard", q)
				}
				continue
			}
			if d.err != nil {
				return unchecked(fail(w.attr(el, a), "cannot be checked: %v", d.err))
			}
			u = &attrUse{name: q, typ: d.typ, fixed: d.fixed}
		}
		seen = append(seen, u)
		if why := u.typ.simple.validate(a.Value, el); why != "" {
			return fail(w.attr(el, a), "%s", why)
		}
		if u.fixed != nil && normalize(a.Value, u.typ.simple.ws) != normalize(*u.fixed, u.typ.simple.ws) {
			return fail(w.attr(el, a), "'%s' is not the fixed value '%s'", a.Value, *u.fixed)
		}
	}
outer:
	for _, u := range t.attrs {
		if !u.required {
			continue
		}
		for _, x := range seen {
			if x == u {
				continue outer
			}
		}
		return fail(w.at(el), "missing required attribute %s", u.name)
	}
	return nil
}

// matcher matches a content model against the children of one element.
// It remembers the furthest child position where an element was wanted
// and not found, and what was wanted there, for the error message.
// matchAll runs the general matcher of content over kids (named names),
// the children of parent, on copies: the caller's slices may live on its
// stack. It returns the positions the content can end at, and the
// matcher for where it went furthest.
func matchAll(content *particle, parent *etree.Element, kids []*etree.Element, names []QName) ([]int, *matcher) {
	m := &matcher{parent: parent, kids: slices.Clone(kids), names: slices.Clone(names), far: -1}
	return m.match(content, 0), m
}

type matcher struct {
	parent   *etree.Element
	kids     []*etree.Element
	names    []QName
	far      int
	expected []string
}

func (m *matcher) want(pos int, what string) {
	if pos > m.far {
		m.far, m.expected = pos, nil
	}
	if pos == m.far {
		m.expected = append(m.expected, what)
	}
}

// label names q as the instance would write it in m.parent: with a
// prefix bound there, unprefixed in the default namespace, else {ns}local.
func (m *matcher) label(q QName) string {
	if d, _, _ := xmldoc.ResolveQName(m.parent, q.Local, true); d == q.Space {
		return q.Local
	}
	for p := m.parent; p != nil; p = p.Parent() {
		for _, a := range p.Attr {
			if a.Space == "xmlns" && a.Value == q.Space {
				// the nearest binding of the prefix must be this one
				if u, _, _ := xmldoc.ResolveQName(m.parent, a.Key+":"+q.Local, false); u == q.Space {
					return a.Key + ":" + q.Local
				}
			}
		}
	}
	return q.String()
}

// match returns the positions where p, repeated as it allows, can end
// when it starts at pos (sorted, unique).
func (m *matcher) match(p *particle, pos int) []int {
	var out []int
	if p.min == 0 {
		out = addPos(out, pos)
	}
	cur := []int{pos}
	for i := 1; p.max < 0 || i <= p.max; i++ {
		var next []int
		for _, c := range cur {
			for _, e := range m.once(p, c) {
				next = addPos(next, e)
			}
		}
		if len(next) == 0 {
			break
		}
		if i >= p.min {
			grew := false
			for _, e := range next {
				if !contains(out, e) {
					grew = true
				}
				out = addPos(out, e)
			}
			if !grew {
				break
			}
		} else if equal(next, cur) {
			// Repeating consumes nothing more: min is reached as is.
			for _, e := range next {
				out = addPos(out, e)
			}
			break
		}
		cur = next
	}
	return out
}

func (m *matcher) once(p *particle, pos int) []int {
	switch p.kind {
	case pElem:
		if pos < len(m.kids) && m.names[pos] == p.elem.Name {
			return []int{pos + 1}
		}
		m.want(pos, m.label(p.elem.Name))
		return nil
	case pAny:
		if pos < len(m.kids) && p.wc.allows(m.names[pos].Space) {
			return []int{pos + 1}
		}
		m.want(pos, "any element")
		return nil
	case pSeq:
		cur := []int{pos}
		for _, k := range p.kids {
			var next []int
			for _, c := range cur {
				for _, e := range m.match(k, c) {
					next = addPos(next, e)
				}
			}
			if len(next) == 0 {
				return nil
			}
			cur = next
		}
		return cur
	case pChoice:
		var out []int
		for _, k := range p.kids {
			for _, e := range m.match(k, pos) {
				out = addPos(out, e)
			}
		}
		return out
	case pAll:
		used := make([]bool, len(p.kids))
		i := pos
	next:
		for i < len(m.kids) {
			for j, k := range p.kids {
				if !used[j] && k.max != 0 && m.names[i] == k.elem.Name {
					used[j] = true
					i++
					continue next
				}
			}
			break
		}
		for j, k := range p.kids {
			if !used[j] && k.min > 0 {
				m.want(i, m.label(k.elem.Name))
			}
		}
		for j, k := range p.kids {
			if !used[j] && k.min > 0 {
				return nil
			}
		}
		for j, k := range p.kids {
			if !used[j] && i < len(m.kids) {
				m.want(i, m.label(k.elem.Name))
			}
		}
		return []int{i}
	}
	return nil
}

// nullable reports whether p matches no elements.
func nullable(p *particle) bool {
	if p.min == 0 {
		return true
	}
	switch p.kind {
	case pSeq, pAll:
		for _, k := range p.kids {
			if !nullable(k) {
				return false
			}
		}
		return true
	case pChoice:
		for _, k := range p.kids {
			if nullable(k) {
				return true
			}
		}
		return len(p.kids) == 0
	}
	return false
}

func addPos(s []int, v int) []int {
	for i, x := range s {
		if x == v {
			return s
		}
		if x > v {
			s = append(s, 0)
			copy(s[i+1:], s[i:])
			s[i] = v
			return s
		}
	}
	return append(s, v)
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func dedupe(s []string) []string {
	var out []string
	for _, x := range s {
		dup := false
		for _, y := range out {
			if x == y {
				dup = true
			}
		}
		if !dup {
			out = append(out, x)
		}
	}
	return out
}
