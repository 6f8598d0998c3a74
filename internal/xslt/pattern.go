package xslt

import (
	"fmt"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xpath2"
)

// pattern is an XSLT match pattern: alternatives separated by '|'.
type pattern struct{ alts []*pathPat }

// pathPat is one location path pattern, its steps left to right.
type pathPat struct {
	root  bool         // the pattern "/"
	abs   bool         // starts with "/" or "//"
	idkey *xpath2.Expr // a leading id() or key() call
	steps []patStep
}

type patStep struct {
	desc bool // separated from the previous step (or the root) by "//"
	attr bool
	test nameTest
	// pred, for a step with predicates, selects the step's nodes from
	// the parent ("child::test[...]"), so positions count as in XPath.
	pred *xpath2.Expr
}

// nameTest is a node test.
type nameTest struct {
	kind  byte // 'n' name, '*' any name, 'p' ns:*, 'N' node(), 't' text(), 'c' comment(), 'i' processing-instruction()
	ns    string
	local string
}

func (c *compiler) pattern(e *etree.Element, attr string) *pattern {
	src := e.SelectAttrValue(attr, "")
	p, err := parsePattern(src, c.staticContext(e))
	if err != nil {
		c.fail(e, "%s pattern %q: %w", attr, src, err)
		return nil
	}
	return p
}

// splitTop splits s at sep outside brackets and string literals.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; ch {
		case '\'', '"':
			if j := strings.IndexByte(s[i+1:], ch); j >= 0 {
				i += j + 1
			} else {
				i = len(s) - 1
			}
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func parsePattern(src string, sc *xpath2.StaticContext) (*pattern, error) {
	p := &pattern{}
	if strings.TrimSpace(src) == "" {
		return nil, fmt.Errorf("empty pattern")
	}
	for _, alt := range splitTop(src, '|') {
		pp, err := parsePathPattern(strings.TrimSpace(alt), sc)
		if err != nil {
			return nil, err
		}
		p.alts = append(p.alts, pp)
	}
	return p, nil
}

func parsePathPattern(s string, sc *xpath2.StaticContext) (*pathPat, error) {
	pp := &pathPat{}
	if s == "" {
		return nil, fmt.Errorf("empty alternative")
	}
	if s == "/" {
		pp.root = true
		return pp, nil
	}
	parts := splitTop(s, '/')
	desc := false
	for i, part := range parts {
		part = strings.TrimSpace(part)
		if part == "" {
			if i == 0 {
				pp.abs = true
				continue
			}
			if desc {
				return nil, fmt.Errorf("'///' in pattern")
			}
			desc = true
			continue
		}
		if i == 0 && (strings.HasPrefix(part, "id(") || strings.HasPrefix(part, "key(") || strings.HasPrefix(part, "id (") || strings.HasPrefix(part, "key (")) {
			x, err := xpath2.Compile(part, sc)
			if err != nil {
				return nil, err
			}
			pp.idkey = x
			continue
		}
		st, err := parseStep(part, sc)
		if err != nil {
			return nil, err
		}
		st.desc = desc
		desc = false
		pp.steps = append(pp.steps, st)
	}
	if desc || (len(pp.steps) == 0 && pp.idkey == nil) {
		return nil, fmt.Errorf("pattern ends with '/'")
	}
	return pp, nil
}

func parseStep(s string, sc *xpath2.StaticContext) (patStep, error) {
	var st patStep
	axis := "child::"
	switch {
	case strings.HasPrefix(s, "@"):
		st.attr, s, axis = true, strings.TrimSpace(s[1:]), "attribute::"
	case strings.HasPrefix(s, "attribute::"):
		st.attr, s, axis = true, s[len("attribute::"):], "attribute::"
	case strings.HasPrefix(s, "child::"):
		s = s[len("child::"):]
	case strings.Contains(s, "::") && !strings.Contains(s[:strings.Index(s, "::")], "["):
		return st, fmt.Errorf("axis %q is not allowed in a pattern", s[:strings.Index(s, "::")])
	}
	test, preds := s, ""
	if i := strings.IndexByte(s, '['); i >= 0 {
		test, preds = strings.TrimSpace(s[:i]), s[i:]
	}
	t, err := parseNameTest(test, sc.Namespaces)
	if err != nil {
		return st, err
	}
	st.test = t
	if preds != "" {
		x, err := xpath2.Compile(axis+test+preds, sc)
		if err != nil {
			return st, err
		}
		st.pred = x
	}
	return st, nil
}

