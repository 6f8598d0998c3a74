package expr

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xpath1"
	"github.com/orchd/orchd/internal/xpath2"
)

// Expr is a compiled XPath 1.0 expression (or, with x2, XPath 2.0).
// Its semantics are internal/xpath1's; fast and fastX, when set, are
// direct evaluators the compiler found equal to it for this expression
// (FuzzXPath1Fast), which spare the general evaluator's allocations.
type Expr struct {
	// Fast, when set, evaluates the expression as a simple path; fastX
	// likewise for expressions beyond a simple path.
	Fast  *SimplePath
	FastX FastExpr
	Src   string // as written in the BPEL document
	Text  string // after the compiler resolved variables
	Ns    map[string]string
	x1    *xpath1.Compiled
	// X2 is set for an XPath 2.0 expression (xpath2.go): it evaluates
	// with internal/xpath2, after fast when that is set.
	X2 *Xp2Expr
	// NoContext, when set, names what the expression reads of a context
	// node it does not have (NeedsContext): evaluating it panics with
	// ErrNoContext, which the runtime raises as
	// bpel:subLanguageExecutionFault. The compiler sets it on XPath 1.0
	// conditions.
	NoContext string
}

// xpath1Options are what an XPath 1.0 expression of a process may use:
// ns's prefixes, the core library (also under XPath 2.0's fn namespace)
// and lower-case and ends-with, as ODE's Jaxen had. Variables are paths
// by then (rewrite).
func xpath1Options(ns map[string]string) xpath1.Options {
	return xpath1.Options{Namespaces: ns, CoreNamespace: xpath2.FnNamespace, Functions: jaxenFunction}
}

// jaxenFunction binds lower-case(s) and ends-with(s, suffix), and
// ActiveBPEL's functions (abx.go).
func jaxenFunction(space, local string, arity int) (*xpath1.Func, error) {
	if space == xmldoc.NSActiveBPELFunctions {
		return abxXPath1(local, arity)
	}
	if space != "" && space != xpath2.FnNamespace {
		return nil, nil
	}
	switch {
	case local == "lower-case" && arity == 1:
		return &xpath1.Func{Result: xpath1.StringType, Call: func(_ *xpath1.Context, args []xpath1.Value) (xpath1.Value, error) {
			return strings.ToLower(xpath1.String(args[0])), nil
		}}, nil
	case local == "ends-with" && arity == 2:
		return &xpath1.Func{Result: xpath1.BooleanType, Call: func(_ *xpath1.Context, args []xpath1.Value) (xpath1.Value, error) {
			return strings.HasSuffix(xpath1.String(args[0]), xpath1.String(args[1])), nil
		}}, nil
	case local == "lower-case" || local == "ends-with":
		return nil, fmt.Errorf("wrong number of arguments (%d)", arity)
	}
	return nil, nil
}

// NewExpr compiles text, src after rewrite, as XPath 1.0. An error in
// the source's syntax names its offset in src.
func NewExpr(src, text string, ns map[string]string) (*Expr, error) {
	if err := CheckXPath1Functions(text, ns); err != nil {
		return nil, err
	}
	x, err := xpath1.Compile(text, xpath1Options(ns))
	if err != nil {
		var xe *xpath1.Error
		if _, perr := xpath1.Parse(src); perr != nil && errors.As(perr, &xe) {
			return nil, fmt.Errorf("%s at offset %d", xe.Msg, xe.Pos)
		}
		if errors.As(err, &xe) {
			return nil, errors.New(xe.Msg)
		}
		return nil, err
	}
	return &Expr{Src: src, Text: text, Ns: ns, x1: x}, nil
}

// Eval evaluates e with context node ctx: an element of t (a query's
// variable or part), or t's root for an expression, whose context is then
// an empty document. Each variable and part of t is a document of its own
// (see docTree). A dynamic error (an operand that must be a node-set is
// not) panics with its *xpath1.Error; instance.eval turns it into
// bpel:subLanguageExecutionFault.
func (e *Expr) Eval(t *DocTree, ctx *etree.Element) any {
	if e.NoContext != "" {
		panic(fmt.Errorf("%s %w", e.NoContext, ErrNoContext))
	}
	root := t.Top
	if e.Fast != nil {
		return e.Fast.Value(root, ctx)
	}
	if e.FastX != nil && ctx == root {
		return e.FastX.Value(root, nil)
	}
	return e.EvalNode(t, t.node(ctx))
}

// EvalNode evaluates e with the general evaluator at context node n.
func (e *Expr) EvalNode(t *DocTree, n xpath1.Node) any {
	v, err := e.x1.Eval(t, n, nil)
	if err != nil {
		panic(err)
	}
	if set, ok := v.(xpath1.NodeSet); ok {
		return fromNodeSet(set)
	}
	return v
}

// fromNodeSet is a node-set as the runtime's nodes.
func fromNodeSet(set xpath1.NodeSet) []Node {
	if len(set) == 0 {
		return nil
	}
	out := make([]Node, len(set))
	for i, n := range set {
		out[i] = Node{Tok: n.Tok, Attr: int(n.Attr), Doc: n.Doc}
	}
	return out
}

// Node is one selected node: an element, a text node, a comment or
// processing instruction, an attribute of an element (attr), or a
// document or namespace node (doc, as in xpath1.Node).
type Node struct {
	Tok  etree.Token
	Attr int // >= 0 when the node is tok's attribute
	Doc  xpath1.DocKind
}

