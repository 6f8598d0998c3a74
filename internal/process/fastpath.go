package process

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/xpath1"
)

// simplePath is a compiled location path of the form most assignments
// use: [$var[.part]] followed by child steps with an optional predicate,
// optionally ending in @attr or text(). A predicate is positional ([3] or
// [$i]) or, in XPath 1.0, a fastExpr that is not a number
// ([po:qty > 0], [not(po:sku)]). The runtime walks it directly over the
// etree, without the general XPath engine; anything else goes to
// antchfx/xpath.
type simplePath struct {
	v     *variable // nil for a relative query
	part  int
	steps []pathStep
}

type pathStep struct {
	space, local string // element name test; local "*" matches any element
	attr         bool   // @local (space for prefixed attributes)
	text         bool   // text()
	index        int    // 1-based positional predicate, 0 for none
	indexVar     *variable
	// filter is a boolean predicate, tested with each candidate element
	// as its context node.
	filter fastExpr
}

// compileSimplePath recognizes src as a simple path with positional
// predicates only, which XPath 1.0 and 2.0 read alike. ns resolves
// prefixes; relative is true for a <query> (no leading variable).
func compileSimplePath(src string, r resolver, ns map[string]string, relative bool) *simplePath {
	return compilePath(src, r, ns, relative, false)
}

// compilePath is compileSimplePath that, with filters, also takes XPath 1.0
// boolean predicates (compileFastPred).
func compilePath(src string, r resolver, ns map[string]string, relative, filters bool) *simplePath {
	s := trimSpace(src)
	sp := &simplePath{part: -1}
	if !relative {
		if !strings.HasPrefix(s, "$") {
			return nil
		}
		j := 1
		for j < len(s) && isNameChar(s[j]) && s[j] != '.' {
			j++
		}
		v := r.lookupVar(s[1:j])
		if v == nil {
			return nil
		}
		sp.v = v
		if j < len(s) && s[j] == '.' {
			k := j + 1
			for k < len(s) && isNameChar(s[k]) && s[k] != '.' {
				k++
			}
			sp.part = v.partIndex(s[j+1 : k])
			if sp.part < 0 {
				return nil
			}
			j = k
		}
		s = s[j:]
		if s == "" {
			// A bare simple-typed $var is a value (number or string), not
			// a node: leave it to the general engine.
			if v.simple != "" {
				return nil
			}
			return sp
		}
		if s[0] != '/' || strings.HasPrefix(s, "//") {
			return nil
		}
		s = s[1:]
	}
	steps, err := splitSteps(s)
	if err != nil {
		return nil
	}
	for _, raw := range steps {
		st, ok := parseStep(raw, r, ns, filters)
		if !ok {
			return nil
		}
		if len(sp.steps) > 0 {
			if last := sp.steps[len(sp.steps)-1]; last.attr || last.text {
				return nil
			}
		}
		sp.steps = append(sp.steps, st)
	}
	return sp
}

func parseStep(raw string, r resolver, ns map[string]string, filters bool) (pathStep, bool) {
	var st pathStep
	raw = trimSpace(raw)
	if raw == "text()" {
		st.text = true
		return st, true
	}
	if i := strings.IndexByte(raw, '['); i >= 0 {
		j, ok := matchBracket(raw, i)
		if !ok || j != len(raw)-1 {
			return st, false
		}
		pred := trimSpace(raw[i+1 : j])
		raw = trimSpace(raw[:i])
		var v *variable
		if strings.HasPrefix(pred, "$") {
			v = r.lookupVar(pred[1:])
		}
		n, err := strconv.Atoi(pred)
		switch {
		case v != nil && v.simple == "number":
			st.indexVar = v
		case err == nil && n >= 1:
			st.index = n
		case filters:
			st.filter = compileFastPred(pred, r, ns)
			if st.filter == nil {
				return st, false
			}
		default:
			return st, false
		}
	}
	if strings.HasPrefix(raw, "@") {
		st.attr = true
		raw = raw[1:]
		if st.index != 0 || st.indexVar != nil || st.filter != nil {
			return st, false
		}
	}
	if raw == "*" && !st.attr {
		st.local = "*"
		return st, true
	}
	prefix, local, prefixed := strings.Cut(raw, ":")
	if !prefixed {
		prefix, local = "", raw
	}
	if !validNCName(local) || prefixed && !validNCName(prefix) {
		return st, false
	}
	if prefixed {
		uri, ok := ns[prefix]
		if !ok {
			return st, false
		}
		st.space = uri
	}
	st.local = local
	return st, true
}

