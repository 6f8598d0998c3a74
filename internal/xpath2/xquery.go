package xpath2

import (
	"strings"
)

// XQuery 1.0's expression language, parsed by the XPath 2.0 parser with
// the xq switch: FLWOR expressions, typeswitch, direct and computed node
// constructors, ordered/unordered, and a prolog of namespace, default
// element namespace and external variable declarations. Modules, function
// declarations, schema import and the other prolog options are not
// supported (XPST0003).

// CompileXQuery parses and statically checks an XQuery 1.0 main module
// made of an optional prolog (xquery version, declare namespace, declare
// default element namespace, declare variable ... external) and a query
// body. Constructed nodes are etree-backed (see EtreeToken).
func CompileXQuery(src string, sc *StaticContext) (*Expr, error) {
	return compile(src, sc, true)
}

// parseProlog parses the supported prolog declarations.
func (p *parser) parseProlog() error {
	if p.isName("xquery") && p.peekN(1).kind == tkName && p.peekN(1).val == "version" {
		p.next()
		p.next()
		if t := p.next(); t.kind != tkString {
			return syntaxErr(t.pos, "expected the version string")
		} else if t.val != "1.0" {
			return errf("XQST0031", "XQuery version %q is not supported", t.val)
		}
		if p.isName("encoding") {
			p.next()
			if t := p.next(); t.kind != tkString {
				return syntaxErr(t.pos, "expected the encoding string")
			}
		}
		if err := p.expectSym(";"); err != nil {
			return err
		}
	}
	for p.isName("declare") && p.peekN(1).kind == tkName {
		p.next()
		t := p.next()
		switch {
		case t.val == "namespace":
			n := p.next()
			if n.kind != tkName || strings.Contains(n.val, ":") {
				return syntaxErr(n.pos, "expected a namespace prefix")
			}
			if err := p.expectSym("="); err != nil {
				return err
			}
			u := p.next()
			if u.kind != tkString {
				return syntaxErr(u.pos, "expected a namespace URI literal")
			}
			if n.val == "xml" || n.val == "xmlns" {
				return errf("XQST0070", "prefix %s cannot be redeclared", n.val)
			}
			p.ns = copyNS(p.ns)
			if u.val == "" {
				delete(p.ns, n.val)
			} else {
				p.ns[n.val] = u.val
			}
		case t.val == "default" && p.isName("element"):
			p.next()
			if err := p.expectName("namespace"); err != nil {
				return err
			}
			u := p.next()
			if u.kind != tkString {
				return syntaxErr(u.pos, "expected a namespace URI literal")
			}
			p.defNS = u.val
		case t.val == "variable":
			if err := p.expectSym("$"); err != nil {
				return err
			}
			if n := p.next(); n.kind != tkName {
				return syntaxErr(n.pos, "expected a variable name")
			}
			if p.isName("as") {
				p.next()
				if _, err := p.parseSeqType(); err != nil {
					return err
				}
			}
			if err := p.expectName("external"); err != nil {
				return err
			}
		default:
			return syntaxErr(t.pos, "declare %s is not supported (namespace, default element namespace and external variables only)", t.val)
		}
		if err := p.expectSym(";"); err != nil {
			return err
		}
	}
	return nil
}

func copyNS(m map[string]string) map[string]string {
	c := make(map[string]string, len(m)+1)
	for k, v := range m {
		c[k] = v
	}
	return c
}

// parseXQueryExprSingle parses the ExprSingle forms XQuery adds (FLWOR,
// typeswitch); ok is false when none starts here.
func (p *parser) parseXQueryExprSingle() (expr, bool, error) {
	t, n := p.peek(), p.peekN(1)
	if t.kind != tkName || n.kind != tkSym {
		return nil, false, nil
	}
	switch {
	case (t.val == "for" || t.val == "let") && n.val == "$":
		e, err := p.parseFLWOR()
		return e, true, err
	case t.val == "typeswitch" && n.val == "(":
		e, err := p.parseTypeswitch()
		return e, true, err
	}
	return nil, false, nil
}

