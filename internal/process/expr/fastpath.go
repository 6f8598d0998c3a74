package expr

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/xpath1"
)

// SimplePath is a compiled location path of the form most assignments
// use: [$var[.part]] followed by child steps with an optional predicate,
// optionally ending in @attr or text(). A predicate is positional ([3] or
// [$i]) or, in XPath 1.0, a fastExpr that is not a number
// ([po:qty > 0], [not(po:sku)]). The runtime walks it directly over the
// etree, without the general XPath engine; anything else goes to
// internal/xpath1.
type SimplePath struct {
	v     *Var // nil for a relative query
	Part  int
	Steps []PathStep
}

type PathStep struct {
	Space, Local string // element name test; local "*" matches any element
	Attr         bool   // @local (space for prefixed attributes)
	Text         bool   // text()
	Index        int    // 1-based positional predicate, 0 for none
	IndexVar     *Var
	// filter is a boolean predicate, tested with each candidate element
	// as its context node.
	filter FastExpr
}

// CompileSimplePath recognizes src as a simple path with positional
// predicates only, which XPath 1.0 and 2.0 read alike. ns resolves
// prefixes; relative is true for a <query> (no leading variable).
func CompileSimplePath(src string, r Resolver, ns map[string]string, relative bool) *SimplePath {
	return CompilePath(src, r, ns, relative, false)
}

// CompilePath is compileSimplePath that, with filters, also takes XPath 1.0
// boolean predicates (compileFastPred).
func CompilePath(src string, r Resolver, ns map[string]string, relative, filters bool) *SimplePath {
	s := trimSpace(src)
	sp := &SimplePath{Part: -1}
	if !relative {
		if !strings.HasPrefix(s, "$") {
			return nil
		}
		j := 1
		for j < len(s) && IsNameChar(s[j]) && s[j] != '.' {
			j++
		}
		v := r.LookupVar(s[1:j])
		if v == nil {
			return nil
		}
		sp.v = v
		if j < len(s) && s[j] == '.' {
			k := j + 1
			for k < len(s) && IsNameChar(s[k]) && s[k] != '.' {
				k++
			}
			sp.Part = v.PartIndex(s[j+1 : k])
			if sp.Part < 0 {
				return nil
			}
			j = k
		}
		s = s[j:]
		if s == "" {
			// A bare simple-typed $var is a value (number or string), not
			// a node: leave it to the general engine.
			if v.Simple != "" {
				return nil
			}
			return sp
		}
		if s[0] != '/' || strings.HasPrefix(s, "//") {
			return nil
		}
		s = s[1:]
	}
	steps, err := SplitSteps(s)
	if err != nil {
		return nil
	}
	for _, raw := range steps {
		st, ok := parseStep(raw, r, ns, filters)
		if !ok {
			return nil
		}
		if len(sp.Steps) > 0 {
			if last := sp.Steps[len(sp.Steps)-1]; last.Attr || last.Text {
				return nil
			}
		}
		sp.Steps = append(sp.Steps, st)
	}
	return sp
}

func parseStep(raw string, r Resolver, ns map[string]string, filters bool) (PathStep, bool) {
	var st PathStep
	raw = trimSpace(raw)
	if raw == "text()" {
		st.Text = true
		return st, true
	}
	if i := strings.IndexByte(raw, '['); i >= 0 {
		j, ok := matchBracket(raw, i)
		if !ok || j != len(raw)-1 {
			return st, false
		}
		pred := trimSpace(raw[i+1 : j])
		raw = trimSpace(raw[:i])
		var v *Var
		if strings.HasPrefix(pred, "$") {
			v = r.LookupVar(pred[1:])
		}
		n, err := strconv.Atoi(pred)
		switch {
		case v != nil && v.Simple == "number":
			st.IndexVar = v
		case err == nil && n >= 1:
			st.Index = n
		case filters:
			st.filter = CompileFastPred(pred, r, ns)
			if st.filter == nil {
				return st, false
			}
		default:
			return st, false
		}
	}
	if strings.HasPrefix(raw, "@") {
		st.Attr = true
		raw = raw[1:]
		if st.Index != 0 || st.IndexVar != nil || st.filter != nil {
			return st, false
		}
	}
	if raw == "*" && !st.Attr {
		st.Local = "*"
		return st, true
	}
	prefix, local, prefixed := strings.Cut(raw, ":")
	if !prefixed {
		prefix, local = "", raw
	}
	if !ValidNCName(local) || prefixed && !ValidNCName(prefix) {
		return st, false
	}
	if prefixed {
		uri, ok := ns[prefix]
		if !ok {
			return st, false
		}
		st.Space = uri
	}
	st.Local = local
	return st, true
}

// ValidNCName reports whether s is an NCName, as XPath 1.0 reads them.
func ValidNCName(s string) bool { return xpath1.IsNCName(s) }

// Eval walks the path from ctx (for a relative query) or from the
// variable's node in the instance tree rooted at root.
func (p *SimplePath) Eval(root, ctx *etree.Element) []Node {
	n, found, many := p.one(root, ctx)
	switch {
	case many:
		return p.EvalAll(root, ctx)
	case !found:
		return nil
	}
	return []Node{n}
}

