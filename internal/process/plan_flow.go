package process

import (
	"strconv"
)

// flow runs its children concurrently, each on its own thread, and ends
// when all have ended.
type flow struct {
	base
	children []activity
	links    []*link
}

// link is a flow's link. Its status lives in a hidden numeric variable
// (empty: not yet decided, 1: true, 0: false), so join conditions compile
// as ordinary expressions ($name) and the status is checkpointed with the
// variables.
type link struct {
	name string
	v    *variable
}

// linkSource is an outgoing link with its transitionCondition.
type linkSource struct {
	l    *link
	cond *expr
}

// linked wraps an activity that is the target or source of links: it waits
// for its incoming links, evaluates the join condition (bpel:joinFailure,
// or dead-path elimination under suppressJoinFailure), runs the activity,
// then decides its outgoing links.
type linked struct {
	base
	act      activity
	targets  []*link
	join     *expr
	suppress bool
	sources  []linkSource
	// dead are the links whose source is the activity or inside it: when
	// it is skipped, they are all false.
	dead []*link
}

func (a *linked) describe() string {
	if a.name != "" {
		return strconv.Quote(a.name)
	}
	return "the activity at " + a.pos.String()
}

// repeatUntil runs its body, then again while the condition is false.
type repeatUntil struct {
	base
	cond *expr
	body activity
}

// forEach runs its scope for each counter value from start to final,
// one after another or in parallel branches, until the completion
// condition's number of branches has completed.
type forEach struct {
	base
	counter      *variable
	start, final *expr
	branches     *expr
	// successfulOnly counts only branches whose scope did not end by a
	// fault handler toward the completion condition.
	successfulOnly bool
	parallel       bool
	body           *scope
	privSlots      []*variable // copied per parallel branch
}

// branchLinks lists, per branch of an if or a pick, the links whose
// source is inside that branch.
type branchLinks [][]*link

// add appends a branch's links.
func (b *branchLinks) add(links []*link) { *b = append(*b, links) }
