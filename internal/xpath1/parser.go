package xpath1

import (
	"fmt"
	"strings"
)

// MaxDepth is how deeply expressions may nest (parentheses, predicates,
// function arguments, unary minus): deeper ones are refused, so that a
// hostile expression cannot exhaust the stack.
const MaxDepth = 500

// Error is a static or dynamic error, with the byte offset in the source
// it concerns (-1 when none).
type Error struct {
	Pos int
	Msg string
	// Src is the expression's source, when known.
	Src string
}

func (e *Error) Error() string {
	if e.Pos < 0 {
		return e.Msg
	}
	if e.Src != "" {
		return fmt.Sprintf("%s at offset %d of %q", e.Msg, e.Pos, e.Src)
	}
	return fmt.Sprintf("%s at offset %d", e.Msg, e.Pos)
}

// Variable is a variable's value, read at evaluation time.
type Variable interface {
	Value(c *Context) (Value, error)
}

// Func is an extension function: Call gets its arguments evaluated.
// Result is the type it always returns (AnyType if it varies), so that
// the compiler refuses, say, f()/a for an f that returns a string.
type Func struct {
	Result Type
	Call   func(c *Context, args []Value) (Value, error)
}

// Options bind an expression's names when it is compiled. The zero value
// has no namespaces, no variables and only the core functions.
type Options struct {
	// Namespaces maps the prefixes an expression may use to namespace
	// URIs; the "" entry, if any, is ignored (XPath 1.0 has no default
	// namespace for names).
	Namespaces map[string]string
	// Variables resolves $name (space is the prefix's URI). Nil: every
	// variable reference is an error.
	Variables func(space, local string) (Variable, error)
	// Functions resolves a call the core library does not have: a
	// prefixed name, or an unprefixed one outside section 4. It returns
	// nil, nil for an unknown function. Nil: unknown functions are
	// errors.
	Functions func(space, local string, arity int) (*Func, error)
	// CoreNamespace, when set, is a namespace whose functions are the
	// core library's too (orchd: XPath 2.0's fn namespace, so that
	// fn:count is count).
	CoreNamespace string
}

// Compiled is a compiled expression. It is immutable and safe for concurrent
// use.
type Compiled struct {
	src  string
	root Expr
}

// Source is the expression as it was compiled.
func (x *Compiled) Source() string { return x.src }

// AST is the expression's syntax tree.
func (x *Compiled) AST() Expr { return x.root }

// Compile parses src, resolving its names with opts.
func Compile(src string, opts Options) (*Compiled, error) {
	e, err := parse(src, &parser{opts: opts})
	if err != nil {
		return nil, err
	}
	return &Compiled{src: src, root: e}, nil
}

// Parse parses src without resolving names: prefixes, variables and
// functions are left as written (Space holds a name's prefix).
func Parse(src string) (Expr, error) { return parse(src, &parser{raw: true}) }

func parse(src string, p *parser) (Expr, error) {
	toks, err := lex(src)
	if err != nil {
		err.(*Error).Src = src
		return nil, err
	}
	p.toks, p.src = toks, src
	e := p.expr()
	if p.err == nil && p.peek().kind != tEOF {
		p.failf(p.peek().pos, "unexpected %s", p.describe(p.peek()))
	}
	if p.err != nil {
		p.err.Src = src
		return nil, p.err
	}
	return e, nil
}

type parser struct {
	toks  []token
	i     int
	opts  Options
	src   string
	err   *Error
	depth int
	raw   bool // Parse: no name resolution
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) failf(pos int, format string, args ...any) {
	if p.err == nil {
		p.err = &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
	}
	// Stop: the rest parses as the end.
	p.i = len(p.toks) - 1
}

func (p *parser) describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tLiteral:
		return "string literal"
	case tNumber:
		return "number"
	case tVar:
		return "variable $" + t.text
	case tNameTest, tNodeType, tOpName, tFuncName, tAxisName:
		return fmt.Sprintf("%q", t.text)
	}
	end := len(p.src)
	if p.i < len(p.toks)-1 {
		end = p.toks[p.i+1].pos
	}
	if t.pos < end {
		return fmt.Sprintf("%q", strings.TrimSpace(p.src[t.pos:end]))
	}
	return "token"
}