// Value is eval as an XPath value: a one-node result that is an element
// or a text node is returned as its *etree.Element or *etree.CharData
// (nodesOf reads them), which spares the slice and its boxing, two
// allocations per path an exchange evaluates.
func (p *SimplePath) Value(root, ctx *etree.Element) any {
	n, found, many := p.one(root, ctx)
	switch {
	case many:
		return p.EvalAll(root, ctx)
	case !found:
		return []Node(nil)
	case n.Attr < 0:
		switch t := n.Tok.(type) {
		case *etree.Element:
			return t
		case *etree.CharData:
			return t
		}
	}
	return []Node{n}
}

// count is the number of nodes the path selects, without collecting them.
func (p *SimplePath) count(root, ctx *etree.Element) int {
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
func (p *SimplePath) one(root, ctx *etree.Element) (n Node, found, many bool) {
	cur := ctx
	if p.v != nil {
		cur = BaseNode(root, p.v, p.Part)
		if cur == nil {
			return Node{}, false, false
		}
	}
	var ns nsCache
	for i := range p.Steps {
		st := &p.Steps[i]
		switch {
		case st.Text:
			for _, c := range cur.Child {
				if cd, ok := c.(*etree.CharData); ok {
					return Node{Tok: cd, Attr: -1}, true, false
				}
			}
			return Node{}, false, false
		case st.Attr:
			for i, a := range cur.Attr {
				if a.Key == st.Local && !xpath1.IsNSDecl(a) && ((st.Space == "" && a.Space == "") || (st.Space != "" && a.Space != "" && a.NamespaceURI() == st.Space)) {
					return Node{Tok: cur, Attr: i}, true, false
				}
			}
			return Node{}, false, false
		}
		want, ok := st.Position(root)
		if !ok {
			return Node{}, false, false
		}
		var next *etree.Element
		k := 0
		for _, c := range cur.Child {
			e, ok := c.(*etree.Element)
			if !ok || (st.Local != "*" && (e.Tag != st.Local || ns.of(cur, e) != st.Space)) || !st.accepts(root, e) {
				continue
			}
			k++
			if want == 0 {
				if next != nil {
					return Node{}, false, true
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
			return Node{}, false, false
		}
		ns.descend(st)
		cur = next
	}
	return Node{Tok: cur, Attr: -1}, true, false
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
func (c *nsCache) descend(st *PathStep) {
	c.known = st.Local != "*"
	c.uri = st.Space
	c.at = nil
}

// declaresNS reports whether e carries a namespace declaration.
func declaresNS(e *etree.Element) bool {
	for _, a := range e.Attr {
		if xpath1.IsNSDecl(a) {
			return true
		}
	}
	return false
}

// EvalAll is the path for a step that matches several elements: it
// collects every match (sum() arguments and node-set comparisons).
func (p *SimplePath) EvalAll(root, ctx *etree.Element) []Node {
	var out []Node
	p.walkAll(root, ctx, &out)
	return out
}

// walkAll walks the path keeping every match, appends the nodes it selects
// to out (when not nil) and returns how many there are.
func (p *SimplePath) walkAll(root, ctx *etree.Element, out *[]Node) int {
	cur := make([]*etree.Element, 0, 4)
	if p.v != nil {
		if b := BaseNode(root, p.v, p.Part); b != nil {
			cur = append(cur, b)
		}
	} else {
		cur = append(cur, ctx)
	}
	next := make([]*etree.Element, 0, 4)
	var ns nsCache
	for i := range p.Steps {
		st := &p.Steps[i]
		if st.Attr || st.Text {
			last := SimplePath{Steps: []PathStep{*st}}
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
		want, ok := st.Position(root)
		if !ok {
			return 0
		}
		for _, e := range cur {
			n := 0
			for _, c := range e.Child {
				ce, ok := c.(*etree.Element)
				if !ok || (st.Local != "*" && (ce.Tag != st.Local || ns.of(e, ce) != st.Space)) || !st.accepts(root, ce) {
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
			*out = append(*out, Node{Tok: e, Attr: -1})
		}
	}
	return len(cur)
}

// accepts reports whether e passes the step's filter predicate (if any).
func (st *PathStep) accepts(root, e *etree.Element) bool {
	return st.filter == nil || XpathBool(st.filter.Value(root, e))
}

// Position is the step's positional predicate (0 for none), read from
// its variable with XPath's number() when it is [$i]; ok is false when the
// value names no position (NaN, fractional, below 1), so nothing matches.
func (st *PathStep) Position(root *etree.Element) (int, bool) {
	if st.IndexVar == nil {
		return st.Index, true
	}
	f := XpathNumber(StringValue(root.Child[st.IndexVar.Slot-1].(*etree.Element)))
	if !(f >= 1) || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

// BaseNode is the node $v or $v.part denotes, or nil when uninitialized.
func BaseNode(root *etree.Element, v *Var, part int) *etree.Element {
	s := root.Child[v.Slot-1].(*etree.Element)
	switch {
	case v.Msg != nil && part < 0:
		return s
	case v.Msg != nil:
		w := s.Child[part].(*etree.Element)
		if v.Msg.Parts[part].Element.IsZero() {
			return w
		}
		return FirstElement(w)
	case !v.Elem.IsZero():
		return FirstElement(s)
	}
	return s
}

// trimSpace strips XPath's whitespace (space, tab, CR, LF; section 3.7)
// from both ends of s.
func trimSpace(s string) string { return strings.Trim(s, " \t\r\n") }
