package process

import (
	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/bpel"
)

// copyOp is one compiled <copy> (or a variable's inline initializer).
type copyOp struct {
	pos                   bpel.Pos
	from                  fromSpec
	to                    toSpec
	keepSrcElementName    bool
	ignoreMissingFromData bool
	// ext, when set, is an <extensionAssignOperation> that runs in the
	// copy's place (extension.go); from and to are unused.
	ext ExtensionAction
	// extVars are the variables ext resolved at compile time: those it
	// may write, which <assign validate="yes"> checks and restores.
	extVars []*variable
}

type fromSpec struct {
	v     *variable // variable form
	part  int       // part index or -1
	query *expr     // relative to the variable/part, or nil
	x     *expr     // expression form
	// literal holds the literal's content, namespace-complete, or nil;
	// litElem is its only child element, if it has exactly one, and
	// litText its text otherwise (both decided at compile time).
	literal *etree.Element
	litElem *etree.Element
	litText string
	// epr is the partner-link form.
	epr *eprSpec
}

type toSpec struct {
	v     *variable
	part  int
	query *expr
	// x is an XPath 2.0 to-expression other than $var[.part]/path: it
	// must select one node of a variable (v is nil).
	x *expr
	// insert, set by insertMissingToData, creates what query misses.
	insert *insertPath
	// epr is the partner-link form.
	epr *eprSpec
}