func (p *parser) expect(k tokKind, what string) bool {
	if p.peek().kind != k {
		p.failf(p.peek().pos, "expected %s, found %s", what, p.describe(p.peek()))
		return false
	}
	p.next()
	return true
}

func (p *parser) enter(pos int) bool {
	p.depth++
	if p.depth > MaxDepth {
		p.failf(pos, "expression nested deeper than the limit of %d levels", MaxDepth)
		return false
	}
	return true
}

func (p *parser) leave() { p.depth-- }

func (p *parser) expr() Expr {
	if !p.enter(p.peek().pos) {
		return &NumLit{}
	}
	defer p.leave()
	return p.or()
}

func (p *parser) binary(next func() Expr, ops map[tokKind]Op, words map[string]Op) Expr {
	x := next()
	for p.err == nil {
		t := p.peek()
		op, ok := ops[t.kind]
		if !ok && t.kind == tOpName {
			op, ok = words[t.text]
		}
		if !ok {
			return x
		}
		p.next()
		x = &Binary{At: t.pos, Op: op, L: x, R: next()}
		p.check(x)
	}
	return x
}

var (
	orOps   = map[string]Op{"or": OpOr}
	andOps  = map[string]Op{"and": OpAnd}
	eqOps   = map[tokKind]Op{tEq: OpEq, tNe: OpNe}
	relOps  = map[tokKind]Op{tLt: OpLt, tLe: OpLe, tGt: OpGt, tGe: OpGe}
	addOps  = map[tokKind]Op{tPlus: OpAdd, tMinus: OpSub}
	mulOps  = map[tokKind]Op{tMul: OpMul}
	mulWord = map[string]Op{"div": OpDiv, "mod": OpMod}
	unionOp = map[tokKind]Op{tPipe: OpUnion}
)

func (p *parser) or() Expr  { return p.binary(p.and, nil, orOps) }
func (p *parser) and() Expr { return p.binary(p.eq, nil, andOps) }
func (p *parser) eq() Expr  { return p.binary(p.rel, eqOps, nil) }
func (p *parser) rel() Expr { return p.binary(p.add, relOps, nil) }
func (p *parser) add() Expr { return p.binary(p.mul, addOps, nil) }
func (p *parser) mul() Expr { return p.binary(p.unary, mulOps, mulWord) }

func (p *parser) unary() Expr {
	t := p.peek()
	if t.kind != tMinus {
		return p.binary(p.path, unionOp, nil)
	}
	p.next()
	if !p.enter(t.pos) {
		return &NumLit{}
	}
	defer p.leave()
	return &Neg{At: t.pos, X: p.unary()}
}

// path is PathExpr: a location path, or a filter expression optionally
// followed by '/' or '//' and a relative location path.
func (p *parser) path() Expr {
	t := p.peek()
	switch t.kind {
	case tVar, tLParen, tLiteral, tNumber, tFuncName:
		x := p.filter()
		k := p.peek().kind
		if k != tSlash && k != tSlashSlash {
			return x
		}
		path := &Path{At: t.pos, Start: x}
		p.relative(path)
		p.check(path)
		return path
	case tSlash, tSlashSlash:
		path := &Path{At: t.pos, Abs: true}
		if t.kind == tSlash {
			p.next()
			if !p.stepAhead() {
				return path
			}
			p.steps(path)
			return path
		}
		p.relative(path)
		return path
	}
	if !p.stepAhead() {
		p.failf(t.pos, "expected an expression, found %s", p.describe(t))
		return &NumLit{At: t.pos}
	}
	path := &Path{At: t.pos}
	p.steps(path)
	return path
}

// stepAhead reports whether a location step starts at the next token.
func (p *parser) stepAhead() bool {
	switch p.peek().kind {
	case tNameTest, tNodeType, tAxisName, tAt, tDot, tDotDot:
		return true
	}
	return false
}

// relative parses ('/' | '//') RelativeLocationPath onto path.
func (p *parser) relative(path *Path) {
	t := p.next()
	if t.kind == tSlashSlash {
		path.Steps = append(path.Steps, &Step{At: t.pos, Axis: AxisDescendantOrSelf, Test: TestNode})
	}
	p.steps(path)
}

