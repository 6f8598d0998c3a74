package expr

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/xpath1"
)

// FastExpr evaluates the XPath 1.0 expressions BPEL assignments and
// conditions mostly consist of (arithmetic, comparisons, and/or, the core
// string and number functions, over $variables and simple paths) directly
// on the instance tree. The compiler builds one when the whole expression
// fits this subset and falls back to internal/xpath1 otherwise, so
// semantics are XPath 1.0's either way.
//
// value is the expression's XPath value; number and str are number() and
// string() of it, which operators and functions call on their operands so
// that intermediate numbers and strings are not boxed into an interface
// (an allocation each).
//
// Inside a step's predicate, ctx is the node the predicate tests and
// relative paths start from it; elsewhere ctx is nil (an expression has no
// context node in BPEL) and the parser admits no relative path.
type FastExpr interface {
	Value(root, ctx *etree.Element) any // float64, string, bool or []node
	Number(root, ctx *etree.Element) float64
	Str(root, ctx *etree.Element) string
}

// numLit is a number literal, boxed once.
type numLit struct {
	f     float64
	boxed any
}

func newNumLit(f float64) numLit { return numLit{f: f, boxed: f} }

func (n numLit) Value(_, _ *etree.Element) any          { return n.boxed }
func (n numLit) Number(_, _ *etree.Element) float64     { return n.f }
func (n numLit) Str(_, _ *etree.Element) string         { return xpath1.FormatNumber(n.f) }
func (s strLit) Value(_, _ *etree.Element) any          { return s.boxed }
func (s strLit) Number(_, _ *etree.Element) float64     { return XpathNumber(s.s) }
func (s strLit) Str(_, _ *etree.Element) string         { return s.s }
func newStrLit(s string) strLit                         { return strLit{s: s, boxed: s} }
func (x varValue) Str(root, ctx *etree.Element) string  { return XpathString(x.Value(root, ctx)) }
func (x pathValue) Str(root, ctx *etree.Element) string { return XpathString(x.p.Value(root, ctx)) }

// strLit is a string literal, boxed once.
type strLit struct {
	s     string
	boxed any
}

// varValue is a simple-typed variable used as a value.
type varValue struct {
	v *Var
}

func (x varValue) text(root *etree.Element) string {
	return StringValue(root.Child[x.v.Slot-1].(*etree.Element))
}

func (x varValue) Value(root, _ *etree.Element) any {
	s := x.text(root)
	switch x.v.Simple {
	case "number":
		return XpathNumber(s)
	case "boolean":
		return xsdBoolean(s)
	}
	return s
}

func (x varValue) Number(root, _ *etree.Element) float64 {
	s := x.text(root)
	if x.v.Simple == "boolean" {
		if xsdBoolean(s) {
			return 1
		}
		return 0
	}
	return XpathNumber(s)
}

// pathValue is a path from a variable ($var/...) or, inside a predicate,
// relative to the predicate's context node.
type pathValue struct{ p *SimplePath }

func (x pathValue) Value(root, ctx *etree.Element) any { return x.p.Value(root, ctx) }

func (x pathValue) Number(root, ctx *etree.Element) float64 {
	return ToNumber(x.p.Value(root, ctx))
}

type negExpr struct{ x FastExpr }

func (x negExpr) Value(root, ctx *etree.Element) any { return x.Number(root, ctx) }
func (x negExpr) Number(root, ctx *etree.Element) float64 {
	return -x.x.Number(root, ctx)
}
func (x negExpr) Str(root, ctx *etree.Element) string {
	return xpath1.FormatNumber(x.Number(root, ctx))
}

type binExpr struct {
	op   xpath1.Op
	l, r FastExpr
	// nums is set when both operands are numbers, so that a comparison
	// compares them as numbers without boxing them.
	nums bool
}

func newBinExpr(op xpath1.Op, l, r FastExpr) binExpr {
	return binExpr{op: op, l: l, r: r, nums: isNumeric(l) && isNumeric(r)}
}

