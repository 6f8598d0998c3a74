package xpath2

import (
	"fmt"
	"strings"
	"time"
)

// StaticContext is what Compile resolves names against.
type StaticContext struct {
	// Namespaces maps prefixes to URIs, added to the predeclared xml, xs,
	// xsi and fn prefixes.
	Namespaces map[string]string
	// DefaultElementNS is the default element/type namespace ("" = none).
	DefaultElementNS string
	// Variables, when set, tells whether an external variable exists
	// (XPST0008 otherwise); when nil every variable name is accepted and
	// looked up at evaluation.
	Variables func(ns, local string) bool
	// VariableIndex, when set, resolves each external variable at compile
	// time to an index, which evaluation passes to
	// DynamicContext.VariableAt instead of looking the name up; ok false
	// refuses the variable (XPST0008). It takes precedence over Variables.
	VariableIndex func(ns, local string) (index int, ok bool)
	// Functions is the function library; nil means the standard one.
	Functions *FunctionLibrary
	// BaseURI is the static base URI.
	BaseURI string
}

func (sc *StaticContext) functions() *FunctionLibrary {
	if sc.Functions != nil {
		return sc.Functions
	}
	return standardLibrary
}

// DynamicContext is what one evaluation sees.
type DynamicContext struct {
	// Item is the context item (position 1 of 1); nil means absent.
	Item Item
	// Variables returns an external variable's value.
	Variables func(ns, local string) (Sequence, bool)
	// VariableAt returns the value of the external variable Compile
	// resolved to index i with StaticContext.VariableIndex. An error it
	// returns ends the evaluation and is returned as it is.
	VariableAt func(i int) (Sequence, error)
	// ImplicitTimezone in minutes east of UTC.
	ImplicitTimezone int
	// Now is the current dateTime; the zero time means the wall clock at
	// the start of the evaluation.
	Now time.Time
	// Position and Size, when Size > 0, are the context position and size
	// of Item (an XSLT processor's for-each and apply-templates); else the
	// item is position 1 of 1.
	Position, Size int
	// MaxItems bounds the length of any sequence the evaluation builds,
	// MaxStringBytes the bytes of any string it builds: 0 means
	// DefaultMaxItems and DefaultMaxStringBytes, negative no bound. Over
	// one the evaluation ends with the error XPDY0130 naming the bound.
	MaxItems, MaxStringBytes int
}

// Expr is a compiled expression: immutable and safe for concurrent use.
type Expr struct {
	src   string
	root  expr
	slots int
	sc    *StaticContext
}

// String returns the expression's source text.
func (e *Expr) String() string { return e.src }

// Compile parses and statically checks an expression.
func Compile(src string, sc *StaticContext) (*Expr, error) {
	return compile(src, sc, false)
}

func compile(src string, sc *StaticContext, xq bool) (*Expr, error) {
	if sc == nil {
		sc = &StaticContext{}
	}
	toks, _, err := lexFrom(src, 0, xq, false, 0)
	if err != nil {
		return nil, err
	}
	ns := map[string]string{
		"xml": "http://www.w3.org/XML/1998/namespace",
		"xs":  XSNamespace,
		"xsi": "http://www.w3.org/2001/XMLSchema-instance",
		"fn":  FnNamespace,
	}
	for k, v := range sc.Namespaces {
		ns[k] = v
	}
	p := &parser{toks: toks, sc: sc, ns: ns, defNS: sc.DefaultElementNS, xq: xq}
	if xq {
		if err := p.parseProlog(); err != nil {
			return nil, err
		}
	}
	if p.peek().kind == tkEOF {
		return nil, syntaxErr(0, "empty expression")
	}
	root, err := p.parseExpr()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tkEOF {
		return nil, p.errHere("unexpected token")
	}
	return &Expr{src: src, root: root, slots: p.slots, sc: sc}, nil
}

// Evaluate runs the expression.
func (e *Expr) Evaluate(dc *DynamicContext) (Sequence, error) {
	if dc == nil {
		dc = &DynamicContext{}
	}
	st := &dynState{dc: dc, sc: e.sc}
	st.maxItems, st.maxStr = bounds(dc)
	c := &evalCtx{dyn: st, locals: make([]Sequence, e.slots)}
	if dc.Item != nil {
		c.item, c.pos, c.size = dc.Item, 1, 1
		if dc.Size > 0 {
			c.pos, c.size = dc.Position, dc.Size
		}
	}
	return e.root.eval(c)
}

