package expr

import (
	"github.com/orchd/orchd/internal/xpath2"
)

// Xp2Expr is the XPath 2.0 side of an expr.
type Xp2Expr struct {
	X *xpath2.Expr
	// Refs are the external variables, by the index Compile gave them.
	Refs []Xp2Ref
	// Links are the links getLinkStatus may name (a join condition's).
	Links map[string]*Var
	// Query is set for a <query> or a <to> path: the context item is the
	// variable's node; an expression's is an empty document.
	Query bool
}

// xp2RefKind says what a variable reference of an XPath 2.0 expression
// reads.
type xp2RefKind uint8

const (
	RefVar          xp2RefKind = iota // $var or $var.part
	RefProperty                       // bpel:getVariableProperty, compiled to a path
	RefPID                            // $ode:pid
	RefProcessQName                   // $ode:processQName
	RefEventTime                      // $ode:currentEventDateTime
)

// Xp2Ref is one external variable of an XPath 2.0 expression, resolved
// at compile time.
type Xp2Ref struct {
	Kind xp2RefKind
	V    *Var
	Part int
	// Simple is the built-in type of a simple-typed variable's typed
	// value, or nil.
	Simple *xpath2.Type
	// Prop evaluates a getVariableProperty (XPath 1.0 over the tree).
	Prop *Expr
}