// newVar declares a variable of a binding clause, not yet in scope.
func (p *parser) newVar() (scopeVar, error) {
	if err := p.expectSym("$"); err != nil {
		return scopeVar{}, err
	}
	t := p.next()
	if t.kind != tkName {
		return scopeVar{}, syntaxErr(t.pos, "expected a variable name")
	}
	ns, local, err := p.resolve(t.val, "")
	if err != nil {
		return scopeVar{}, err
	}
	v := scopeVar{ns, local, p.slots}
	p.slots++
	return v, nil
}

func (p *parser) optTypeDecl() (*seqType, error) {
	if !p.isName("as") {
		return nil, nil
	}
	p.next()
	st, err := p.parseSeqType()
	if err != nil {
		return nil, err
	}
	return &st, nil
}

func (p *parser) parseFLWOR() (expr, error) {
	depth := len(p.scope)
	defer func() { p.scope = p.scope[:depth] }()
	f := &flworExpr{}
	for p.isName("for") || p.isName("let") {
		let := p.next().val == "let"
		for {
			v, err := p.newVar()
			if err != nil {
				return nil, err
			}
			cl := flworClause{let: let, slot: v.slot, posSlot: -1}
			if cl.typ, err = p.optTypeDecl(); err != nil {
				return nil, err
			}
			var pv scopeVar
			if !let && p.isName("at") {
				p.next()
				if pv, err = p.newVar(); err != nil {
					return nil, err
				}
				if pv.ns == v.ns && pv.local == v.local {
					return nil, errf("XQST0089", "positional variable $%s has the name of its range variable", pv.local)
				}
				cl.posSlot = pv.slot
			}
			if let {
				if err := p.expectSym(":="); err != nil {
					return nil, err
				}
			} else if err := p.expectName("in"); err != nil {
				return nil, err
			}
			if cl.in, err = p.parseExprSingle(); err != nil {
				return nil, err
			}
			p.scope = append(p.scope, v)
			if cl.posSlot >= 0 {
				p.scope = append(p.scope, pv)
			}
			f.clauses = append(f.clauses, cl)
			if !p.isSym(",") {
				break
			}
			p.next()
		}
	}
	var err error
	if p.isName("where") {
		p.next()
		if f.where, err = p.parseExprSingle(); err != nil {
			return nil, err
		}
	}
	if p.isName("stable") || (p.isName("order") && p.peekN(1).kind == tkName && p.peekN(1).val == "by") {
		if p.isName("stable") {
			p.next()
		}
		if err := p.expectName("order"); err != nil {
			return nil, err
		}
		if err := p.expectName("by"); err != nil {
			return nil, err
		}
		for {
			var o orderSpec
			if o.key, err = p.parseExprSingle(); err != nil {
				return nil, err
			}
			if p.isName("ascending") {
				p.next()
			} else if p.isName("descending") {
				p.next()
				o.desc = true
			}
			if p.isName("empty") {
				p.next()
				switch {
				case p.isName("greatest"):
					o.emptyGreatest = true
				case p.isName("least"):
				default:
					return nil, p.errHere("expected greatest or least")
				}
				p.next()
			}
			if p.isName("collation") {
				p.next()
				t := p.next()
				if t.kind != tkString {
					return nil, syntaxErr(t.pos, "expected a collation URI")
				}
				if t.val != codepointCollation {
					return nil, errf("XQST0076", "unknown collation %q", t.val)
				}
			}
			f.order = append(f.order, o)
			if !p.isSym(",") {
				break
			}
			p.next()
		}
	}
	if err := p.expectName("return"); err != nil {
		return nil, err
	}
	if f.ret, err = p.parseExprSingle(); err != nil {
		return nil, err
	}
	return f, nil
}

const codepointCollation = "http://www.w3.org/2005/xpath-functions/collation/codepoint"