// steps parses RelativeLocationPath onto path.
func (p *parser) steps(path *Path) {
	for p.err == nil {
		path.Steps = appendStep(path.Steps, p.step())
		t := p.peek()
		switch t.kind {
		case tSlash:
			p.next()
		case tSlashSlash:
			p.next()
			path.Steps = append(path.Steps, &Step{At: t.pos, Axis: AxisDescendantOrSelf, Test: TestNode})
		default:
			return
		}
	}
}

// appendStep appends st to steps, folding descendant-or-self::node()
// followed by a child step without predicates (the '//x' of most
// expressions) into the one step descendant::x it is equal to, which
// walks the subtree once, in document order.
func appendStep(steps []*Step, st *Step) []*Step {
	if n := len(steps); n > 0 && st.Axis == AxisChild && len(st.Preds) == 0 {
		if prev := steps[n-1]; prev.Axis == AxisDescendantOrSelf && prev.Test == TestNode && len(prev.Preds) == 0 {
			st.Axis = AxisDescendant
			steps[n-1] = st
			return steps
		}
	}
	return append(steps, st)
}

func (p *parser) step() *Step {
	t := p.peek()
	st := &Step{At: t.pos, Axis: AxisChild}
	switch t.kind {
	case tDot:
		p.next()
		st.Axis, st.Test = AxisSelf, TestNode
		return st
	case tDotDot:
		p.next()
		st.Axis, st.Test = AxisParent, TestNode
		return st
	case tAt:
		p.next()
		st.Axis = AxisAttribute
	case tAxisName:
		p.next()
		a, ok := axisNames[t.text]
		if !ok {
			p.failf(t.pos, "unknown axis %q", t.text)
			return st
		}
		st.Axis = a
		p.next() // '::', as the lexer saw
	}
	t = p.peek()
	switch t.kind {
	case tNameTest:
		p.next()
		switch {
		case t.text == "*":
			st.Test = TestAny
		case strings.HasSuffix(t.text, ":*"):
			st.Test = TestSpace
			st.Space = p.prefix(t.pos, strings.TrimSuffix(t.text, ":*"))
		default:
			st.Test = TestName
			st.Space, st.Local = p.qname(t.pos, t.text)
		}
	case tNodeType:
		p.next()
		p.expect(tLParen, "'('")
		switch t.text {
		case "node":
			st.Test = TestNode
		case "text":
			st.Test = TestText
		case "comment":
			st.Test = TestComment
		case "processing-instruction":
			st.Test = TestPI
			if p.peek().kind == tLiteral {
				st.Local = p.next().text
			}
		}
		p.expect(tRParen, "')'")
	default:
		p.failf(t.pos, "expected a node test, found %s", p.describe(t))
		return st
	}
	st.Preds = p.preds()
	return st
}

func (p *parser) preds() []Expr {
	var out []Expr
	for p.err == nil && p.peek().kind == tLBrack {
		p.next()
		out = append(out, p.expr())
		p.expect(tRBrack, "']'")
	}
	return out
}

func (p *parser) filter() Expr {
	t := p.peek()
	x := p.primary()
	if p.peek().kind != tLBrack {
		return x
	}
	f := &Filter{At: t.pos, Primary: x, Preds: p.preds()}
	p.check(f)
	return f
}

func (p *parser) primary() Expr {
	t := p.next()
	switch t.kind {
	case tVar:
		v := &VarRef{At: t.pos}
		v.Space, v.Local = p.qname(t.pos, t.text)
		if p.raw || p.err != nil {
			return v
		}
		if p.opts.Variables == nil {
			p.failf(t.pos, "undeclared variable $%s", t.text)
			return v
		}
		val, err := p.opts.Variables(v.Space, v.Local)
		switch {
		case err != nil:
			p.failf(t.pos, "variable $%s: %v", t.text, err)
		case val == nil:
			p.failf(t.pos, "undeclared variable $%s", t.text)
		}
		v.v = val
		return v
	case tLParen:
		x := p.expr()
		p.expect(tRParen, "')'")
		return x
	case tLiteral:
		return &Literal{At: t.pos, Val: t.text}
	case tNumber:
		return &NumLit{At: t.pos, Val: t.num}
	case tFuncName:
		return p.call(t)
	}
	p.failf(t.pos, "expected an expression, found %s", p.describe(t))
	return &NumLit{At: t.pos}
}

