package compile

import (
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/check"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
)

// assign lowers an <assign>: its copies and extension assign operations
// in document order, and the validation of what they write.
func (c *compiler) assign(n *ast.Assign, b plan.Base) plan.Activity {
	e := &n.Element
	a := &plan.Assign{Base: b}
	for _, ce := range e.Children() {
		if !isBPEL(ce) {
			continue
		}
		switch x := ce.Node().(type) {
		case *ast.Documentation, *ast.Targets, *ast.Sources:
			continue
		case *ast.ExtensionAssignOperation:
			if op := c.extensionAssign(ce); op != nil {
				a.Copies = append(a.Copies, op)
			}
		case *ast.Copy:
			if op := c.copyOp(x); op != nil {
				a.Copies = append(a.Copies, op)
			}
		default:
			c.unsupported(ce, "<"+ce.Tag+"> in <assign>")
		}
	}
	if e.AttrOr("validate", "no") == "yes" {
		a.Validate = c.schemaChecks(e, assignTargets(a.Copies))
	}
	return a
}

// copyOp lowers a <copy>; nil when it cannot run.
func (c *compiler) copyOp(n *ast.Copy) *plan.CopyOp {
	ce := &n.Element
	op := &plan.CopyOp{Pos: c.pos(ce),
		KeepSrcElementName:    ce.AttrOr("keepSrcElementName", "no") == "yes",
		IgnoreMissingFromData: ce.AttrOr("ignoreMissingFromData", "no") == "yes"}
	if n.From == nil || n.To == nil {
		c.errorf(ce, "<copy> needs <from> and <to>")
		return nil
	}
	c.from(n.From, &op.From)
	if c.compat == check.ODE {
		// ODE copied a whole message, $a to $b as well as variable="a"
		// to variable="b", between message types part by part (SA00043,
		// a warning in this mode).
		op.PartsByName = true
		if v := c.bareMessageVar(&n.From.Element); v != nil && op.From.X != nil {
			op.From = plan.FromSpec{V: v, Part: -1}
		}
	}
	insert, err := insertMissingAttr(ce)
	if err != nil {
		c.errorf(ce, "%w", err)
	}
	if !c.to(n.To, &op.To) {
		return nil
	}
	if insert {
		c.insertMissing(n.To, &op.To)
	}
	return op
}

// from lowers a from-spec: which variant is chosen by the attributes it
// has, as written (a prefixed one counts, as it did in ODE).
func (c *compiler) from(n *ast.From, f *plan.FromSpec) {
	e := &n.Element
	f.Part = -1
	switch {
	case e.Has("partnerLink"):
		f.Epr = c.fromPartnerLink(e)
	case e.Has("property"):
		f.X = c.propertyExpr(e)
	case e.Has("variable"):
		v, part, ok := c.varPart(e)
		if !ok {
			return
		}
		f.V, f.Part = v, part
		if q := n.Query; q != nil {
			f.Query = c.query(&q.Element)
		}
	case n.Literal != nil:
		// the literal's XML itself, from its source element
		f.Literal = literalContent(n.Literal.Src)
		if els := f.Literal.ChildElements(); len(els) == 1 {
			f.LitElem = els[0]
		} else {
			f.LitText = f.Literal.Text()
		}
	default:
		f.X = c.expression(e, e.Text(), true)
	}
}

// literalContent copies a <literal>'s content into a detached container,
// declaring on each element the namespaces it uses from the BPEL document.
func literalContent(lit *etree.Element) *etree.Element {
	box := etree.NewElement("literal")
	expr.CopyChildren(box, lit, nil)
	return box
}

// to lowers a to-spec: a partner link, a property, a variable (part,
// query) or an expression lvalue.
func (c *compiler) to(n *ast.To, t *plan.ToSpec) bool {
	e := &n.Element
	t.Part = -1
	switch {
	case e.Has("partnerLink"):
		t.Epr = c.toPartnerLink(e)
		return t.Epr != nil
	case e.Has("property"):
		x := c.propertyExpr(e)
		if x == nil {
			return false
		}
		t.V = c.LookupVar(e.AttrOr("variable", ""))
		if i := aliasPart(t.V, x.Src); i >= 0 {
			// The alias names a part without a query: a copy to that
			// part, which creates it in a variable not yet initialized
			// (WS-BPEL 2.0 8.2.6, 8.4.1).
			t.Part = i
			return true
		}
		t.Query = x
		return true
	case e.Has("variable"):
		v, part, ok := c.varPart(e)
		if !ok {
			return false
		}
		t.V, t.Part = v, part
		if q := n.Query; q != nil {
			t.Query = c.query(&q.Element)
		}
		return true
	}
	// An expression lvalue: $var[.part][/relative-path].
	text := strings.TrimSpace(e.Text())
	if x2, ok := c.language(e, "expressionLanguage"); !ok {
		return false
	} else if x2 {
		return c.toXPath2(e, text, t)
	}
	if !strings.HasPrefix(text, "$") {
		c.errorf(e, "<to> expression %q must start with a variable reference ($name or $name.part)", text)
		return false
	}
	j := 1
	for j < len(text) && expr.IsNameChar(text[j]) && text[j] != '.' {
		j++
	}
	v := c.LookupVar(text[1:j])
	if v == nil {
		c.errorf(e, "undeclared variable $%s in %q", text[1:j], text)
		return false
	}
	t.V = v
	if j < len(text) && text[j] == '.' {
		k := j + 1
		for k < len(text) && expr.IsNameChar(text[k]) && text[k] != '.' {
			k++
		}
		t.Part = v.PartIndex(text[j+1 : k])
		if t.Part < 0 {
			c.errorf(e, "variable %s has no part %q", v.Name, text[j+1:k])
			return false
		}
		j = k
	}
	rest := strings.TrimSpace(text[j:])
	if rest == "" {
		return true
	}
	if !strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, "//") {
		c.errorf(e, "<to> expression %q: only $var[.part]/relative/path lvalues are supported", text)
		return false
	}
	ns := expr.XpathNS(e.Namespaces())
	rw, err := expr.Rewrite(rest[1:], c, e.Src, ns, true)
	if err != nil {
		c.errorf(e, "%v", err)
		return false
	}
	x, err := expr.NewExpr(rest[1:], rw, ns)
	if err != nil {
		c.errorf(e, "invalid XPath in <to> %q: %v", text, err)
		return false
	}
	x.Fast = expr.CompilePath(rest[1:], c, ns, true, true)
	t.Query = x
	return true
}

// bareMessageVar is the message variable a from-spec's expression is
// when it is only its reference ($name), else nil (the caller checks
// that it is an expression).
func (c *compiler) bareMessageVar(e *ast.Element) *expr.Var {
	text := strings.TrimSpace(e.Text())
	if len(text) < 2 || text[0] != '$' {
		return nil
	}
	for i := 1; i < len(text); i++ {
		if !expr.IsNameChar(text[i]) || text[i] == '.' {
			return nil
		}
	}
	if v := c.LookupVar(text[1:]); v != nil && v.Msg != nil {
		return v
	}
	return nil
}

// aliasPart is the index of the part of message variable v that the <to>
// query path of a property (propertyExpr) selects whole, or -1 when the
// path reaches into a part (the alias has a query) or v is no message
// variable.
func aliasPart(v *expr.Var, path string) int {
	if v == nil || v.Msg == nil {
		return -1
	}
	base := "/" + v.SlotName() + "/"
	for i, pd := range v.Msg.Parts {
		if p, err := v.Path(pd.Name); err == nil && strings.TrimPrefix(p, base) == path {
			return i
		}
	}
	return -1
}
