package xpath1

// Node types of the syntax tree. Every node records the byte offset where
// it starts in the source (Pos).

// An Expr is a node of the syntax tree.
type Expr interface {
	// Pos is the byte offset in the source where the expression starts.
	Pos() int
}

// Op is a binary operator.
type Op uint8

// The binary operators, lowest precedence first.
const (
	OpOr Op = iota
	OpAnd
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpMod
	OpUnion
)

var opNames = [...]string{"or", "and", "=", "!=", "<", "<=", ">", ">=", "+", "-", "*", "div", "mod", "|"}

func (o Op) String() string { return opNames[o] }

// Binary is L Op R.
type Binary struct {
	At   int
	Op   Op
	L, R Expr
}

// Neg is unary minus.
type Neg struct {
	At int
	X  Expr
}

// Literal is a string literal.
type Literal struct {
	At  int
	Val string
}

// NumLit is a number literal.
type NumLit struct {
	At  int
	Val float64
}

// VarRef is $name, with its prefix resolved.
type VarRef struct {
	At           int
	Space, Local string
	v            Variable
}

// Call is a function call. core is set for a core library function,
// ext for one Options.Functions bound.
type Call struct {
	At           int
	Space, Local string
	Args         []Expr
	core         *coreFunc
	ext          *Func
}

// Filter is a primary expression with predicates: (expr)[p1][p2].
type Filter struct {
	At      int
	Primary Expr
	Preds   []Expr
}

// Path is a location path: from the context node (Start nil, Abs false),
// from the root ('/', Abs true) or from the node-set Start evaluates to,
// then the steps.
type Path struct {
	At    int
	Abs   bool
	Start Expr
	Steps []*Step
}

// Axis is a location step's axis.
type Axis uint8

// The 13 axes of section 2.2.
const (
	AxisChild Axis = iota
	AxisDescendant
	AxisParent
	AxisAncestor
	AxisFollowingSibling
	AxisPrecedingSibling
	AxisFollowing
	AxisPreceding
	AxisAttribute
	AxisNamespace
	AxisSelf
	AxisDescendantOrSelf
	AxisAncestorOrSelf
)

var axisNames = map[string]Axis{
	"child": AxisChild, "descendant": AxisDescendant, "parent": AxisParent,
	"ancestor": AxisAncestor, "following-sibling": AxisFollowingSibling,
	"preceding-sibling": AxisPrecedingSibling, "following": AxisFollowing,
	"preceding": AxisPreceding, "attribute": AxisAttribute, "namespace": AxisNamespace,
	"self": AxisSelf, "descendant-or-self": AxisDescendantOrSelf,
	"ancestor-or-self": AxisAncestorOrSelf,
}

// reverse reports whether the axis is a reverse axis (section 2.4).
func (a Axis) reverse() bool {
	switch a {
	case AxisParent, AxisAncestor, AxisAncestorOrSelf, AxisPreceding, AxisPrecedingSibling:
		return true
	}
	return false
}

// TestKind is what a node test tests.
type TestKind uint8

// Node tests.
const (
	TestName    TestKind = iota // QName: Space and Local
	TestAny                     // *
	TestSpace                   // prefix:*, Space
	TestNode                    // node()
	TestText                    // text()
	TestComment                 // comment()
	TestPI                      // processing-instruction(Local?)
)

// Step is one location step: axis, node test, predicates.
type Step struct {
	At           int
	Axis         Axis
	Test         TestKind
	Space, Local string
	Preds        []Expr
}

// Pos implementations.
func (x *Binary) Pos() int  { return x.At }
func (x *Neg) Pos() int     { return x.At }
func (x *Literal) Pos() int { return x.At }
func (x *NumLit) Pos() int  { return x.At }
func (x *VarRef) Pos() int  { return x.At }
func (x *Call) Pos() int    { return x.At }
func (x *Filter) Pos() int  { return x.At }
func (x *Path) Pos() int    { return x.At }