func (p *parser) call(t token) Expr {
	c := &Call{At: t.pos}
	prefix, local, _ := strings.Cut(t.text, ":")
	if local == "" {
		prefix, local = "", prefix
	}
	c.Local = local
	if prefix != "" {
		c.Space = prefix
		if !p.raw {
			c.Space = p.prefix(t.pos, prefix)
		}
	}
	p.expect(tLParen, "'('")
	if p.peek().kind != tRParen {
		for p.err == nil {
			c.Args = append(c.Args, p.expr())
			if p.peek().kind != tComma {
				break
			}
			p.next()
		}
	}
	p.expect(tRParen, "')' or ','")
	if p.raw || p.err != nil {
		return c
	}
	p.resolve(c, t.text)
	return c
}

// resolve binds c to a core function or an extension one.
func (p *parser) resolve(c *Call, name string) {
	if c.Space == "" || c.Space == p.opts.CoreNamespace {
		if f, ok := coreFuncs[c.Local]; ok {
			if len(c.Args) < f.min || f.max >= 0 && len(c.Args) > f.max {
				p.failf(c.At, "%s() takes %s, not %d", name, f.arity(), len(c.Args))
				return
			}
			c.core = f
			p.check(c)
			return
		}
	}
	if p.opts.Functions != nil {
		fn, err := p.opts.Functions(c.Space, c.Local, len(c.Args))
		if err != nil {
			p.failf(c.At, "function %s(): %v", name, err)
			return
		}
		if fn != nil {
			c.ext = fn
			return
		}
	}
	if c.Space != "" {
		p.failf(c.At, "unknown function %s() (namespace %s)", name, c.Space)
		return
	}
	p.failf(c.At, "unknown function %s()", name)
}

func (p *parser) prefix(pos int, prefix string) string {
	if p.raw {
		return prefix
	}
	uri, ok := p.opts.Namespaces[prefix]
	if !ok && prefix == "xml" {
		return nsXML
	}
	if !ok || prefix == "" {
		p.failf(pos, "undeclared namespace prefix %q", prefix)
	}
	return uri
}

func (p *parser) qname(pos int, name string) (space, local string) {
	prefix, local, ok := strings.Cut(name, ":")
	if !ok {
		return "", name
	}
	return p.prefix(pos, prefix), local
}

// check refuses, at compile time, an operand whose static type can never
// be what its operator requires: a node-set (count(1), 'a'/b, 1[1],
// 1 | $x).
func (p *parser) check(x Expr) {
	if p.raw {
		return
	}
	need := func(e Expr, what string) {
		if t := staticType(e); t != AnyType && t != NodeSetType {
			p.failf(e.Pos(), "%s must be a node-set, not a %s", what, t)
		}
	}
	switch x := x.(type) {
	case *Binary:
		if x.Op == OpUnion {
			need(x.L, "an operand of '|'")
			need(x.R, "an operand of '|'")
		}
	case *Filter:
		need(x.Primary, "an expression with a predicate")
	case *Path:
		need(x.Start, "an expression before '/'")
	case *Call:
		for i, a := range x.Args {
			if i < len(x.core.nodeArgs) && x.core.nodeArgs[i] {
				need(a, fmt.Sprintf("argument %d of %s()", i+1, x.Local))
			}
		}
	}
}

// Type is a value's type, as the compiler knows it.
type Type uint8

// The types.
const (
	AnyType Type = iota
	NodeSetType
	NumberType
	StringType
	BooleanType
)

func (t Type) String() string {
	return [...]string{"value", "node-set", "number", "string", "boolean"}[t]
}

// staticType is the type x always evaluates to, or AnyType.
func staticType(x Expr) Type {
	switch x := x.(type) {
	case *Binary:
		switch x.Op {
		case OpUnion:
			return NodeSetType
		case OpAdd, OpSub, OpMul, OpDiv, OpMod:
			return NumberType
		}
		return BooleanType
	case *Neg, *NumLit:
		return NumberType
	case *Literal:
		return StringType
	case *Path:
		return NodeSetType
	case *Filter:
		return staticType(x.Primary)
	case *Call:
		if x.core != nil {
			return x.core.result
		}
		if x.ext != nil {
			return x.ext.Result
		}
	}
	return AnyType
}