func (b binExpr) Value(root, ctx *etree.Element) any {
	if b.op < xpath1.OpAdd {
		return b.truth(root, ctx)
	}
	return b.Number(root, ctx)
}

// truth is the value of a logical or comparison operator.
func (b binExpr) truth(root, ctx *etree.Element) bool {
	switch b.op {
	case xpath1.OpOr:
		return XpathBool(b.l.Value(root, ctx)) || XpathBool(b.r.Value(root, ctx))
	case xpath1.OpAnd:
		return XpathBool(b.l.Value(root, ctx)) && XpathBool(b.r.Value(root, ctx))
	}
	if b.nums {
		return xpath1.CompareNumbers(b.op, b.l.Number(root, ctx), b.r.Number(root, ctx))
	}
	return compare(b.op, b.l.Value(root, ctx), b.r.Value(root, ctx))
}

func (b binExpr) Number(root, ctx *etree.Element) float64 {
	if b.op < xpath1.OpAdd {
		if b.truth(root, ctx) {
			return 1
		}
		return 0
	}
	l, r := b.l.Number(root, ctx), b.r.Number(root, ctx)
	switch b.op {
	case xpath1.OpAdd:
		return l + r
	case xpath1.OpSub:
		return l - r
	case xpath1.OpMul:
		return l * r
	case xpath1.OpDiv:
		return l / r
	case xpath1.OpMod:
		return math.Mod(l, r)
	}
	return math.NaN()
}

func (b binExpr) Str(root, ctx *etree.Element) string { return XpathString(b.Value(root, ctx)) }

type callExpr struct {
	name string
	args []FastExpr
}

func (c callExpr) Value(root, ctx *etree.Element) any {
	switch c.name {
	case "count", "sum", "number", "floor", "ceiling", "round", "string-length":
		return c.Number(root, ctx)
	case "string", "concat", "normalize-space", "substring":
		return c.Str(root, ctx)
	case "boolean":
		return XpathBool(c.args[0].Value(root, ctx))
	case "not":
		return !XpathBool(c.args[0].Value(root, ctx))
	case "true":
		return true
	case "false":
		return false
	case "contains":
		return strings.Contains(c.args[0].Str(root, ctx), c.args[1].Str(root, ctx))
	case "starts-with":
		return strings.HasPrefix(c.args[0].Str(root, ctx), c.args[1].Str(root, ctx))
	}
	return math.NaN()
}

func (c callExpr) Number(root, ctx *etree.Element) float64 {
	switch c.name {
	case "count":
		return float64(c.args[0].(pathValue).p.count(root, ctx))
	case "sum":
		var buf [1]Node
		n, _ := NodesIn(c.args[0].Value(root, ctx), &buf)
		s := 0.0
		for _, x := range n {
			s += XpathNumber(x.String())
		}
		return s
	case "number":
		return c.args[0].Number(root, ctx)
	case "floor":
		return math.Floor(c.args[0].Number(root, ctx))
	case "ceiling":
		return math.Ceil(c.args[0].Number(root, ctx))
	case "round":
		return xpath1.Round(c.args[0].Number(root, ctx))
	case "string-length":
		return float64(utf8.RuneCountInString(c.args[0].Str(root, ctx)))
	}
	return ToNumber(c.Value(root, ctx))
}

func (c callExpr) Str(root, ctx *etree.Element) string {
	switch c.name {
	case "string":
		return c.args[0].Str(root, ctx)
	case "concat":
		var b strings.Builder
		for _, a := range c.args {
			b.WriteString(a.Str(root, ctx))
		}
		return b.String()
	case "normalize-space":
		return xpath1.NormalizeSpace(c.args[0].Str(root, ctx))
	case "substring":
		start, length := c.args[1].Number(root, ctx), math.Inf(1)
		if len(c.args) == 3 {
			length = c.args[2].Number(root, ctx)
		}
		return xpath1.Substring(c.args[0].Str(root, ctx), start, length)
	}
	return XpathString(c.Value(root, ctx))
}

