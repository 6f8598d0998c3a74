package process

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/antchfx/xpath"
	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/bpel"
	"github.com/orchd/orchd/internal/xpath2"
)

// expr is a compiled XPath 1.0 expression. antchfx/xpath expressions keep
// evaluation state inside, so each goroutine takes its own copy from a
// pool; the source compiled once at deploy time, so recompiling for the
// pool cannot fail.
type expr struct {
	// fast, when set, evaluates the expression without antchfx; fastX
	// likewise for expressions beyond a simple path.
	fast  *simplePath
	fastX fastExpr
	src   string // as written in the BPEL document
	text  string // after the compiler resolved variables
	ns    map[string]string
	pool  sync.Pool
	// x2 is set for an XPath 2.0 expression (xpath2.go): it evaluates
	// with internal/xpath2, after fast when that is set.
	x2 *xp2Expr
}

func newExpr(src, text string, ns map[string]string) (*expr, error) {
	if err := checkXPath1Functions(text, ns); err != nil {
		return nil, err
	}
	x, err := xpath.CompileWithNS(text, ns)
	if err != nil {
		return nil, err
	}
	e := &expr{src: src, text: text, ns: ns}
	e.pool.New = func() any {
		x, err := xpath.CompileWithNS(e.text, e.ns)
		if err != nil {
			return nil
		}
		return x
	}
	e.pool.Put(x)
	return e, nil
}

func (e *expr) get() *xpath.Expr { return e.pool.Get().(*xpath.Expr) }

// eval evaluates e with context node ctx: an element of t (a query's
// variable or part), or t's root for an expression, whose context is then
// an empty document. Each variable and part of t is a document of its own
// (see navigator).
func (e *expr) eval(t *docTree, ctx *etree.Element) any {
	root := t.root
	if e.fast != nil {
		return e.fast.value(root, ctx)
	}
	if e.fastX != nil && ctx == root {
		return e.fastX.value(root, nil)
	}
	x := e.get()
	nav := &navigator{t: t, cur: ctx, attr: -1}
	if t.vars != nil && ctx == root {
		nav.pos = onNothing
	}
	v := x.Evaluate(nav)
	if it, ok := v.(*xpath.NodeIterator); ok {
		v = collect(it)
	}
	e.pool.Put(x)
	return v
}

// node is one selected node: an element, a text node, or an attribute of
// an element.
type node struct {
	tok  etree.Token
	attr int // >= 0 when the node is tok's attribute
}

func collect(it *xpath.NodeIterator) []node {
	var out []node
	for it.MoveNext() {
		n := it.Current().(*navigator)
		out = append(out, node{tok: n.cur, attr: int(n.attr)})
	}
	return out
}

func (n node) String() string {
	switch t := n.tok.(type) {
	case *etree.Element:
		if n.attr >= 0 {
			return t.Attr[n.attr].Value
		}
		return stringValue(t)
	case *etree.CharData:
		return t.Data
	case *etree.Comment:
		return t.Data
	}
	return ""
}

// nodesIn returns v's nodes when v is a node-set: a []node, or a one-node
// result of simplePath.value (an *etree.Element or *etree.CharData), which
// it puts in buf (a caller's array, so that reading a result needs no
// allocation).
func nodesIn(v any, buf *[1]node) ([]node, bool) {
	switch t := v.(type) {
	case []node:
		return t, true
	case *etree.Element:
		buf[0] = node{tok: t, attr: -1}
		return buf[:], true
	case *etree.CharData:
		buf[0] = node{tok: t, attr: -1}
		return buf[:], true
	}
	return nil, false
}

// xpathString converts an XPath value to a string the way string() does.
func xpathString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case *etree.Element:
		return stringValue(t)
	case *etree.CharData:
		return t.Data
	case bool:
		if t {
			return "true"
		}
		return "false"
	case float64:
		return formatNumber(t)
	case []node:
		if len(t) == 0 {
			return ""
		}
		return t[0].String()
	case xpath2.Atomic:
		return t.String()
	}
	return fmt.Sprint(v)
}

func formatNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == math.Trunc(f) && math.Abs(f) < 1e15:
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func xpathBool(v any) bool {
	switch t := v.(type) {
	case bool:
		return t
	case string:
		return t != ""
	case float64:
		return t != 0 && !math.IsNaN(t)
	case []node:
		return len(t) > 0
	case *etree.Element, *etree.CharData:
		return true
	case xpath2.Atomic:
		b, _ := xpath2.EffectiveBooleanValue(xpath2.Sequence{t})
		return b
	}
	return false
}

// Language URIs for queryLanguage and expressionLanguage.
const (
	langXPath10 = "urn:oasis:names:tc:wsbpel:2.0:sublang:xpath1.0"
	langXPath20 = "urn:oasis:names:tc:wsbpel:2.0:sublang:xpath2.0"
)

// varRef is what the compiler resolves a $name or $name.part to.
type varRef struct {
	v    *variable
	part int // index into the message's parts, or -1
}

// resolver resolves names for the XPath compiler.
type resolver interface {
	lookupVar(name string) *variable
	// propertyPath returns an absolute XPath (over the instance tree) for
	// bpel:getVariableProperty(varName, property), with the namespaces it
	// needs added to ns.
	propertyPath(varName, property string, scope *etree.Element, ns map[string]string) (string, error)
}

var getVarPropRE = regexp.MustCompile(`([A-Za-z_][\w.\-]*):getVariableProperty\s*\(\s*(?:'([^']*)'|"([^"]*)")\s*,\s*(?:'([^']*)'|"([^"]*)")\s*\)`)

// rewrite resolves BPEL variable references in an XPath 1.0 expression into
// absolute paths over the instance's variable tree. asValue converts a
// simple-typed variable to its typed value (number() for numeric types) so
// that $i in a predicate is positional, as authors mean it. An absolute
// location path the author wrote starts at the context node's document
// (docRootPath), not at the tree's root: each variable and part is a
// document of its own (WS-BPEL 2.0 sections 8.2.2 and 8.2.6).
func rewrite(src string, r resolver, scope *etree.Element, ns map[string]string, asValue bool) (string, error) {
	var b strings.Builder
	// operand is true when the last token ends an operand, so that a '/'
	// next is a step separator, '*' multiplies and and/or/div/mod are
	// operators (XPath 1.0 section 3.7); otherwise '/' starts an absolute
	// path and '*' is a name test.
	operand := false
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(src[i+1:], c)
			if j < 0 {
				return "", fmt.Errorf("unterminated string literal in %q", src)
			}
			b.WriteString(src[i : i+j+2])
			i += j + 2
			operand = true
		case c == '$':
			if err := odeVariable(src, i, ns); err != nil {
				return "", err
			}
			j := i + 1
			for j < len(src) && isNameChar(src[j]) && src[j] != '.' {
				j++
			}
			name := src[i+1 : j]
			if name == "" {
				return "", fmt.Errorf("'$' without a variable name in %q", src)
			}
			part := ""
			if j < len(src) && src[j] == '.' {
				k := j + 1
				for k < len(src) && isNameChar(src[k]) && src[k] != '.' {
					k++
				}
				part = src[j+1 : k]
				j = k
			}
			v := r.lookupVar(name)
			if v == nil {
				return "", fmt.Errorf("undeclared variable $%s in %q", name, src)
			}
			path, err := v.path(part)
			if err != nil {
				return "", fmt.Errorf("%w in %q", err, src)
			}
			followedByPath := j < len(src) && (src[j] == '/' || src[j] == '[')
			if asValue && !followedByPath && v.simple != "" && part == "" {
				path = typedValue(v.simple, path)
			}
			b.WriteString(path)
			i = j
			operand = true
		case c == '/':
			n := 1
			if i+1 < len(src) && src[i+1] == '/' {
				n = 2
			}
			if !operand {
				b.WriteString(docRootPath)
				if n == 1 && !stepFollows(src, i+1) {
					i++
					operand = true
					continue
				}
			}
			b.WriteString(src[i : i+n])
			i += n
			operand = false
		case isNameChar(c) && c != '-' && c != '.' && !(c >= '0' && c <= '9'):
			j := i
			for j < len(src) && isNameChar(src[j]) {
				j++
			}
			w := src[i:j]
			operand = !(operand && (w == "and" || w == "or" || w == "div" || w == "mod"))
			b.WriteString(w)
			i = j
		case c >= '0' && c <= '9' || c == '.':
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.') {
				j++
			}
			b.WriteString(src[i:j])
			i = j
			operand = true
		default:
			switch c {
			case ' ', '\t', '\n', '\r':
			case ')', ']':
				operand = true
			case '*':
				operand = !operand
			default: // ( [ , | @ : :: and the operators
				operand = false
			}
			b.WriteByte(c)
			i++
		}
	}
	// bpel:getVariableProperty('v', 'p:prop'): its arguments are literals,
	// copied as they were; its path is the compiler's, absolute over the
	// tree.
	out := b.String()
	var perr error
	out = getVarPropRE.ReplaceAllStringFunc(out, func(m string) string {
		sub := getVarPropRE.FindStringSubmatch(m)
		if ns[sub[1]] != bpel.NSBPEL {
			return m
		}
		vname, prop := sub[2]+sub[3], sub[4]+sub[5]
		p, err := r.propertyPath(vname, prop, scope, ns)
		if err != nil && perr == nil {
			perr = err
		}
		return "string(" + p + ")"
	})
	if perr != nil {
		return "", perr
	}
	return out, nil
}

