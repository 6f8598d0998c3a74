package membudget

import (
	"errors"
	"fmt"

	"github.com/beevik/etree"
)

// Default bounds. The largest message a client or partner can bring is
// 4 MiB (--max-body, --partner-max-response), and the ODE corpus's
// largest file is 14271 bytes: a variable four times the largest message
// and a run that assigns sixty-four of them are far beyond any process
// seen, and far below what takes a server's memory.
const (
	DefaultMaxVariableBytes = 16 << 20
	DefaultMaxRunBytes      = 256 << 20
)

// ErrExceeded is the failure of a run over a memory bound, the fault
// orchd:memoryBudgetExceeded (namespace urn:orchd:fault).
var ErrExceeded = errors.New("orchd:memoryBudgetExceeded")

// Exceeded says which bound a run went over, and what sets it.
type Exceeded struct {
	// Var is the variable written; Bytes what it would hold (Run false)
	// or what the run assigned (Run true); Bound the bound, which
	// deploy.xml set when Deploy (else serve's flag).
	Var    string
	Bytes  int64
	Bound  int64
	Run    bool
	Deploy bool
}

// Setting names what sets the bound e went over.
func (e *Exceeded) Setting() string {
	switch {
	case e.Run && e.Deploy:
		return "orchd:maxRunBytes in deploy.xml"
	case e.Run:
		return "serve --max-run-bytes"
	case e.Deploy:
		return "orchd:maxVariableBytes in deploy.xml"
	}
	return "serve --max-variable-bytes"
}

func (e *Exceeded) Error() string {
	if e.Run {
		return fmt.Sprintf("%v: assigning to variable %s, the run assigned %d bytes into variables, over the bound of %d for one run (%s sets it)",
			ErrExceeded, e.Var, e.Bytes, e.Bound, e.Setting())
	}
	return fmt.Sprintf("%v: variable %s would hold %d bytes, over the bound of %d for one variable (%s sets it)",
		ErrExceeded, e.Var, e.Bytes, e.Bound, e.Setting())
}

// Unwrap makes errors.Is(err, ErrExceeded) hold.
func (e *Exceeded) Unwrap() error { return ErrExceeded }

// Limits are the bounds of one run, resolved (a bound <= 0 is none);
// VarDeploy and RunDeploy say deploy.xml set them.
type Limits struct {
	MaxVariable, MaxRun  int64
	VarDeploy, RunDeploy bool
}

// LimitsOf resolves a process's overrides (deploy.xml; 0: none) over the
// engine's bounds b.
func LimitsOf(maxVar, maxRun int64, b Bounds) Limits {
	l := Limits{MaxVariable: resolve(b.MaxVariableBytes, DefaultMaxVariableBytes), MaxRun: resolve(b.MaxRunBytes, DefaultMaxRunBytes)}
	if maxVar > 0 {
		l.MaxVariable, l.VarDeploy = maxVar, true
	}
	if maxRun > 0 {
		l.MaxRun, l.RunDeploy = maxRun, true
	}
	return l
}

// resolve is a flag's bound: 0 the default, negative none (-1).
func resolve(b, def int64) int64 {
	switch {
	case b == 0:
		return def
	case b < 0:
		return -1
	}
	return b
}

// Meter keeps the sizes of an instance's variables and what its current
// run assigned. The zero Meter knows no size: a variable's size is
// measured the first time a value enters it after it was changed another
// way (Forget), once, and kept up to date from then on by Charge.
type Meter struct {
	// sizes holds each slot's size in bytes, -1 when not known; nil
	// until the first Charge.
	sizes  []int64
	run    int64
	limits Limits
}

// StartRun begins a run under a process's overrides (deploy.xml; 0:
// none) over the engine's bounds b: nothing assigned yet. The bounds are
// resolved here, once a run, not at each copy.
func (m *Meter) StartRun(maxVar, maxRun int64, b Bounds) {
	m.run = 0
	m.limits = LimitsOf(maxVar, maxRun, b)
}

// Forget marks slot's size unknown (its variable changed in a way Charge
// did not see: a message stored, a scope's reset, a fault variable).
func (m *Meter) Forget(slot int) {
	if slot < len(m.sizes) {
		m.sizes[slot] = -1
	}
}

// Charge accounts for a value of n bytes replacing old bytes of the
// variable name in slot, whose whole value is value (measured only when
// its size is unknown), in an instance of slots variables, against the
// bounds of the run StartRun began. Over a bound it returns an *Exceeded
// and leaves the sizes unchanged; the caller then does not write.
func (m *Meter) Charge(slots, slot int, name string, value *etree.Element, old, n int64) error {
	l := &m.limits
	if m.sizes == nil {
		m.sizes = make([]int64, slots)
		for i := range m.sizes {
			m.sizes[i] = -1
		}
	}
	cur := m.sizes[slot]
	measured := cur < 0
	if measured {
		cur = Size(value)
	}
	next := max(cur-old+n, 0)
	if l.MaxVariable > 0 && next > l.MaxVariable && !measured {
		// The size kept follows the copies; measure before refusing, so
		// that a copy whose accounting overestimated never refuses a
		// write that fits.
		cur = Size(value)
		next = max(cur-old+n, 0)
	}
	if l.MaxVariable > 0 && next > l.MaxVariable {
		m.sizes[slot] = cur
		return &Exceeded{Var: name, Bytes: next, Bound: l.MaxVariable, Deploy: l.VarDeploy}
	}
	if l.MaxRun > 0 && m.run+n > l.MaxRun {
		m.sizes[slot] = cur
		return &Exceeded{Var: name, Bytes: m.run + n, Bound: l.MaxRun, Run: true, Deploy: l.RunDeploy}
	}
	m.run += n
	m.sizes[slot] = next
	return nil
}

// Size is what the content of e holds: the bytes of the names, attribute
// names and values, and text of its attributes and descendants (not e's
// own name: a copy into an element replaces its content). It walks e once.
func Size(e *etree.Element) int64 {
	if e == nil {
		return 0
	}
	var n int64
	for _, a := range e.Attr {
		n += int64(len(a.Space) + len(a.Key) + len(a.Value))
	}
	for _, ch := range e.Child {
		n += TokenSize(ch)
	}
	return n
}

// TokenSize is the bytes of token t: an element's name and content, a
// text node's text.
func TokenSize(t etree.Token) int64 {
	switch t := t.(type) {
	case *etree.Element:
		return int64(len(t.Space)+len(t.Tag)) + Size(t)
	case *etree.CharData:
		return int64(len(t.Data))
	case *etree.Comment:
		return int64(len(t.Data))
	case *etree.ProcInst:
		return int64(len(t.Target) + len(t.Inst))
	}
	return 0
}

// Bounds are the engine's memory bounds, as serve's flags give them: zero
// means the default, negative no bound. MaxItems and MaxStringBytes bound
// what one XPath 2.0, XQuery or XSLT evaluation builds (xpath2's
// DynamicContext).
type Bounds struct {
	MaxVariableBytes, MaxRunBytes int64
	MaxItems, MaxStringBytes      int
}