func parseNameTest(s string, ns map[string]string) (nameTest, error) {
	switch {
	case s == "*":
		return nameTest{kind: '*'}, nil
	case s == "node()":
		return nameTest{kind: 'N'}, nil
	case s == "text()":
		return nameTest{kind: 't'}, nil
	case s == "comment()":
		return nameTest{kind: 'c'}, nil
	case strings.HasPrefix(s, "processing-instruction(") && strings.HasSuffix(s, ")"):
		arg := strings.Trim(strings.TrimSpace(s[len("processing-instruction("):len(s)-1]), `'"`)
		return nameTest{kind: 'i', local: arg}, nil
	case strings.HasSuffix(s, ":*"):
		u, ok := ns[s[:len(s)-2]]
		if !ok {
			return nameTest{}, fmt.Errorf("undeclared namespace prefix %q", s[:len(s)-2])
		}
		return nameTest{kind: 'p', ns: u}, nil
	}
	if s == "" || strings.ContainsAny(s, "()[]/@$ \t\n'\"=<>!|,+") {
		return nameTest{}, fmt.Errorf("%q is not a node test", s)
	}
	prefix, local, ok := strings.Cut(s, ":")
	if !ok {
		return nameTest{kind: 'n', local: s}, nil
	}
	u, found := ns[prefix]
	if !found {
		return nameTest{}, fmt.Errorf("undeclared namespace prefix %q", prefix)
	}
	return nameTest{kind: 'n', ns: u, local: local}, nil
}

// nameTest parses a name test of strip-space or preserve-space.
func (c *compiler) nameTest(e *etree.Element, s string) (nameTest, error) {
	ns := xmldoc.Namespaces(e)
	delete(ns, "")
	return parseNameTest(s, ns)
}

// defaultPriority is XSLT 1.0's (section 5.5).
func (pp *pathPat) defaultPriority() float64 {
	if pp.root || pp.abs || pp.idkey != nil || len(pp.steps) != 1 || pp.steps[0].pred != nil {
		return 0.5
	}
	switch t := pp.steps[0].test; t.kind {
	case 'n':
		return 0
	case 'i':
		if t.local != "" {
			return 0
		}
	case 'p':
		return -0.25
	}
	return -0.5
}

// matches tests a node against a name test on the child (attr false) or
// attribute axis.
func (t nameTest) matches(n xpath2.Node, attr bool) bool {
	k := n.Kind()
	if attr {
		if k != xpath2.AttributeNode {
			return false
		}
	} else if k == xpath2.AttributeNode || k == xpath2.DocumentNode {
		return false
	}
	switch t.kind {
	case 'N':
		return true
	case 't':
		return k == xpath2.TextNode
	case 'c':
		return k == xpath2.CommentNode
	case 'i':
		return k == xpath2.PINode && (t.local == "" || n.LocalName() == t.local)
	}
	if attr != (k == xpath2.AttributeNode) || (!attr && k != xpath2.ElementNode) {
		return false
	}
	switch t.kind {
	case '*':
		return true
	case 'p':
		return n.NamespaceURI() == t.ns
	}
	return n.LocalName() == t.local && n.NamespaceURI() == t.ns
}

// match reports whether n matches the pattern.
func (p *pattern) match(x *run, n xpath2.Node) (bool, error) {
	for _, a := range p.alts {
		ok, err := a.match(x, n)
		if ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

func (pp *pathPat) match(x *run, n xpath2.Node) (bool, error) {
	if pp.root {
		return n.Kind() == xpath2.DocumentNode, nil
	}
	if len(pp.steps) == 0 {
		return pp.inIDKey(x, n)
	}
	return pp.matchStep(x, len(pp.steps)-1, n)
}

func (pp *pathPat) inIDKey(x *run, n xpath2.Node) (bool, error) {
	seq, err := x.eval(pp.idkey, n, 1, 1, nil)
	if err != nil {
		return false, err
	}
	for _, it := range seq {
		if m, ok := it.(xpath2.Node); ok && m.Same(n) {
			return true, nil
		}
	}
	return false, nil
}

func (pp *pathPat) matchStep(x *run, i int, n xpath2.Node) (bool, error) {
	st := &pp.steps[i]
	if !st.test.matches(n, st.attr) {
		return false, nil
	}
	par := n.Parent()
	if st.pred != nil {
		if par == nil {
			return false, nil
		}
		seq, err := x.eval(st.pred, par, 1, 1, nil)
		if err != nil {
			return false, err
		}
		found := false
		for _, it := range seq {
			if m, ok := it.(xpath2.Node); ok && m.Same(n) {
				found = true
				break
			}
		}
		if !found {
			return false, nil
		}
	}
	// what the previous step (or the root, or id/key) must match
	prev := func(a xpath2.Node) (bool, error) {
		switch {
		case i > 0:
			return pp.matchStep(x, i-1, a)
		case pp.idkey != nil:
			return pp.inIDKey(x, a)
		case pp.abs:
			return a.Kind() == xpath2.DocumentNode, nil
		}
		return true, nil
	}
	if i == 0 && pp.idkey == nil && !pp.abs {
		return true, nil
	}
	if !st.desc {
		if par == nil {
			return false, nil
		}
		return prev(par)
	}
	for a := par; a != nil; a = a.Parent() {
		ok, err := prev(a)
		if ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}