// validNCName reports whether s is an NCName, as XPath 1.0 reads them.
func validNCName(s string) bool { return xpath1.IsNCName(s) }

// eval walks the path from ctx (for a relative query) or from the
// variable's node in the instance tree rooted at root.
func (p *simplePath) eval(root, ctx *etree.Element) []node {
	n, found, many := p.one(root, ctx)
	switch {
	case many:
		return p.evalAll(root, ctx)
	case !found:
		return nil
	}
	return []node{n}
}

// value is eval as an XPath value: a one-node result that is an element
// or a text node is returned as its *etree.Element or *etree.CharData
// (nodesOf reads them), which spares the slice and its boxing, two
// allocations per path an exchange evaluates.
func (p *simplePath) value(root, ctx *etree.Element) any {
	n, found, many := p.one(root, ctx)
	switch {
	case many:
		return p.evalAll(root, ctx)
	case !found:
		return []node(nil)
	case n.attr < 0:
		switch t := n.tok.(type) {
		case *etree.Element:
			return t
		case *etree.CharData:
			return t
		}
	}
	return []node{n}
}

// count is the number of nodes the path selects, without collecting them.
func (p *simplePath) count(root, ctx *etree.Element) int {
	_, found, many := p.one(root, ctx)
	switch {
	case many:
		return p.walkAll(root, ctx, nil)
	case found:
		return 1
	}
	return 0
}

// one walks the path: found reports the node it selects; many that a step
// matched several elements (evalAll then has them all).
func (p *simplePath) one(root, ctx *etree.Element) (n node, found, many bool) {
	cur := ctx
	if p.v != nil {
		cur = baseNode(root, p.v, p.part)
		if cur == nil {
			return node{}, false, false
		}
	}
	var ns nsCache
	for i := range p.steps {
		st := &p.steps[i]
		switch {
		case st.text:
			for _, c := range cur.Child {
				if cd, ok := c.(*etree.CharData); ok {
					return node{tok: cd, attr: -1}, true, false
				}
			}
			return node{}, false, false
		case st.attr:
			for i, a := range cur.Attr {
				if a.Key == st.local && !isNSDecl(a) && ((st.space == "" && a.Space == "") || (st.space != "" && a.Space != "" && a.NamespaceURI() == st.space)) {
					return node{tok: cur, attr: i}, true, false
				}
			}
			return node{}, false, false
		}
		want, ok := st.position(root)
		if !ok {
			return node{}, false, false
		}
		var next *etree.Element
		k := 0
		for _, c := range cur.Child {
			e, ok := c.(*etree.Element)
			if !ok || (st.local != "*" && (e.Tag != st.local || ns.of(cur, e) != st.space)) || !st.accepts(root, e) {
				continue
			}
			k++
			if want == 0 {
				if next != nil {
					return node{}, false, true
				}
				next = e
				continue
			}
			if k == want {
				next = e
				break
			}
		}
		if next == nil {
			return node{}, false, false
		}
		ns.descend(st)
		cur = next
	}
	return node{tok: cur, attr: -1}, true, false
}

// nsCache spares a path walk most of etree's namespace lookups, each of
// which climbs to the document's top: an element that declares no
// namespace and has its parent's prefix has its parent's namespace. The
// parents' namespace is known once a step with a name test has matched
// them; before that (the walk's first step, or after a '*' step) it is
// looked up once per parent.
type nsCache struct {
	known bool
	uri   string // the namespace of the elements the walk is at (or of at)
	// at, while not known, is the parent whose namespace uri holds.
	at *etree.Element
}