func (p *parser) parseTypeswitch() (expr, error) {
	p.next()
	p.next()
	op, err := p.parseExpr()
	if err != nil {
		return nil, err
	}
	if err := p.expectSym(")"); err != nil {
		return nil, err
	}
	ts := &typeswitchExpr{operand: op}
	branch := func(isDefault bool) (tsCase, error) {
		c := tsCase{slot: -1}
		depth := len(p.scope)
		defer func() { p.scope = p.scope[:depth] }()
		var v scopeVar
		bind := p.isSym("$")
		if bind {
			var err error
			if v, err = p.newVar(); err != nil {
				return c, err
			}
			c.slot = v.slot
			if !isDefault {
				if err := p.expectName("as"); err != nil {
					return c, err
				}
			}
		}
		if !isDefault {
			st, err := p.parseSeqType()
			if err != nil {
				return c, err
			}
			c.st = st
		}
		if err := p.expectName("return"); err != nil {
			return c, err
		}
		if bind {
			p.scope = append(p.scope, v)
		}
		var err error
		c.ret, err = p.parseExprSingle()
		return c, err
	}
	for p.isName("case") {
		p.next()
		c, err := branch(false)
		if err != nil {
			return nil, err
		}
		ts.cases = append(ts.cases, c)
	}
	if len(ts.cases) == 0 {
		return nil, p.errHere("expected a case clause")
	}
	if err := p.expectName("default"); err != nil {
		return nil, err
	}
	if ts.def, err = branch(true); err != nil {
		return nil, err
	}
	return ts, nil
}

// computedConstructor reports whether a computed constructor (or an
// ordered/unordered expression) starts at the current token.
func (p *parser) computedConstructor() bool {
	t, n := p.peek(), p.peekN(1)
	if t.kind != tkName {
		return false
	}
	brace := n.kind == tkSym && n.val == "{"
	switch t.val {
	case "document", "text", "comment", "ordered", "unordered":
		return brace
	case "element", "attribute", "processing-instruction":
		return brace || (n.kind == tkName && p.peekN(2).kind == tkSym && p.peekN(2).val == "{")
	}
	return false
}

// enclosed parses { Expr }; empty braces (allowed where the content is
// optional) give the empty sequence.
func (p *parser) enclosed(optional bool) (expr, error) {
	if err := p.expectSym("{"); err != nil {
		return nil, err
	}
	if optional && p.isSym("}") {
		p.next()
		return &literalExpr{nil}, nil
	}
	e, err := p.parseExpr()
	if err != nil {
		return nil, err
	}
	if err := p.expectSym("}"); err != nil {
		return nil, err
	}
	return e, nil
}

func (p *parser) parseComputed() (expr, error) {
	kw := p.next()
	switch kw.val {
	case "ordered", "unordered":
		return p.enclosed(false)
	case "document":
		e, err := p.enclosed(false)
		return &docCons{e}, err
	case "text":
		e, err := p.enclosed(false)
		return &textCons{e}, err
	case "comment":
		e, err := p.enclosed(false)
		return &commentCons{e: e}, err
	}
	var cn consName
	if p.isSym("{") {
		e, err := p.enclosed(false)
		if err != nil {
			return nil, err
		}
		cn.e, cn.ns = e, p.ns
		cn.defNS = p.defNS
		if kw.val == "attribute" {
			cn.defNS = ""
		}
	} else {
		t := p.next()
		switch kw.val {
		case "processing-instruction":
			if strings.Contains(t.val, ":") {
				return nil, syntaxErr(t.pos, "a processing-instruction target is an NCName")
			}
			cn.local = t.val
		default:
			def := p.defNS
			if kw.val == "attribute" {
				def = ""
			}
			ns, local, err := p.resolve(t.val, def)
			if err != nil {
				return nil, err
			}
			cn.prefix, cn.uri, cn.local = prefixOf(t.val), ns, local
			if kw.val == "attribute" && (t.val == "xmlns" || cn.prefix == "xmlns") {
				return nil, errf("XQDY0044", "attribute name %s is a namespace declaration", t.val)
			}
		}
	}
	content, err := p.enclosed(true)
	if err != nil {
		return nil, err
	}
	switch kw.val {
	case "element":
		return &elemCons{name: cn, content: []consPart{{e: content}}}, nil
	case "attribute":
		return &attrCons{name: cn, parts: []consPart{{e: content}}}, nil
	}
	return &piCons{name: cn, e: content}, nil
}

func prefixOf(qname string) string {
	if i := strings.IndexByte(qname, ':'); i >= 0 {
		return qname[:i]
	}
	return ""
}