// fastArity lists the functions fastExpr knows, with their argument
// counts (min, max; -1 for any).
var fastArity = map[string][2]int{
	"count": {1, 1}, "sum": {1, 1}, "number": {1, 1}, "string": {1, 1}, "boolean": {1, 1},
	"not": {1, 1}, "true": {0, 0}, "false": {0, 0}, "floor": {1, 1}, "ceiling": {1, 1},
	"round": {1, 1}, "concat": {2, -1}, "string-length": {1, 1}, "normalize-space": {1, 1},
	"contains": {2, 2}, "starts-with": {2, 2}, "substring": {2, 3},
}

// xsdBoolean is the value of an xsd:boolean lexical form: "true" and "1"
// are true, anything else ("false", "0", empty) false.
func xsdBoolean(s string) bool {
	s = trimSpace(s)
	return s == "true" || s == "1"
}

// XpathNumber converts a string the way XPath's number() does.
func XpathNumber(s string) float64 { return xpath1.Number(s) }

func ToNumber(v any) float64 {
	switch t := v.(type) {
	case float64:
		return t
	case []Node:
		if len(t) == 0 {
			return math.NaN()
		}
		return XpathNumber(t[0].String())
	case *etree.Element, *etree.CharData:
		return XpathNumber(XpathString(t))
	}
	return xpath1.Num(v)
}

// compare implements XPath 1.0's comparison of two values (section 3.4)
// over the runtime's representation of node-sets, as xpath1.Compare.
func compare(op xpath1.Op, l, r any) bool {
	var lb, rb [1]Node
	ln, lok := NodesIn(l, &lb)
	rn, rok := NodesIn(r, &rb)
	switch {
	case lok && rok:
		return xpath1.CompareSets(op, nodeStrings(ln), nodeStrings(rn))
	case lok:
		return xpath1.CompareSet(op, nodeStrings(ln), r, false)
	case rok:
		return xpath1.CompareSet(op, nodeStrings(rn), l, true)
	}
	return xpath1.Compare(op, l, r)
}

// nodeStrings is a []node as xpath1.Strings.
type nodeStrings []Node

func (s nodeStrings) Len() int        { return len(s) }
func (s nodeStrings) At(i int) string { return s[i].String() }

// fastParser parses the subset; any construct outside it makes the whole
// parse fail (ok false), and the caller keeps the general evaluator.
type fastParser struct {
	s   string
	i   int
	r   Resolver
	ns  map[string]string
	bad bool
	// inPred is set while parsing a step's predicate, where relative
	// paths start at the predicate's context node.
	inPred bool
}

func CompileFast(src string, r Resolver, ns map[string]string) FastExpr {
	p := &fastParser{s: src, r: r, ns: ns}
	x := p.or()
	p.space()
	if p.bad || p.i != len(p.s) {
		return nil
	}
	return x
}

// CompileFastPred compiles the predicate of a path step ([...] without the
// brackets), or returns nil. It takes only predicates whose value is not a
// number: XPath 1.0 reads a number as a position (item[2]), anything else
// as a boolean, and the fast path tests each node with its boolean value.
func CompileFastPred(src string, r Resolver, ns map[string]string) FastExpr {
	p := &fastParser{s: src, r: r, ns: ns, inPred: true}
	x := p.or()
	p.space()
	if p.bad || p.i != len(p.s) || isNumeric(x) {
		return nil
	}
	return x
}

// isNumeric reports whether x always evaluates to a number.
func isNumeric(x FastExpr) bool {
	switch t := x.(type) {
	case numLit, negExpr:
		return true
	case varValue:
		return t.v.Simple == "number"
	case binExpr:
		return t.op >= xpath1.OpAdd
	case callExpr:
		switch t.name {
		case "count", "sum", "number", "floor", "ceiling", "round", "string-length":
			return true
		}
	}
	return false
}