// of returns the namespace of e, a child of parent (an element the walk
// is at).
func (c *nsCache) of(parent, e *etree.Element) string {
	if e.Space != parent.Space || declaresNS(e) {
		return e.NamespaceURI()
	}
	if !c.known && c.at != parent {
		c.at, c.uri = parent, parent.NamespaceURI()
	}
	return c.uri
}

// descend records what step st establishes of the namespace of the
// elements it matched.
func (c *nsCache) descend(st *pathStep) {
	c.known = st.local != "*"
	c.uri = st.space
	c.at = nil
}

// declaresNS reports whether e carries a namespace declaration.
func declaresNS(e *etree.Element) bool {
	for _, a := range e.Attr {
		if isNSDecl(a) {
			return true
		}
	}
	return false
}

// evalAll is the path for a step that matches several elements: it
// collects every match (sum() arguments and node-set comparisons).
func (p *simplePath) evalAll(root, ctx *etree.Element) []node {
	var out []node
	p.walkAll(root, ctx, &out)
	return out
}

// walkAll walks the path keeping every match, appends the nodes it selects
// to out (when not nil) and returns how many there are.
func (p *simplePath) walkAll(root, ctx *etree.Element, out *[]node) int {
	cur := make([]*etree.Element, 0, 4)
	if p.v != nil {
		if b := baseNode(root, p.v, p.part); b != nil {
			cur = append(cur, b)
		}
	} else {
		cur = append(cur, ctx)
	}
	next := make([]*etree.Element, 0, 4)
	var ns nsCache
	for i := range p.steps {
		st := &p.steps[i]
		if st.attr || st.text {
			last := simplePath{steps: []pathStep{*st}}
			k := 0
			for _, e := range cur {
				if n, found, _ := last.one(root, e); found {
					k++
					if out != nil {
						*out = append(*out, n)
					}
				}
			}
			return k
		}
		next = next[:0]
		want, ok := st.position(root)
		if !ok {
			return 0
		}
		for _, e := range cur {
			n := 0
			for _, c := range e.Child {
				ce, ok := c.(*etree.Element)
				if !ok || (st.local != "*" && (ce.Tag != st.local || ns.of(e, ce) != st.space)) || !st.accepts(root, ce) {
					continue
				}
				n++
				if want == 0 || n == want {
					next = append(next, ce)
				}
				if n == want {
					break
				}
			}
		}
		ns.descend(st)
		cur, next = next, cur
	}
	if out != nil {
		*out = slices.Grow(*out, len(cur))
		for _, e := range cur {
			*out = append(*out, node{tok: e, attr: -1})
		}
	}
	return len(cur)
}

// accepts reports whether e passes the step's filter predicate (if any).
func (st *pathStep) accepts(root, e *etree.Element) bool {
	return st.filter == nil || xpathBool(st.filter.value(root, e))
}

// position is the step's positional predicate (0 for none), read from
// its variable with XPath's number() when it is [$i]; ok is false when the
// value names no position (NaN, fractional, below 1), so nothing matches.
func (st *pathStep) position(root *etree.Element) (int, bool) {
	if st.indexVar == nil {
		return st.index, true
	}
	f := xpathNumber(stringValue(root.Child[st.indexVar.slot-1].(*etree.Element)))
	if !(f >= 1) || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

// baseNode is the node $v or $v.part denotes, or nil when uninitialized.
func baseNode(root *etree.Element, v *variable, part int) *etree.Element {
	s := root.Child[v.slot-1].(*etree.Element)
	switch {
	case v.msg != nil && part < 0:
		return s
	case v.msg != nil:
		w := s.Child[part].(*etree.Element)
		if v.msg.Parts[part].Element.IsZero() {
			return w
		}
		return firstElement(w)
	case !v.elem.IsZero():
		return firstElement(s)
	}
	return s
}

// trimSpace strips XPath's whitespace (space, tab, CR, LF; section 3.7)
// from both ends of s.
func trimSpace(s string) string { return strings.Trim(s, " \t\r\n") }
