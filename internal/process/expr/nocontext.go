package expr

import (
	"errors"
	"fmt"

	"github.com/orchd/orchd/internal/xpath1"
)

// contextFuncs are XPath 1.0's core functions that read the context node
// when called without an argument.
var contextFuncs = map[string]bool{
	"string": true, "string-length": true, "normalize-space": true, "number": true,
	"name": true, "local-name": true, "namespace-uri": true,
}

// NeedsContext names what XPath 1.0 expression src reads of the context
// node (a relative location path such as NoConditionHere, ., @a, or a
// function such as name() called without an argument), or returns ""
// when it reads none (variables, literals, function calls on them,
// paths that start from a variable or from the root). A BPEL
// expression has no context node (WS-BPEL 2.0 8.2.x): what reads it
// raises bpel:subLanguageExecutionFault where it is evaluated (see
// Expr.NoContext). Predicates are not searched: their context is the
// node they filter. An expression src that does not parse reads none
// (its compiler reports it).
func NeedsContext(src string) string {
	x, err := xpath1.Parse(src)
	if err != nil {
		return ""
	}
	return needsContext(src, x)
}

func needsContext(src string, x xpath1.Expr) string {
	switch x := x.(type) {
	case *xpath1.Binary:
		if s := needsContext(src, x.L); s != "" {
			return s
		}
		return needsContext(src, x.R)
	case *xpath1.Neg:
		return needsContext(src, x.X)
	case *xpath1.Call:
		if len(x.Args) == 0 && x.Space == "" && contextFuncs[x.Local] {
			return x.Local + "()"
		}
		for _, a := range x.Args {
			if s := needsContext(src, a); s != "" {
				return s
			}
		}
	case *xpath1.Filter:
		return needsContext(src, x.Primary)
	case *xpath1.Path:
		switch {
		case x.Start != nil:
			return needsContext(src, x.Start)
		case !x.Abs:
			return fmt.Sprintf("the relative path %s (offset %d)", firstStep(x.Steps), x.At)
		}
	}
	return ""
}

// ErrNoContext is the error an expression that reads the context node
// raises where there is none (Expr.NoContext).
var ErrNoContext = errors.New("reads the context node, and a BPEL expression has none (WS-BPEL 2.0 8.2)")

// firstStep is how the first of steps is written, give or take an axis.
func firstStep(steps []*xpath1.Step) string {
	if len(steps) == 0 {
		return "."
	}
	st := steps[0]
	name := st.Local
	if st.Space != "" {
		name = st.Space + ":" + name
	}
	switch {
	case st.Test == xpath1.TestAny:
		name = "*"
	case st.Test != xpath1.TestName:
		name = "node()"
	}
	switch st.Axis {
	case xpath1.AxisAttribute:
		return "@" + name
	case xpath1.AxisSelf:
		return "."
	case xpath1.AxisParent:
		return ".."
	}
	return name
}