func (p *fastParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

// word consumes the operator name w if it stands next as a whole word.
func (p *fastParser) word(w string) bool {
	p.space()
	if !strings.HasPrefix(p.s[p.i:], w) {
		return false
	}
	j := p.i + len(w)
	if j < len(p.s) && IsNameChar(p.s[j]) {
		return false
	}
	p.i = j
	return true
}

func (p *fastParser) sym(s string) bool {
	p.space()
	if strings.HasPrefix(p.s[p.i:], s) {
		p.i += len(s)
		return true
	}
	return false
}

func (p *fastParser) or() FastExpr {
	x := p.and()
	for !p.bad && p.word("or") {
		x = newBinExpr(xpath1.OpOr, x, p.and())
	}
	return x
}

func (p *fastParser) and() FastExpr {
	x := p.eq()
	for !p.bad && p.word("and") {
		x = newBinExpr(xpath1.OpAnd, x, p.eq())
	}
	return x
}

func (p *fastParser) eq() FastExpr {
	x := p.rel()
	for !p.bad {
		switch {
		case p.sym("!="):
			x = newBinExpr(xpath1.OpNe, x, p.rel())
		case p.sym("="):
			x = newBinExpr(xpath1.OpEq, x, p.rel())
		default:
			return x
		}
	}
	return x
}

func (p *fastParser) rel() FastExpr {
	x := p.add()
	for !p.bad {
		switch {
		case p.sym("<="):
			x = newBinExpr(xpath1.OpLe, x, p.add())
		case p.sym(">="):
			x = newBinExpr(xpath1.OpGe, x, p.add())
		case p.sym("<"):
			x = newBinExpr(xpath1.OpLt, x, p.add())
		case p.sym(">"):
			x = newBinExpr(xpath1.OpGt, x, p.add())
		default:
			return x
		}
	}
	return x
}

func (p *fastParser) add() FastExpr {
	x := p.mul()
	for !p.bad {
		switch {
		case p.sym("+"):
			x = newBinExpr(xpath1.OpAdd, x, p.mul())
		case p.sym("-"):
			x = newBinExpr(xpath1.OpSub, x, p.mul())
		default:
			return x
		}
	}
	return x
}

func (p *fastParser) mul() FastExpr {
	x := p.unary()
	for !p.bad {
		switch {
		case p.sym("*"):
			x = newBinExpr(xpath1.OpMul, x, p.unary())
		case p.word("div"):
			x = newBinExpr(xpath1.OpDiv, x, p.unary())
		case p.word("mod"):
			x = newBinExpr(xpath1.OpMod, x, p.unary())
		default:
			return x
		}
	}
	return x
}

func (p *fastParser) unary() FastExpr {
	if p.sym("-") {
		return negExpr{p.unary()}
	}
	return p.primary()
}

func (p *fastParser) fail() FastExpr {
	p.bad = true
	return newNumLit(math.NaN())
}

func (p *fastParser) primary() FastExpr {
	p.space()
	if p.i >= len(p.s) {
		return p.fail()
	}
	c := p.s[p.i]
	switch {
	case c == '(':
		p.i++
		x := p.or()
		if !p.sym(")") {
			return p.fail()
		}
		return x
	case c == '\'' || c == '"':
		j := strings.IndexByte(p.s[p.i+1:], c)
		if j < 0 {
			return p.fail()
		}
		s := p.s[p.i+1 : p.i+1+j]
		p.i += j + 2
		return newStrLit(s)
	case c >= '0' && c <= '9' || c == '.':
		j := p.i
		for j < len(p.s) && (p.s[j] >= '0' && p.s[j] <= '9' || p.s[j] == '.') {
			j++
		}
		f, err := strconv.ParseFloat(p.s[p.i:j], 64)
		if err != nil {
			return p.fail()
		}
		p.i = j
		return newNumLit(f)
	case c == '$':
		return p.varOrPath()
	case p.inPred && p.relativePathAhead():
		return p.relativePath()
	}
	// A function call: name '(' args ')'.
	j := p.i
	for j < len(p.s) && IsNameChar(p.s[j]) {
		j++
	}
	name := p.s[p.i:j]
	ar, ok := fastArity[name]
	if !ok {
		return p.fail()
	}
	p.i = j
	if !p.sym("(") {
		return p.fail()
	}
	var args []FastExpr
	if !p.sym(")") {
		for {
			args = append(args, p.or())
			if p.bad {
				return p.fail()
			}
			if p.sym(")") {
				break
			}
			if !p.sym(",") {
				return p.fail()
			}
		}
	}
	if len(args) < ar[0] || (ar[1] >= 0 && len(args) > ar[1]) {
		return p.fail()
	}
	if (name == "count" || name == "sum") && !isPath(args[0]) {
		return p.fail()
	}
	return callExpr{name: name, args: args}
}

func isPath(x FastExpr) bool { _, ok := x.(pathValue); return ok }

// relativePathAhead reports whether a relative location path starts at
// p.i: a name test (QName or *) or an attribute (@), and not a function
// call (a name followed by '(').
func (p *fastParser) relativePathAhead() bool {
	c := p.s[p.i]
	if c == '@' || c == '*' {
		return true
	}
	if !IsNameChar(c) || c == '-' || c == '.' || c >= '0' && c <= '9' {
		return false
	}
	j := p.i
	for j < len(p.s) && (IsNameChar(p.s[j]) || p.s[j] == ':' && j+1 < len(p.s) && p.s[j+1] != ':') {
		j++
	}
	for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t' || p.s[j] == '\n' || p.s[j] == '\r') {
		j++
	}
	return j == len(p.s) || p.s[j] != '('
}