// stepFollows reports whether a location step starts at src[i] (after
// spaces), so that a '/' before it is not the root node on its own.
func stepFollows(src string, i int) bool {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
		i++
	}
	if i == len(src) {
		return false
	}
	c := src[i]
	return c == '*' || c == '@' || c == '.' || c == '/' || isNameChar(c) && c != '-' && !(c >= '0' && c <= '9')
}

// typedValue is the XPath 1.0 expression for the typed value of a
// simple-typed variable at path: number(path), string(path), or, for
// xsd:boolean, true exactly when the lexical value is "true" or "1" (so
// that a variable holding "false" tests false).
func typedValue(simple, path string) string {
	if simple == "boolean" {
		return "(normalize-space(" + path + ")='true' or normalize-space(" + path + ")='1')"
	}
	return simple + "(" + path + ")"
}

func isNameChar(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// xpathNS returns the namespace map antchfx needs: XPath 1.0 has no
// default namespace for names, so the "" binding is dropped.
func xpathNS(all map[string]string) map[string]string {
	m := make(map[string]string, len(all))
	for k, v := range all {
		if k != "" {
			m[k] = v
		}
	}
	return m
}

// renamePrefixes rewrites the prefixes of QNames in an XPath query taken
// from another document (a propertyAlias) to fresh ones, so it can be
// compiled in the scope of the BPEL document.
func renamePrefixes(q string, docNS map[string]string, ns map[string]string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(q); {
		c := q[i]
		if c == '\'' || c == '"' {
			j := strings.IndexByte(q[i+1:], c)
			if j < 0 {
				return "", fmt.Errorf("unterminated string literal in %q", q)
			}
			b.WriteString(q[i : i+j+2])
			i += j + 2
			continue
		}
		if isNameChar(c) && c != '-' && c != '.' && !(c >= '0' && c <= '9') {
			j := i
			for j < len(q) && isNameChar(q[j]) {
				j++
			}
			if j < len(q)-1 && q[j] == ':' && q[j+1] != ':' {
				prefix := q[i:j]
				uri, ok := docNS[prefix]
				if !ok {
					return "", fmt.Errorf("undeclared namespace prefix %q in query %q", prefix, q)
				}
				fresh := ""
				for p, u := range ns {
					if u == uri && strings.HasPrefix(p, "_pa") {
						fresh = p
					}
				}
				if fresh == "" {
					fresh = fmt.Sprintf("_pa%d", len(ns))
					ns[fresh] = uri
				}
				b.WriteString(fresh)
				b.WriteByte(':')
				i = j + 1
				continue
			}
			b.WriteString(q[i:j])
			i = j
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), nil
}
