package xpath2

// expr is a node of the compiled AST. Every expr is immutable once built.
type expr interface {
	eval(c *evalCtx) (Sequence, error)
}

type (
	literalExpr struct{ v Sequence }
	seqExpr     struct{ items []expr }
	rangeExpr   struct{ lo, hi expr }
	forExpr     struct {
		slot int
		in   expr
		ret  expr
	}
	quantExpr struct {
		every bool
		slot  int
		in    expr
		sat   expr
	}
	ifExpr    struct{ cond, then, els expr }
	logicExpr struct {
		and  bool
		a, b expr
	}
	compExpr struct {
		op   string // eq ne lt le gt ge
		kind int    // compValue, compGeneral
		a, b expr
	}
	nodeCompExpr struct {
		op   string // is << >>
		a, b expr
	}
	arithExpr struct {
		op   string // + - * div idiv mod
		a, b expr
	}
	negExpr   struct{ a expr }
	plusExpr  struct{ a expr }
	setOpExpr struct {
		op   string // union intersect except
		a, b expr
	}
	instanceExpr struct {
		a  expr
		st seqType
	}
	treatExpr struct {
		a  expr
		st seqType
	}
	castExpr struct {
		a        expr
		t        *Type
		optional bool
		castable bool
		ns       map[string]string // for casts to xs:QName
	}
	rootExpr struct{}
	pathExpr struct{ a, b expr } // a/b
	stepExpr struct {
		axis  axis
		test  nodeTest
		preds []expr
	}
	filterExpr struct {
		primary expr
		preds   []expr
	}
	localVarExpr struct{ slot int }
	extVarExpr   struct {
		ns, local string
		index     int // from StaticContext.VariableIndex, or -1
	}
	contextExpr struct{}
	callExpr    struct {
		fn   *Function
		args []expr
	}
)

const (
	compValue = iota
	compGeneral
)

type axis int

const (
	axisChild axis = iota
	axisDescendant
	axisAttribute
	axisSelf
	axisDescendantOrSelf
	axisFollowingSibling
	axisFollowing
	axisParent
	axisAncestor
	axisPrecedingSibling
	axisPreceding
	axisAncestorOrSelf
	axisNamespace
)

var axisNames = map[string]axis{
	"child": axisChild, "descendant": axisDescendant, "attribute": axisAttribute, "self": axisSelf,
	"descendant-or-self": axisDescendantOrSelf, "following-sibling": axisFollowingSibling,
	"following": axisFollowing, "parent": axisParent, "ancestor": axisAncestor,
	"preceding-sibling": axisPrecedingSibling, "preceding": axisPreceding,
	"ancestor-or-self": axisAncestorOrSelf, "namespace": axisNamespace,
}

func (a axis) reverse() bool {
	return a == axisParent || a == axisAncestor || a == axisPrecedingSibling || a == axisPreceding || a == axisAncestorOrSelf
}

// nodeTest is a name test or a kind test.
type nodeTest struct {
	kind      NodeKind // 0: any node (node() or a name test on the principal kind)
	anyKind   bool     // node()
	nameTest  bool
	ns, local string // "*" = wildcard; ns "*" = any namespace
	hasName   bool   // kind test with a name (element(n), attribute(n), processing-instruction(n))
	docElem   *nodeTest
	typeName  *Type
}

// item test kinds of a sequence type
const (
	itemAny = iota
	itemAtomic
	itemNode
)

// seqType is a SequenceType.
type seqType struct {
	empty  bool // empty-sequence()
	occ    byte // 0, '?', '*', '+'
	item   int
	atomic *Type
	node   nodeTest
}
