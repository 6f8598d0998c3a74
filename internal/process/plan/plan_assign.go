package plan

import (
	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// CopyOp is one compiled <copy> (or a variable's inline initializer).
type CopyOp struct {
	Pos                   xmldoc.Pos
	From                  FromSpec
	To                    ToSpec
	KeepSrcElementName    bool
	IgnoreMissingFromData bool
	// PartsByName lets a whole message variable be copied to one of
	// another message type, each part of the target's type from the
	// source's part of the same name (compatibility mode ODE, SA00043);
	// without it such a copy is bpel:mismatchedAssignmentFailure.
	PartsByName bool
	// Ext, when set, is an <extensionAssignOperation> that runs in the
	// copy's place (extension.go); from and to are unused.
	Ext ExtensionAction
	// ExtVars are the variables ext resolved at compile time: those it
	// may write, which <assign validate="yes"> checks and restores.
	ExtVars []*expr.Var
}

type FromSpec struct {
	V     *expr.Var  // variable form
	Part  int        // part index or -1
	Query *expr.Expr // relative to the variable/part, or nil
	X     *expr.Expr // expression form
	// Literal holds the literal's content, namespace-complete, or nil;
	// litElem is its only child element, if it has exactly one, and
	// litText its text otherwise (both decided at compile time).
	Literal *etree.Element
	LitElem *etree.Element
	LitText string
	// Epr is the partner-link form.
	Epr *EprSpec
}

type ToSpec struct {
	V     *expr.Var
	Part  int
	Query *expr.Expr
	// X is an XPath 2.0 to-expression other than $var[.part]/path: it
	// must select one node of a variable (v is nil).
	X *expr.Expr
	// Insert, set by insertMissingToData, creates what query misses.
	Insert *InsertPath
	// Epr is the partner-link form.
	Epr *EprSpec
}