type dynState struct {
	dc  *DynamicContext
	sc  *StaticContext
	now *DateTime
	// maxItems and maxStr are dc's bounds resolved (bounds.go).
	maxItems, maxStr int
}

func (d *dynState) current() DateTime {
	if d.now == nil {
		t := d.dc.Now
		if t.IsZero() {
			t = timeNow()
		}
		v := dateTimeFromTime(t, d.dc.ImplicitTimezone)
		d.now = &v
	}
	return *d.now
}

// evalCtx is the focus and variable frame of an evaluation.
type evalCtx struct {
	item   Item
	pos    int
	size   int
	locals []Sequence
	dyn    *dynState
}

// Context is what a function implementation sees of its caller.
type Context struct{ c *evalCtx }

// Item is the context item (nil when absent).
func (c Context) Item() Item { return c.c.item }

// Position and Size are the context position and size.
func (c Context) Position() int { return c.c.pos }

// Size is the context size.
func (c Context) Size() int { return c.c.size }

// Dynamic is the evaluation's dynamic context.
func (c Context) Dynamic() *DynamicContext { return c.c.dyn.dc }

// FuncImpl implements a function; args are the evaluated arguments.
type FuncImpl func(c Context, args []Sequence) (Sequence, error)

// Function is an entry of a function library.
type Function struct {
	NS, Local        string
	MinArgs, MaxArgs int // MaxArgs -1: variadic
	Impl             FuncImpl
}

// FunctionLibrary maps function names to implementations. Build one with
// NewFunctionLibrary, add functions with Register before compiling; it is
// read-only while expressions compiled against it are evaluated.
type FunctionLibrary struct {
	m map[[2]string][]*Function
}

// NewFunctionLibrary returns a library holding the standard fn: functions.
func NewFunctionLibrary() *FunctionLibrary {
	l := &FunctionLibrary{m: map[[2]string][]*Function{}}
	registerStandard(l)
	return l
}

// Register adds a function; max -1 means any number of arguments from min.
func (l *FunctionLibrary) Register(ns, local string, min, max int, impl FuncImpl) {
	k := [2]string{ns, local}
	l.m[k] = append(l.m[k], &Function{ns, local, min, max, impl})
}

// Lookup finds the function of that name and arity.
func (l *FunctionLibrary) Lookup(ns, local string, arity int) *Function {
	for _, f := range l.m[[2]string{ns, local}] {
		if arity >= f.MinArgs && (f.MaxArgs < 0 || arity <= f.MaxArgs) {
			return f
		}
	}
	return nil
}

// names returns the local names of the functions of namespace ns.
func (l *FunctionLibrary) names(ns string) []string {
	var out []string
	for k := range l.m {
		if k[0] == ns {
			out = append(out, k[1])
		}
	}
	return out
}

// arities describes the arities the functions named ns:local take ("1",
// "2 to 3", "1 or more"), empty when there is none.
func (l *FunctionLibrary) arities(ns, local string) string {
	var out []string
	for _, f := range l.m[[2]string{ns, local}] {
		switch {
		case f.MaxArgs < 0:
			out = append(out, fmt.Sprintf("%d or more", f.MinArgs))
		case f.MaxArgs == f.MinArgs:
			out = append(out, fmt.Sprint(f.MinArgs))
		default:
			out = append(out, fmt.Sprintf("%d to %d", f.MinArgs, f.MaxArgs))
		}
	}
	return strings.Join(out, ", ")
}

// EffectiveBooleanValue is the effective boolean value of s (XPath 2.0
// section 2.4.3); a sequence that has none is a FORG0006 error.
func EffectiveBooleanValue(s Sequence) (bool, error) { return ebv(s) }

// Atomize returns the typed value of an item: an atomic value as it is, a
// node's string value as xs:untypedAtomic.
func Atomize(it Item) Atomic { return atomizeItem(it) }

// Cast casts an atomic value to the built-in type t as "cast as" does;
// ns resolves prefixes for a cast to xs:QName.
func Cast(a Atomic, t *Type, ns map[string]string) (Atomic, error) {
	return castAtomic(a, t, ns)
}

// standardLibrary is the read-only default library.
var standardLibrary = NewFunctionLibrary()
