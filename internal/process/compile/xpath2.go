package compile

import (
	"fmt"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/deploy"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xpath2"
)

// compileXPath2 compiles text, written in e, as XPath 2.0: an expression
// over the variables, or (query) a path relative to a variable's node.
// Errors are reported in the compiler's style and nil returned.
func (c *compiler) compileXPath2(e *ast.Element, text string, query bool) *expr.Expr {
	ns := expr.XpathNS(e.Namespaces())
	if err := expr.CheckActiveBPEL(text, ns); err != nil {
		c.exprError(e, err)
		return nil
	}
	if strings.Contains(text, "doXslTransform") && !c.prepareXSL(e, text, ns) {
		return nil
	}
	x2 := &expr.Xp2Expr{Query: query}
	// bpel:getVariableProperty('v', 'p:prop') takes literals: each call
	// becomes a variable read through the propertyAlias, resolved now.
	var perr error
	src := expr.GetVarProp2RE.ReplaceAllStringFunc(text, func(m string) string {
		sub := expr.GetVarProp2RE.FindStringSubmatch(m)
		if u := ns[sub[1]]; u != xmldoc.NSBPEL && u != xmldoc.NSBPEL2004 {
			return m
		}
		pns := map[string]string{}
		for k, v := range ns {
			pns[k] = v
		}
		p, err := c.PropertyPath(sub[2]+sub[3], sub[4]+sub[5], e.Src, pns)
		if err == nil {
			var px *expr.Expr
			px, err = expr.NewExpr(m, "string("+p+")", pns)
			if err == nil {
				x2.Refs = append(x2.Refs, expr.Xp2Ref{Kind: expr.RefProperty, Prop: px})
				return fmt.Sprintf("$%s:p%d", expr.PropPrefix, len(x2.Refs)-1)
			}
		}
		if perr == nil {
			perr = err
		}
		return m
	})
	if perr != nil {
		c.exprError(e, perr)
		return nil
	}
	if src != text {
		ns[expr.PropPrefix] = expr.NsXP2Property
	}
	sc := &xpath2.StaticContext{Namespaces: ns, Functions: c.xpath2Functions()}
	var unknown error
	sc.VariableIndex = func(space, local string) (int, bool) {
		r, ok := c.xp2Variable(space, local)
		if !ok {
			if unknown == nil {
				unknown = fmt.Errorf("undeclared variable $%s in %q", local, text)
			}
			return 0, false
		}
		if r.Kind == expr.RefProperty {
			var i int
			if _, err := fmt.Sscanf(local, "p%d", &i); err != nil || i >= len(x2.Refs) {
				return 0, false
			}
			return i, true
		}
		for i, o := range x2.Refs {
			if o.Kind == r.Kind && o.V == r.V && o.Part == r.Part && o.Kind != expr.RefProperty {
				return i, true
			}
		}
		x2.Refs = append(x2.Refs, r)
		return len(x2.Refs) - 1, true
	}
	compile, lang := xpath2.Compile, "XPath 2.0"
	if c.isXQuery(e, map[bool]string{false: "expressionLanguage", true: "queryLanguage"}[query]) {
		compile, lang = xpath2.CompileXQuery, "XQuery 1.0"
	}
	x, err := compile(src, sc)
	if err != nil {
		if unknown != nil {
			c.errorf(e, "%v", unknown)
			return nil
		}
		c.errorf(e, "invalid %s %s %q: %v", lang, map[bool]string{false: "expression", true: "query"}[query], text, err)
		return nil
	}
	x2.X = x
	if len(c.links) > 0 && strings.Contains(text, "getLinkStatus") {
		x2.Links = map[string]*expr.Var{}
		for _, scope := range c.links {
			for name, l := range scope {
				x2.Links[name] = l.V
			}
		}
	}
	return &expr.Expr{Src: text, Text: src, Ns: ns, X2: x2}
}