// relativePath reads a relative simple path inside a predicate.
func (p *fastParser) relativePath() FastExpr {
	j, ok := scanSteps(p.s, p.i)
	if !ok {
		return p.fail()
	}
	sp := CompilePath(p.s[p.i:j], p.r, p.ns, true, true)
	if sp == nil {
		return p.fail()
	}
	p.i = j
	return pathValue{sp}
}

// scanSteps returns the end of the location steps starting at s[i]: name
// characters, ':', '*', '@', '()' and bracketed predicates (nested, with
// string literals), separated by '/'. The simple-path compiler decides
// whether they fit.
func scanSteps(s string, i int) (int, bool) {
	j := i
	for j < len(s) {
		c := s[j]
		switch {
		case IsNameChar(c) || c == ':' || c == '*' || c == '@' || c == '/' || c == '(' || c == ')' && j > 0 && s[j-1] == '(':
			j++
		case c == '[':
			k, ok := matchBracket(s, j)
			if !ok {
				return 0, false
			}
			j = k + 1
		default:
			return j, true
		}
	}
	return j, true
}

// matchBracket returns the index of the ']' closing the '[' at s[i],
// skipping nested brackets and string literals.
func matchBracket(s string, i int) (int, bool) {
	depth := 0
	for j := i; j < len(s); j++ {
		switch c := s[j]; c {
		case '\'', '"':
			k := strings.IndexByte(s[j+1:], c)
			if k < 0 {
				return 0, false
			}
			j += k + 1
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return j, true
			}
		}
	}
	return 0, false
}

// varOrPath reads $var[.part] and the simple path that may follow.
func (p *fastParser) varOrPath() FastExpr {
	j := p.i + 1
	for j < len(p.s) && IsNameChar(p.s[j]) {
		j++
	}
	// Then steps; a path goes on only with a '/'.
	if j < len(p.s) && p.s[j] == '/' {
		k, ok := scanSteps(p.s, j)
		if !ok {
			return p.fail()
		}
		j = k
	}
	text := p.s[p.i:j]
	name := text[1:]
	if k := strings.IndexAny(name, "./"); k >= 0 {
		name = name[:k]
	}
	v := p.r.LookupVar(name)
	if v == nil {
		return p.fail()
	}
	p.i = j
	if text == "$"+name && v.Simple != "" {
		return varValue{v}
	}
	sp := CompilePath(text, p.r, p.ns, false, true)
	if sp == nil {
		return p.fail()
	}
	return pathValue{sp}
}