// parseDirect turns a scanned direct constructor into its expression.
func (p *parser) parseDirect(d *dirNode) (expr, error) {
	switch d.kind {
	case CommentNode:
		return &commentCons{lit: d.text, isLit: true}, nil
	case PINode:
		return &piCons{name: consName{local: d.name}, lit: d.text, isLit: true}, nil
	}
	savedNS, savedDef := p.ns, p.defNS
	defer func() { p.ns, p.defNS = savedNS, savedDef }()
	ec := &elemCons{}
	declared := map[string]bool{}
	for _, a := range d.attrs {
		prefix, isDecl := "", false
		switch {
		case a.name == "xmlns":
			isDecl = true
		case strings.HasPrefix(a.name, "xmlns:"):
			isDecl, prefix = true, a.name[6:]
		}
		if !isDecl {
			continue
		}
		var uri strings.Builder
		for _, part := range a.parts {
			if part.toks != nil {
				return nil, errf("XQST0022", "at offset %d: the value of namespace declaration %s must be a literal", a.pos, a.name)
			}
			uri.WriteString(part.text)
		}
		u := strings.TrimSpace(uri.String())
		if declared[prefix] {
			return nil, errf("XQST0071", "at offset %d: namespace declaration %s repeated", a.pos, a.name)
		}
		declared[prefix] = true
		if prefix == "xmlns" || (prefix == "xml") != (u == "http://www.w3.org/XML/1998/namespace") || (u == "http://www.w3.org/2000/xmlns/") {
			return nil, errf("XQST0070", "at offset %d: namespace declaration %s=%q is not allowed", a.pos, a.name, u)
		}
		if prefix == "xml" {
			continue
		}
		if len(ec.decls) == 0 {
			p.ns = copyNS(p.ns)
		}
		ec.decls = append(ec.decls, [2]string{prefix, u})
		if prefix == "" {
			p.defNS = u
		} else if u == "" {
			delete(p.ns, prefix)
		} else {
			p.ns[prefix] = u
		}
	}
	ns, local, err := p.resolve(d.name, p.defNS)
	if err != nil {
		return nil, err
	}
	ec.name = consName{prefix: prefixOf(d.name), uri: ns, local: local}
	seen := map[[2]string]bool{}
	for _, a := range d.attrs {
		if a.name == "xmlns" || strings.HasPrefix(a.name, "xmlns:") {
			continue
		}
		ans, alocal, err := p.resolve(a.name, "")
		if err != nil {
			return nil, err
		}
		if k := [2]string{ans, alocal}; seen[k] {
			return nil, errf("XQST0040", "at offset %d: attribute %s repeated", a.pos, a.name)
		} else {
			seen[k] = true
		}
		ac := &attrCons{name: consName{prefix: prefixOf(a.name), uri: ans, local: alocal}}
		if ac.parts, err = p.consParts(a.parts, false); err != nil {
			return nil, err
		}
		ec.attrs = append(ec.attrs, ac)
	}
	if ec.content, err = p.consParts(d.content, true); err != nil {
		return nil, err
	}
	return ec, nil
}

// consParts parses the parts of direct element content (content true:
// boundary whitespace is dropped) or of an attribute value.
func (p *parser) consParts(parts []dirPart, content bool) ([]consPart, error) {
	out := make([]consPart, 0, len(parts))
	for _, part := range parts {
		switch {
		case part.node != nil:
			e, err := p.parseDirect(part.node)
			if err != nil {
				return nil, err
			}
			out = append(out, consPart{e: e})
		case part.toks != nil:
			e, err := p.subParse(part.toks, part.pos)
			if err != nil {
				return nil, err
			}
			out = append(out, consPart{e: e})
		default:
			if content && !part.keep && strings.TrimLeft(part.text, " \t\r\n") == "" {
				continue
			}
			out = append(out, consPart{text: part.text, isText: true})
		}
	}
	return out, nil
}

// subParse parses an enclosed expression's tokens in the current scope.
func (p *parser) subParse(toks []token, pos int) (expr, error) {
	q := &parser{toks: toks, sc: p.sc, ns: p.ns, scope: p.scope, slots: p.slots, defNS: p.defNS, xq: true}
	if q.peek().kind == tkEOF {
		return nil, syntaxErr(pos, "empty enclosed expression")
	}
	e, err := q.parseExpr()
	if err != nil {
		return nil, err
	}
	if q.peek().kind != tkEOF {
		return nil, q.errHere("unexpected token")
	}
	p.slots = q.slots
	return e, nil
}