// xp2Variable resolves an external variable of an XPath 2.0 expression.
func (c *compiler) xp2Variable(space, local string) (expr.Xp2Ref, bool) {
	switch space {
	case xmldoc.NSODEFunctions:
		switch local {
		case "pid":
			return expr.Xp2Ref{Kind: expr.RefPID}, true
		case "processQName":
			return expr.Xp2Ref{Kind: expr.RefProcessQName}, true
		case "currentEventDateTime":
			return expr.Xp2Ref{Kind: expr.RefEventTime}, true
		}
		return expr.Xp2Ref{}, false
	case expr.NsXP2Property:
		return expr.Xp2Ref{Kind: expr.RefProperty}, true
	case "":
	default:
		return expr.Xp2Ref{}, false
	}
	name, part, _ := strings.Cut(local, ".")
	v := c.LookupVar(name)
	if v == nil {
		return expr.Xp2Ref{}, false
	}
	r := expr.Xp2Ref{Kind: expr.RefVar, V: v, Part: -1}
	if part != "" {
		r.Part = v.PartIndex(part)
		if r.Part < 0 {
			return expr.Xp2Ref{}, false
		}
		r.Simple = expr.BuiltinSimple(v.Msg.Parts[r.Part].Type)
		return r, true
	}
	r.Simple = expr.BuiltinSimple(v.Typ)
	if strings.HasPrefix(v.Name, "link:") {
		r.Simple = xpath2.TBoolean
	}
	return r, true
}

// toXPath2 compiles an XPath 2.0 to-expression: $var[.part][/path], a
// path the runtime can also create missing steps of, or any other
// expression, which at run time must select exactly one node of a
// variable (else bpel:selectionFailure).
func (c *compiler) toXPath2(e *ast.Element, text string, t *plan.ToSpec) bool {
	if strings.HasPrefix(text, "$") {
		j := 1
		for j < len(text) && expr.IsNameChar(text[j]) && text[j] != '.' {
			j++
		}
		if v := c.LookupVar(text[1:j]); v != nil {
			part, k := -1, j
			if k < len(text) && text[k] == '.' {
				k++
				for k < len(text) && expr.IsNameChar(text[k]) && text[k] != '.' {
					k++
				}
				part = v.PartIndex(text[j+1 : k])
			}
			rest := strings.TrimSpace(text[k:])
			if (k == j || part >= 0) && (rest == "" || strings.HasPrefix(rest, "/") && !strings.HasPrefix(rest, "//")) {
				t.V, t.Part = v, part
				if rest == "" {
					return true
				}
				x := c.compileXPath2(e, rest[1:], true)
				if x == nil {
					return false
				}
				x.Fast = expr.CompileSimplePath(rest[1:], c, x.Ns, true)
				t.Query = x
				return true
			}
		}
	}
	t.X = c.compileXPath2(e, text, false)
	return t.X != nil
}

// XPath2 compiles src, an XPath 2.0 expression (a query when query is
// set), against the process-level variables of pl with the namespaces in
// scope at at; dp gives ode:process-property its properties. It compiles
// one expression outside a bundle, for tests and tools that evaluate it
// against a deployed process's instance.
func XPath2(pl *plan.Plan, dp *deploy.Process, at *etree.Element, src string, query bool) (*expr.Expr, error) {
	root := at
	for root.Parent() != nil && root.Parent().Tag != "" {
		root = root.Parent()
	}
	vars := make(map[string]*expr.Var, len(pl.Vars))
	for _, v := range pl.Vars {
		vars[v.Name] = v
	}
	doc := &xmldoc.Document{File: "expression", Root: root}
	var el *ast.Element
	tree := ast.Parse(doc)
	ast.Inspect(tree, func(n ast.Node) bool {
		if e := n.Elem(); e.Src == at {
			el = e
		}
		return el == nil
	})
	c := &compiler{doc: doc, root: &tree.Element, errs: &xmldoc.Errors{}, dp: dp, p: pl,
		scopes: []map[string]*expr.Var{vars}}
	x := c.compileXPath2(el, src, query)
	if err := c.errs.Err(); err != nil || x == nil {
		return nil, err
	}
	return x, nil
}
