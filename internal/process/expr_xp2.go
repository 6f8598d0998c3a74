package process

import (
	"github.com/orchd/orchd/internal/xpath2"
)

// xp2Expr is the XPath 2.0 side of an expr.
type xp2Expr struct {
	x *xpath2.Expr
	// refs are the external variables, by the index Compile gave them.
	refs []xp2Ref
	// links are the links getLinkStatus may name (a join condition's).
	links map[string]*variable
	// query is set for a <query> or a <to> path: the context item is the
	// variable's node; an expression's is an empty document.
	query bool
}

// xp2RefKind says what a variable reference of an XPath 2.0 expression
// reads.
type xp2RefKind uint8

const (
	refVar          xp2RefKind = iota // $var or $var.part
	refProperty                       // bpel:getVariableProperty, compiled to a path
	refPID                            // $ode:pid
	refProcessQName                   // $ode:processQName
	refEventTime                      // $ode:currentEventDateTime
)

// xp2Ref is one external variable of an XPath 2.0 expression, resolved
// at compile time.
type xp2Ref struct {
	kind xp2RefKind
	v    *variable
	part int
	// simple is the built-in type of a simple-typed variable's typed
	// value, or nil.
	simple *xpath2.Type
	// prop evaluates a getVariableProperty (XPath 1.0 over the tree).
	prop *expr
}
