package plan

import (
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/deploy"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

type Base struct {
	Pos  xmldoc.Pos
	Name string
	num  int
	// Tag is the activity's element (empty for constructs the compiler
	// makes); instance events name activities by it.
	Tag string
}

func (b *Base) Where() xmldoc.Pos { return b.Pos }

func (b *Base) SetID(n int) { b.num = n }

func (b *Base) ID() int { return b.num }

type Sequence struct {
	Base
	Children []Activity
}

type IfAct struct {
	Base
	Conds    []*expr.Expr
	Branches []Activity
	Els      Activity // may be nil
	// Dead[i] are the links leaving branch i (the last: else), set false
	// when another branch is chosen (dead-path elimination, 11.6.2).
	Dead     BranchLinks
	ElseDead []*Link
}

type While struct {
	Base
	Cond *expr.Expr
	Body Activity
}

type Empty struct{ Base }

type Exit struct{ Base }

type Throw struct {
	Base
	FaultName qname
	V         *expr.Var
}

type Receive struct {
	Base
	Inbound
	Create bool
}

type Reply struct {
	Base
	Pl        *PartnerLink
	Op        *exchange.Operation
	V         *expr.Var
	ToParts   []PartMap
	FaultName qname
	Corrs     []*CorrUse
	Mex       string
	// Ev is the enclosing onEvent whose request this reply answers.
	Ev *OnEvent
}

type Invoke struct {
	Base
	Pl                 *PartnerLink
	Op                 *exchange.Operation
	In, Out            *expr.Var
	ToParts, FromParts []PartMap
	Partner            string // label for metrics: partner link name
	Corrs              []*CorrUse
	Policy             *deploy.FailurePolicy
	// Timeout bounds the call (deploy.xml orchd:timeout), or is zero.
	Timeout time.Duration
	// ReplySchema checks the partner's answer before it is taken
	// (deploy.xml orchd:validateReplies), or is nil.
	ReplySchema *ReplySchema
}

type Assign struct {
	Base
	Copies []*CopyOp
	// Validate checks the written variables of an <assign
	// validate="yes">, or is nil.
	Validate []*SchemaCheck
}

// EvTag is what activity events say of an activity.
func (b *Base) EvTag() (tag, name string, pos string) { return b.Tag, b.Name, b.Pos.String() }
