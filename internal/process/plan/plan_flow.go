package plan

import (
	"strconv"

	"github.com/orchd/orchd/internal/process/expr"
)

// Flow runs its children concurrently, each on its own thread, and ends
// when all have ended.
type Flow struct {
	Base
	Children []Activity
	Links    []*Link
}

// Link is a flow's link. Its status lives in a hidden numeric variable
// (empty: not yet decided, 1: true, 0: false), so join conditions compile
// as ordinary expressions ($name) and the status is checkpointed with the
// variables.
type Link struct {
	Name string
	V    *expr.Var
}

// LinkSource is an outgoing link with its transitionCondition.
type LinkSource struct {
	L    *Link
	Cond *expr.Expr
}

// Linked wraps an activity that is the target or source of links: it waits
// for its incoming links, evaluates the join condition (bpel:joinFailure,
// or dead-path elimination under suppressJoinFailure), runs the activity,
// then decides its outgoing links.
type Linked struct {
	Base
	Act      Activity
	Targets  []*Link
	Join     *expr.Expr
	Suppress bool
	Sources  []LinkSource
	// Dead are the links whose source is the activity or inside it: when
	// it is skipped, they are all false.
	Dead []*Link
}

func (a *Linked) Describe() string {
	if a.Name != "" {
		return strconv.Quote(a.Name)
	}
	return "the activity at " + a.Pos.String()
}

// RepeatUntil runs its body, then again while the condition is false.
type RepeatUntil struct {
	Base
	Cond *expr.Expr
	Body Activity
}

// ForEach runs its scope for each counter value from start to final,
// one after another or in parallel branches, until the completion
// condition's number of branches has completed.
type ForEach struct {
	Base
	Counter      *expr.Var
	Start, Final *expr.Expr
	Branches     *expr.Expr
	// SuccessfulOnly counts only branches whose scope did not end by a
	// fault handler toward the completion condition.
	SuccessfulOnly bool
	Parallel       bool
	Body           *Scope
	PrivSlots      []*expr.Var // copied per parallel branch
}

// BranchLinks lists, per branch of an if or a pick, the links whose
// source is inside that branch.
type BranchLinks [][]*Link

// Add appends a branch's links.
func (b *BranchLinks) Add(links []*Link) { *b = append(*b, links) }
