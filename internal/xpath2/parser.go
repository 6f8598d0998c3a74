package xpath2

import (
	"math/big"
	"strconv"
	"strings"

	"github.com/orchd/orchd/internal/suggest"
)

type parser struct {
	toks  []token
	p     int
	sc    *StaticContext
	ns    map[string]string
	scope []scopeVar
	slots int
	// defNS is the default element/type namespace: the static context's,
	// or one a direct element constructor declares (XQuery).
	defNS string
	// xq enables the XQuery 1.0 expression grammar (xquery.go).
	xq bool
	// depth counts the nested expressions being parsed (MaxNesting).
	depth int
}

// MaxNesting bounds how deeply expressions may nest (parentheses,
// predicates, function arguments, if/for/some, unary signs): the parser
// recurses once per level, and 100,000 levels took seconds. An expression
// nested deeper is refused with err:XPST0003 naming the limit.
const MaxNesting = 500

// enter counts one more level of nesting; the caller calls leave when
// done with it.
func (p *parser) enter() error {
	if p.depth++; p.depth > MaxNesting {
		return p.errHere("expression nested deeper than the limit of %d levels", MaxNesting)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

type scopeVar struct {
	ns, local string
	slot      int
}

func (p *parser) peek() token { return p.toks[p.p] }
func (p *parser) peekN(n int) token {
	if p.p+n < len(p.toks) {
		return p.toks[p.p+n]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) next() token {
	t := p.toks[p.p]
	if t.kind != tkEOF {
		p.p++
	}
	return t
}
func (p *parser) isSym(s string) bool { t := p.peek(); return t.kind == tkSym && t.val == s }
func (p *parser) isName(s string) bool {
	t := p.peek()
	return t.kind == tkName && t.val == s
}
func (p *parser) expectSym(s string) error {
	if !p.isSym(s) {
		return p.errHere("expected %q", s)
	}
	p.next()
	return nil
}
func (p *parser) expectName(s string) error {
	if !p.isName(s) {
		return p.errHere("expected %q", s)
	}
	p.next()
	return nil
}
func (p *parser) errHere(format string, args ...any) *Error {
	t := p.peek()
	e := syntaxErr(t.pos, format, args...)
	if t.kind == tkEOF {
		e.Msg += " (found end of expression)"
	} else {
		e.Msg += " (found " + strconv.Quote(t.val) + ")"
	}
	return e
}

// resolve splits a lexical QName and resolves its prefix; def is the
// namespace of an unprefixed name.
func (p *parser) resolve(name, def string) (string, string, error) {
	prefix, local, ok := strings.Cut(name, ":")
	if !ok {
		return def, name, nil
	}
	if prefix == "*" {
		return "*", local, nil
	}
	uri, found := p.ns[prefix]
	if !found {
		return "", "", errf("XPST0081", "namespace prefix %q is not declared", prefix)
	}
	return uri, local, nil
}

func (p *parser) parseExpr() (expr, error) {
	e, err := p.parseExprSingle()
	if err != nil {
		return nil, err
	}
	if !p.isSym(",") {
		return e, nil
	}
	items := []expr{e}
	for p.isSym(",") {
		p.next()
		e, err := p.parseExprSingle()
		if err != nil {
			return nil, err
		}
		items = append(items, e)
	}
	return &seqExpr{items}, nil
}

func (p *parser) parseExprSingle() (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	t := p.peek()
	if p.xq {
		if e, ok, err := p.parseXQueryExprSingle(); ok || err != nil {
			return e, err
		}
	}
	if t.kind == tkName && p.peekN(1).kind == tkSym && p.peekN(1).val == "$" {
		switch t.val {
		case "for":
			return p.parseFor()
		case "some", "every":
			return p.parseQuant()
		}
	}
	if t.kind == tkName && t.val == "if" && p.peekN(1).kind == tkSym && p.peekN(1).val == "(" {
		return p.parseIf()
	}
	return p.parseOr()
}

func (p *parser) bindVar() (scopeVar, expr, error) {
	if err := p.expectSym("$"); err != nil {
		return scopeVar{}, nil, err
	}
	t := p.next()
	if t.kind != tkName {
		return scopeVar{}, nil, syntaxErr(t.pos, "expected a variable name")
	}
	ns, local, err := p.resolve(t.val, "")
	if err != nil {
		return scopeVar{}, nil, err
	}
	if err := p.expectName("in"); err != nil {
		return scopeVar{}, nil, err
	}
	in, err := p.parseExprSingle()
	if err != nil {
		return scopeVar{}, nil, err
	}
	v := scopeVar{ns, local, p.slots}
	p.slots++
	return v, in, nil
}

func (p *parser) parseFor() (expr, error) {
	p.next()
	return p.parseBindings(func(v scopeVar, in expr) (expr, error) {
		return nil, nil
	}, "return", func(vars []scopeVar, ins []expr, body expr) expr {
		for i := len(vars) - 1; i >= 0; i-- {
			body = &forExpr{slot: vars[i].slot, in: ins[i], ret: body}
		}
		return body
	})
}

func (p *parser) parseQuant() (expr, error) {
	every := p.next().val == "every"
	return p.parseBindings(nil, "satisfies", func(vars []scopeVar, ins []expr, body expr) expr {
		for i := len(vars) - 1; i >= 0; i-- {
			body = &quantExpr{every: every, slot: vars[i].slot, in: ins[i], sat: body}
		}
		return body
	})
}

func (p *parser) parseBindings(_ func(scopeVar, expr) (expr, error), kw string, build func([]scopeVar, []expr, expr) expr) (expr, error) {
	depth := len(p.scope)
	defer func() { p.scope = p.scope[:depth] }()
	var vars []scopeVar
	var ins []expr
	for {
		v, in, err := p.bindVar()
		if err != nil {
			return nil, err
		}
		p.scope = append(p.scope, v)
		vars = append(vars, v)
		ins = append(ins, in)
		if !p.isSym(",") {
			break
		}
		p.next()
	}
	if err := p.expectName(kw); err != nil {
		return nil, err
	}
	body, err := p.parseExprSingle()
	if err != nil {
		return nil, err
	}
	return build(vars, ins, body), nil
}

func (p *parser) parseIf() (expr, error) {
	p.next()
	p.next()
	c, err := p.parseExpr()
	if err != nil {
		return nil, err
	}
	if err := p.expectSym(")"); err != nil {
		return nil, err
	}
	if err := p.expectName("then"); err != nil {
		return nil, err
	}
	t, err := p.parseExprSingle()
	if err != nil {
		return nil, err
	}
	if err := p.expectName("else"); err != nil {
		return nil, err
	}
	e, err := p.parseExprSingle()
	if err != nil {
		return nil, err
	}
	return &ifExpr{c, t, e}, nil
}

func (p *parser) parseOr() (expr, error) {
	a, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.isName("or") {
		p.next()
		b, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		a = &logicExpr{false, a, b}
	}
	return a, nil
}

func (p *parser) parseAnd() (expr, error) {
	a, err := p.parseComparison()
	if err != nil {
		return nil, err
	}
	for p.isName("and") {
		p.next()
		b, err := p.parseComparison()
		if err != nil {
			return nil, err
		}
		a = &logicExpr{true, a, b}
	}
	return a, nil
}

var generalOps = map[string]string{"=": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}

func (p *parser) parseComparison() (expr, error) {
	a, err := p.parseRange()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	switch {
	case t.kind == tkSym && generalOps[t.val] != "":
		p.next()
		b, err := p.parseRange()
		if err != nil {
			return nil, err
		}
		return &compExpr{generalOps[t.val], compGeneral, a, b}, nil
	case t.kind == tkSym && (t.val == "<<" || t.val == ">>"), t.kind == tkName && t.val == "is":
		p.next()
		b, err := p.parseRange()
		if err != nil {
			return nil, err
		}
		return &nodeCompExpr{t.val, a, b}, nil
	case t.kind == tkName:
		switch t.val {
		case "eq", "ne", "lt", "le", "gt", "ge":
			p.next()
			b, err := p.parseRange()
			if err != nil {
				return nil, err
			}
			return &compExpr{t.val, compValue, a, b}, nil
		}
	}
	return a, nil
}

func (p *parser) parseRange() (expr, error) {
	a, err := p.parseAdditive()
	if err != nil {
		return nil, err
	}
	if p.isName("to") {
		p.next()
		b, err := p.parseAdditive()
		if err != nil {
			return nil, err
		}
		return &rangeExpr{a, b}, nil
	}
	return a, nil
}

func (p *parser) parseAdditive() (expr, error) {
	a, err := p.parseMultiplicative()
	if err != nil {
		return nil, err
	}
	for p.isSym("+") || p.isSym("-") {
		op := p.next().val
		b, err := p.parseMultiplicative()
		if err != nil {
			return nil, err
		}
		a = &arithExpr{op, a, b}
	}
	return a, nil
}

func (p *parser) parseMultiplicative() (expr, error) {
	a, err := p.parseUnion()
	if err != nil {
		return nil, err
	}
	for p.isSym("*") || p.isName("div") || p.isName("idiv") || p.isName("mod") {
		op := p.next().val
		b, err := p.parseUnion()
		if err != nil {
			return nil, err
		}
		a = &arithExpr{op, a, b}
	}
	return a, nil
}

func (p *parser) parseUnion() (expr, error) {
	a, err := p.parseIntersect()
	if err != nil {
		return nil, err
	}
	for p.isName("union") || p.isSym("|") {
		p.next()
		b, err := p.parseIntersect()
		if err != nil {
			return nil, err
		}
		a = &setOpExpr{"union", a, b}
	}
	return a, nil
}

func (p *parser) parseIntersect() (expr, error) {
	a, err := p.parseInstanceOf()
	if err != nil {
		return nil, err
	}
	for p.isName("intersect") || p.isName("except") {
		op := p.next().val
		b, err := p.parseInstanceOf()
		if err != nil {
			return nil, err
		}
		a = &setOpExpr{op, a, b}
	}
	return a, nil
}

func (p *parser) parseInstanceOf() (expr, error) {
	a, err := p.parseTreat()
	if err != nil {
		return nil, err
	}
	if p.isName("instance") && p.peekN(1).kind == tkName && p.peekN(1).val == "of" {
		p.next()
		p.next()
		st, err := p.parseSeqType()
		if err != nil {
			return nil, err
		}
		return &instanceExpr{a, st}, nil
	}
	return a, nil
}

func (p *parser) parseTreat() (expr, error) {
	a, err := p.parseCastable()
	if err != nil {
		return nil, err
	}
	if p.isName("treat") && p.peekN(1).kind == tkName && p.peekN(1).val == "as" {
		p.next()
		p.next()
		st, err := p.parseSeqType()
		if err != nil {
			return nil, err
		}
		return &treatExpr{a, st}, nil
	}
	return a, nil
}

func (p *parser) parseCastable() (expr, error) {
	a, err := p.parseCast()
	if err != nil {
		return nil, err
	}
	if p.isName("castable") && p.peekN(1).kind == tkName && p.peekN(1).val == "as" {
		p.next()
		p.next()
		t, opt, err := p.parseSingleType()
		if err != nil {
			return nil, err
		}
		return &castExpr{a: a, t: t, optional: opt, castable: true, ns: p.ns}, nil
	}
	return a, nil
}

func (p *parser) parseCast() (expr, error) {
	a, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	if p.isName("cast") && p.peekN(1).kind == tkName && p.peekN(1).val == "as" {
		p.next()
		p.next()
		t, opt, err := p.parseSingleType()
		if err != nil {
			return nil, err
		}
		return &castExpr{a: a, t: t, optional: opt, ns: p.ns}, nil
	}
	return a, nil
}

func (p *parser) parseSingleType() (*Type, bool, error) {
	t := p.next()
	if t.kind != tkName {
		return nil, false, syntaxErr(t.pos, "expected a type name")
	}
	ns, local, err := p.resolve(t.val, p.defNS)
	if err != nil {
		return nil, false, err
	}
	typ, ok := builtinTypes[local]
	if ns != XSNamespace || !ok {
		return nil, false, errf("XPST0051", "unknown atomic type %s", t.val)
	}
	if typ == TAnyAtomic || typ == TNOTATION {
		return nil, false, errf("XPST0080", "cannot cast to %s", t.val)
	}
	if !isAtomicType(typ) {
		if typ == TNMTOKENS || typ == TIDREFS || typ == TENTITIES || typ == TAnySimpleType {
			return nil, false, errf("XPST0080", "cannot cast to %s", t.val)
		}
		return nil, false, errf("XPST0051", "%s is not an atomic type", t.val)
	}
	opt := false
	if p.isSym("?") {
		p.next()
		opt = true
	}
	return typ, opt, nil
}

func (p *parser) parseUnary() (expr, error) {
	if p.isSym("-") || p.isSym("+") {
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		op := p.next().val
		a, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		if op == "-" {
			return &negExpr{a}, nil
		}
		return &plusExpr{a}, nil
	}
	return p.parsePath()
}

func (p *parser) startsStep() bool {
	t := p.peek()
	switch t.kind {
	case tkName, tkString, tkInt, tkDec, tkDbl, tkDir:
		if t.kind == tkName {
			// operator keywords cannot start a step after a lone "/"
			switch t.val {
			case "and", "or", "div", "idiv", "mod", "eq", "ne", "lt", "le", "gt", "ge", "is", "to",
				"union", "intersect", "except", "instance", "treat", "castable", "cast", "return",
				"satisfies", "then", "else", "in":
				n := p.peekN(1)
				return n.kind == tkSym && (n.val == "(" || n.val == "::")
			}
		}
		return true
	case tkSym:
		switch t.val {
		case "@", ".", "..", "*", "$", "(":
			return true
		}
	}
	return false
}

func (p *parser) parsePath() (expr, error) {
	if p.isSym("/") {
		p.next()
		if !p.startsStep() {
			return rootExpr{}, nil
		}
		rel, err := p.parseRelative(rootExpr{})
		return rel, err
	}
	if p.isSym("//") {
		p.next()
		return p.parseRelativeFrom(rootExpr{}, "//")
	}
	return p.parseRelative(nil)
}

func (p *parser) parseRelative(left expr) (expr, error) {
	if left != nil {
		return p.parseRelativeFrom(left, "/")
	}
	step, err := p.parseStep()
	if err != nil {
		return nil, err
	}
	return p.parseRelativeFrom(step, "")
}

// parseRelativeFrom parses the steps after left; first is the separator
// already consumed before the next step ("" when none).
func (p *parser) parseRelativeFrom(left expr, first string) (expr, error) {
	for first != "" || p.isSym("/") || p.isSym("//") {
		op := first
		if op == "" {
			op = p.next().val
		}
		first = ""
		step, err := p.parseStep()
		if err != nil {
			return nil, err
		}
		if op == "//" {
			// a//b is a/descendant::b when b is a child step without
			// predicates (positions would differ otherwise)
			if st, ok := step.(*stepExpr); ok && st.axis == axisChild && len(st.preds) == 0 {
				left = &pathExpr{left, &stepExpr{axis: axisDescendant, test: st.test}}
				continue
			}
			left = &pathExpr{left, &stepExpr{axis: axisDescendantOrSelf, test: nodeTest{anyKind: true}}}
		}
		left = &pathExpr{left, step}
	}
	return left, nil
}

func (p *parser) parsePreds() ([]expr, error) {
	var preds []expr
	for p.isSym("[") {
		p.next()
		e, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		if err := p.expectSym("]"); err != nil {
			return nil, err
		}
		preds = append(preds, e)
	}
	return preds, nil
}

var kindTestNames = map[string]bool{"node": true, "text": true, "comment": true, "processing-instruction": true,
	"element": true, "attribute": true, "document-node": true, "schema-element": true, "schema-attribute": true}

var reservedFuncNames = map[string]bool{"attribute": true, "comment": true, "document-node": true, "element": true,
	"empty-sequence": true, "if": true, "item": true, "node": true, "processing-instruction": true,
	"schema-attribute": true, "schema-element": true, "text": true, "typeswitch": true}

func (p *parser) parseStep() (expr, error) {
	t := p.peek()
	if p.xq && p.computedConstructor() {
		prim, err := p.parseComputed()
		if err != nil {
			return nil, err
		}
		return p.filtered(prim)
	}
	if t.kind == tkSym {
		switch t.val {
		case "..":
			p.next()
			return &stepExpr{axis: axisParent, test: nodeTest{anyKind: true}}, nil
		case "@":
			p.next()
			return p.parseAxisStep(axisAttribute)
		case "*":
			return p.parseAxisStep(axisChild)
		}
	}
	if t.kind == tkName {
		n := p.peekN(1)
		if n.kind == tkSym && n.val == "::" {
			ax, ok := axisNames[t.val]
			if !ok {
				return nil, syntaxErr(t.pos, "unknown axis %q", t.val)
			}
			if ax == axisNamespace {
				return nil, errf("XPST0010", "the namespace axis is not supported")
			}
			p.next()
			p.next()
			return p.parseAxisStep(ax)
		}
		if n.kind == tkSym && n.val == "(" && kindTestNames[t.val] {
			return p.parseAxisStep(axisChild)
		}
		if !(n.kind == tkSym && n.val == "(") {
			return p.parseAxisStep(axisChild)
		}
	}
	prim, err := p.parsePrimary()
	if err != nil {
		return nil, err
	}
	return p.filtered(prim)
}

// filtered parses the predicates after a primary expression.
func (p *parser) filtered(prim expr) (expr, error) {
	preds, err := p.parsePreds()
	if err != nil {
		return nil, err
	}
	if len(preds) == 0 {
		return prim, nil
	}
	return &filterExpr{prim, preds}, nil
}

func (p *parser) parseAxisStep(ax axis) (expr, error) {
	test, err := p.parseNodeTest(ax)
	if err != nil {
		return nil, err
	}
	if ax == axisAttribute && test.kind == 0 && !test.anyKind {
		test.kind = AttributeNode
	}
	preds, err := p.parsePreds()
	if err != nil {
		return nil, err
	}
	return &stepExpr{axis: ax, test: test, preds: preds}, nil
}

func (p *parser) parseNodeTest(ax axis) (nodeTest, error) {
	t := p.peek()
	if t.kind == tkSym && t.val == "*" {
		p.next()
		return nodeTest{nameTest: true, ns: "*", local: "*"}, nil
	}
	if t.kind != tkName {
		return nodeTest{}, p.errHere("expected a node test")
	}
	if n := p.peekN(1); n.kind == tkSym && n.val == "(" && kindTestNames[t.val] {
		return p.parseKindTest()
	}
	p.next()
	def := p.defNS
	if ax == axisAttribute {
		def = ""
	}
	if strings.HasSuffix(t.val, ":*") {
		ns, _, err := p.resolve(strings.TrimSuffix(t.val, ":*")+":x", def)
		if err != nil {
			return nodeTest{}, err
		}
		return nodeTest{nameTest: true, ns: ns, local: "*"}, nil
	}
	ns, local, err := p.resolve(t.val, def)
	if err != nil {
		return nodeTest{}, err
	}
	return nodeTest{nameTest: true, ns: ns, local: local}, nil
}

func (p *parser) parseKindTest() (nodeTest, error) {
	name := p.next().val
	p.next() // (
	var nt nodeTest
	switch name {
	case "node":
		nt.anyKind = true
	case "text":
		nt.kind = TextNode
	case "comment":
		nt.kind = CommentNode
	case "processing-instruction":
		nt.kind = PINode
		if t := p.peek(); t.kind == tkName || t.kind == tkString {
			p.next()
			nt.hasName, nt.local = true, strings.TrimSpace(t.val)
		}
	case "document-node":
		nt.kind = DocumentNode
		if p.isName("element") || p.isName("schema-element") {
			inner, err := p.parseKindTest()
			if err != nil {
				return nt, err
			}
			nt.docElem = &inner
		}
	case "element", "attribute", "schema-element", "schema-attribute":
		nt.kind = ElementNode
		if strings.HasSuffix(name, "attribute") {
			nt.kind = AttributeNode
		}
		if strings.HasPrefix(name, "schema-") {
			t := p.next()
			return nt, errf("XPST0008", "no schema declaration for %s", t.val)
		}
		if p.isSym("*") {
			p.next()
		} else if t := p.peek(); t.kind == tkName {
			p.next()
			def := p.defNS
			if nt.kind == AttributeNode {
				def = ""
			}
			ns, local, err := p.resolve(t.val, def)
			if err != nil {
				return nt, err
			}
			nt.hasName, nt.ns, nt.local = true, ns, local
		}
		if p.isSym(",") {
			p.next()
			t := p.next()
			if t.kind != tkName {
				return nt, syntaxErr(t.pos, "expected a type name")
			}
			ns, local, err := p.resolve(t.val, p.defNS)
			if err != nil {
				return nt, err
			}
			typ, ok := builtinTypes[local]
			if ns != XSNamespace || !ok {
				return nt, errf("XPST0008", "unknown type %s", t.val)
			}
			nt.typeName = typ
			if p.isSym("?") {
				p.next()
			}
		}
	}
	if err := p.expectSym(")"); err != nil {
		return nt, err
	}
	return nt, nil
}

func (p *parser) parseSeqType() (seqType, error) {
	t := p.peek()
	if t.kind == tkName && t.val == "empty-sequence" && p.peekN(1).val == "(" {
		p.next()
		p.next()
		if err := p.expectSym(")"); err != nil {
			return seqType{}, err
		}
		return seqType{empty: true}, nil
	}
	var st seqType
	switch {
	case t.kind == tkName && t.val == "item" && p.peekN(1).val == "(":
		p.next()
		p.next()
		if err := p.expectSym(")"); err != nil {
			return st, err
		}
		st.item = itemAny
	case t.kind == tkName && kindTestNames[t.val] && p.peekN(1).val == "(":
		nt, err := p.parseKindTest()
		if err != nil {
			return st, err
		}
		st.item, st.node = itemNode, nt
	case t.kind == tkName:
		p.next()
		ns, local, err := p.resolve(t.val, p.defNS)
		if err != nil {
			return st, err
		}
		typ, ok := builtinTypes[local]
		if ns != XSNamespace || !ok {
			return st, errf("XPST0051", "unknown atomic type %s", t.val)
		}
		if !isAtomicType(typ) {
			return st, errf("XPST0051", "%s is not an atomic type", t.val)
		}
		st.item, st.atomic = itemAtomic, typ
	default:
		return st, p.errHere("expected a sequence type")
	}
	if t := p.peek(); t.kind == tkSym && (t.val == "?" || t.val == "*" || t.val == "+") {
		p.next()
		st.occ = t.val[0]
	}
	return st, nil
}

func (p *parser) parsePrimary() (expr, error) {
	t := p.next()
	switch t.kind {
	case tkString:
		return &literalExpr{Sequence{Str(t.val)}}, nil
	case tkInt:
		n, ok := new(big.Int).SetString(t.val, 10)
		if !ok {
			return nil, syntaxErr(t.pos, "bad integer")
		}
		return &literalExpr{Sequence{Integer{n, TInteger}}}, nil
	case tkDec:
		r, ok := new(big.Rat).SetString(t.val)
		if !ok {
			return nil, syntaxErr(t.pos, "bad decimal")
		}
		return &literalExpr{Sequence{Decimal{r}}}, nil
	case tkDbl:
		f, err := strconv.ParseFloat(t.val, 64)
		if err != nil && !strings.Contains(err.Error(), "range") {
			return nil, syntaxErr(t.pos, "bad double")
		}
		return &literalExpr{Sequence{Dbl(f)}}, nil
	case tkSym:
		switch t.val {
		case "$":
			n := p.next()
			if n.kind != tkName {
				return nil, syntaxErr(n.pos, "expected a variable name")
			}
			ns, local, err := p.resolve(n.val, "")
			if err != nil {
				return nil, err
			}
			for i := len(p.scope) - 1; i >= 0; i-- {
				if v := p.scope[i]; v.ns == ns && v.local == local {
					return &localVarExpr{v.slot}, nil
				}
			}
			if p.sc.VariableIndex != nil {
				i, ok := p.sc.VariableIndex(ns, local)
				if !ok {
					return nil, errf("XPST0008", "variable $%s is not declared", n.val)
				}
				return &extVarExpr{ns: ns, local: local, index: i}, nil
			}
			if p.sc.Variables != nil && !p.sc.Variables(ns, local) {
				return nil, errf("XPST0008", "variable $%s is not declared", n.val)
			}
			return &extVarExpr{ns: ns, local: local, index: -1}, nil
		case "(":
			if p.isSym(")") {
				p.next()
				return &literalExpr{nil}, nil
			}
			e, err := p.parseExpr()
			if err != nil {
				return nil, err
			}
			if err := p.expectSym(")"); err != nil {
				return nil, err
			}
			return e, nil
		case ".":
			return contextExpr{}, nil
		}
		return nil, syntaxErr(t.pos, "unexpected %q", t.val)
	case tkDir:
		return p.parseDirect(t.dir)
	case tkName:
		if !p.isSym("(") {
			return nil, syntaxErr(t.pos, "unexpected name %q", t.val)
		}
		if reservedFuncNames[t.val] {
			return nil, syntaxErr(t.pos, "%q cannot be a function name", t.val)
		}
		p.next()
		var args []expr
		if !p.isSym(")") {
			for {
				a, err := p.parseExprSingle()
				if err != nil {
					return nil, err
				}
				args = append(args, a)
				if !p.isSym(",") {
					break
				}
				p.next()
			}
		}
		if err := p.expectSym(")"); err != nil {
			return nil, err
		}
		return p.makeCall(t.val, args)
	}
	return nil, syntaxErr(t.pos, "unexpected end of expression")
}

func (p *parser) makeCall(name string, args []expr) (expr, error) {
	ns, local, err := p.resolve(name, FnNamespace)
	if err != nil {
		return nil, err
	}
	if ns == XSNamespace {
		typ, ok := builtinTypes[local]
		if !ok || !isAtomicType(typ) || typ.abstract {
			return nil, errf("XPST0017", "unknown constructor function %s", name)
		}
		if len(args) != 1 {
			return nil, errf("XPST0017", "constructor function %s takes one argument", name)
		}
		return &castExpr{a: args[0], t: typ, optional: true, ns: p.ns}, nil
	}
	lib := p.sc.functions()
	fn := lib.Lookup(ns, local, len(args))
	if fn == nil {
		if a := lib.arities(ns, local); a != "" {
			return nil, errf("XPST0017", "function %s takes %s arguments, not %d", name, a, len(args))
		}
		return nil, errf("XPST0017", "unknown function %s#%d%s", name, len(args), suggest.DidYouMean(local, lib.names(ns)))
	}
	return &callExpr{fn, args}, nil
}
