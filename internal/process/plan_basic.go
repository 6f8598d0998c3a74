package process

import (
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/bpel"
	"github.com/orchd/orchd/internal/process/deploy"
)

type base struct {
	pos  bpel.Pos
	name string
	num  int
	// tag is the activity's element (empty for constructs the compiler
	// makes); instance events name activities by it.
	tag string
}

func (b *base) where() bpel.Pos { return b.pos }

func (b *base) setID(n int) { b.num = n }

func (b *base) id() int { return b.num }

type sequence struct {
	base
	children []activity
}

type ifAct struct {
	base
	conds    []*expr
	branches []activity
	els      activity // may be nil
	// dead[i] are the links leaving branch i (the last: else), set false
	// when another branch is chosen (dead-path elimination, 11.6.2).
	dead     branchLinks
	elseDead []*link
}

type while struct {
	base
	cond *expr
	body activity
}

type empty struct{ base }

type exit struct{ base }

type throw struct {
	base
	faultName qname
	v         *variable
}

type receive struct {
	base
	inbound
	create bool
}

type reply struct {
	base
	pl        *partnerLink
	op        *exchange.Operation
	v         *variable
	toParts   []partMap
	faultName qname
	corrs     []*corrUse
	mex       string
	// ev is the enclosing onEvent whose request this reply answers.
	ev *onEvent
}

type invoke struct {
	base
	pl                 *partnerLink
	op                 *exchange.Operation
	in, out            *variable
	toParts, fromParts []partMap
	partner            string // label for metrics: partner link name
	corrs              []*corrUse
	policy             *deploy.FailurePolicy
	// timeout bounds the call (deploy.xml orchd:timeout), or is zero.
	timeout time.Duration
}

type assign struct {
	base
	copies []*copyOp
	// validate checks the written variables of an <assign
	// validate="yes">, or is nil.
	validate []*schemaCheck
}

// evTag is what activity events say of an activity.
func (b *base) evTag() (tag, name string, pos string) { return b.tag, b.name, b.pos.String() }