func (n Node) String() string {
	if n.Doc == xpath1.NotDoc {
		switch t := n.Tok.(type) {
		case *etree.Element:
			if n.Attr >= 0 {
				return t.Attr[n.Attr].Value
			}
			return StringValue(t)
		case *etree.CharData:
			return t.Data
		}
	}
	return xpath1.Node{Tok: n.Tok, Attr: int32(n.Attr), Doc: n.Doc}.StringValue()
}

// NodesIn returns v's nodes when v is a node-set: a []node, or a one-node
// result of simplePath.value (an *etree.Element or *etree.CharData), which
// it puts in buf (a caller's array, so that reading a result needs no
// allocation).
func NodesIn(v any, buf *[1]Node) ([]Node, bool) {
	switch t := v.(type) {
	case []Node:
		return t, true
	case *etree.Element:
		buf[0] = Node{Tok: t, Attr: -1}
		return buf[:], true
	case *etree.CharData:
		buf[0] = Node{Tok: t, Attr: -1}
		return buf[:], true
	}
	return nil, false
}

// XpathString converts an XPath value to a string the way string() does.
func XpathString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case *etree.Element:
		return StringValue(t)
	case *etree.CharData:
		return t.Data
	case bool:
		if t {
			return "true"
		}
		return "false"
	case float64:
		return xpath1.FormatNumber(t)
	case []Node:
		if len(t) == 0 {
			return ""
		}
		return t[0].String()
	case xpath2.Atomic:
		return t.String()
	}
	return fmt.Sprint(v)
}

func XpathBool(v any) bool {
	switch t := v.(type) {
	case bool:
		return t
	case []Node:
		return len(t) > 0
	case *etree.Element, *etree.CharData:
		return true
	case xpath2.Atomic:
		b, _ := xpath2.EffectiveBooleanValue(xpath2.Sequence{t})
		return b
	}
	return xpath1.Bool(v)
}

// Language URIs for queryLanguage and expressionLanguage.
const (
	LangXPath10 = "urn:oasis:names:tc:wsbpel:2.0:sublang:xpath1.0"
	LangXPath20 = "urn:oasis:names:tc:wsbpel:2.0:sublang:xpath2.0"
)

// Resolver resolves names for the XPath compiler.
type Resolver interface {
	LookupVar(name string) *Var
	// PropertyPath returns an absolute XPath (over the instance tree) for
	// bpel:getVariableProperty(varName, property), with the namespaces it
	// needs added to ns.
	PropertyPath(varName, property string, scope *etree.Element, ns map[string]string) (string, error)
}

var getVarPropRE = regexp.MustCompile(`([A-Za-z_][\w.\-]*):getVariableProperty\s*\(\s*(?:'([^']*)'|"([^"]*)")\s*,\s*(?:'([^']*)'|"([^"]*)")\s*\)`)

// Rewrite resolves BPEL variable references in an XPath 1.0 expression into
// absolute paths over the instance's variable tree. asValue converts a
// simple-typed variable to its typed value (number() for numeric types) so
// that $i in a predicate is positional, as authors mean it. An absolute
// location path the author wrote starts at the context node's document
// (docRootPath), not at the tree's root: each variable and part is a
// document of its own (WS-BPEL 2.0 sections 8.2.2 and 8.2.6).
func Rewrite(src string, r Resolver, scope *etree.Element, ns map[string]string, asValue bool) (string, error) {
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
			for j < len(src) && IsNameChar(src[j]) && src[j] != '.' {
				j++
			}
			name := src[i+1 : j]
			if name == "" {
				return "", fmt.Errorf("'$' without a variable name in %q", src)
			}
			part := ""
			if j < len(src) && src[j] == '.' {
				k := j + 1
				for k < len(src) && IsNameChar(src[k]) && src[k] != '.' {
					k++
				}
				part = src[j+1 : k]
				j = k
			}
			v := r.LookupVar(name)
			if v == nil {
				return "", fmt.Errorf("undeclared variable $%s in %q", name, src)
			}
			path, err := v.Path(part)
			if err != nil {
				return "", fmt.Errorf("%w in %q", err, src)
			}
			followedByPath := j < len(src) && (src[j] == '/' || src[j] == '[')
			if asValue && !followedByPath && v.Simple != "" && part == "" {
				path = typedValue(v.Simple, path)
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
				b.WriteString(DocRootPath)
				if n == 1 && !stepFollows(src, i+1) {
					i++
					operand = true
					continue
				}
			}
			b.WriteString(src[i : i+n])
			i += n
			operand = false
		case IsNameChar(c) && c != '-' && c != '.' && !(c >= '0' && c <= '9'):
			j := i
			for j < len(src) && IsNameChar(src[j]) {
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
		if ns[sub[1]] != xmldoc.NSBPEL {
			return m
		}
		vname, prop := sub[2]+sub[3], sub[4]+sub[5]
		p, err := r.PropertyPath(vname, prop, scope, ns)
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
	return c == '*' || c == '@' || c == '.' || c == '/' || IsNameChar(c) && c != '-' && !(c >= '0' && c <= '9')
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

func IsNameChar(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// XpathNS returns the namespace map of an expression: XPath 1.0 has no
// default namespace for names, so the "" binding is dropped.
func XpathNS(all map[string]string) map[string]string {
	m := make(map[string]string, len(all))
	for k, v := range all {
		if k != "" {
			m[k] = v
		}
	}
	return m
}

// RenamePrefixes rewrites the prefixes of QNames in an XPath query taken
// from another document (a propertyAlias) to fresh ones, so it can be
// compiled in the scope of the BPEL document.
func RenamePrefixes(q string, docNS map[string]string, ns map[string]string) (string, error) {
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
		if IsNameChar(c) && c != '-' && c != '.' && !(c >= '0' && c <= '9') {
			j := i
			for j < len(q) && IsNameChar(q[j]) {
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
