package humantask

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/xpath1"
	"github.com/orchd/orchd/internal/xsd"
)

// The expressions of a definition (priority, presentation parameters,
// deadlines, escalation conditions, people from expressions) are XPath
// 1.0 over the task's input: WS-HT's htd:getInput("part") returns the
// input part's element (any part name: orchd's task messages have one
// part), htd:getTaskPriority() the task's priority.

// exprData is what an expression reads at evaluation.
type exprData struct {
	input    *etree.Element
	priority int
}

// compileExpr compiles src with the definition's namespaces.
func compileExpr(src string, ns map[string]string) (*xpath1.Compiled, error) {
	return xpath1.Compile(src, xpath1.Options{Namespaces: ns, Functions: htFunctions})
}

// htFunctions binds WS-HT's XPath functions (in the htd namespace, or
// unprefixed as WSO2's samples sometimes write them).
func htFunctions(space, local string, arity int) (*xpath1.Func, error) {
	if space != NS && space != "" {
		return nil, nil
	}
	switch local {
	case "getInput":
		if arity > 1 {
			return nil, errors.New("htd:getInput takes at most one argument (the part name)")
		}
		return &xpath1.Func{Result: xpath1.NodeSetType, Call: func(c *xpath1.Context, _ []xpath1.Value) (xpath1.Value, error) {
			d, _ := c.Data.(*exprData)
			if d == nil || d.input == nil {
				return xpath1.NodeSet{}, nil
			}
			return xpath1.NodeSet{xpath1.NodeOf(d.input)}, nil
		}}, nil
	case "getTaskPriority":
		return &xpath1.Func{Result: xpath1.NumberType, Call: func(c *xpath1.Context, _ []xpath1.Value) (xpath1.Value, error) {
			d, _ := c.Data.(*exprData)
			if d == nil {
				return float64(defaultPriority), nil
			}
			return float64(d.priority), nil
		}}, nil
	}
	return nil, nil
}

// defaultPriority is a task's priority when its definition gives none
// (WS-HT: 0 is the highest, 10 the lowest; 5 is normal).
const defaultPriority = 5

// eval evaluates src over d.
func eval(src string, d *exprData, ns map[string]string) (xpath1.Value, error) {
	x, err := compileExpr(src, ns)
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", src, err)
	}
	ctx := xpath1.Node{Attr: -1}
	if d != nil && d.input != nil {
		ctx = xpath1.NodeOf(d.input)
	}
	v, err := x.Eval(xpath1.Plain{}, ctx, d)
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", src, err)
	}
	return v, nil
}

// evalString evaluates src to a string.
func evalString(src string, d *exprData, ns map[string]string) (string, error) {
	v, err := eval(src, d, ns)
	if err != nil {
		return "", err
	}
	return xpath1.String(v), nil
}

// evalBool evaluates src to a boolean.
func evalBool(src string, d *exprData, ns map[string]string) (bool, error) {
	v, err := eval(src, d, ns)
	if err != nil {
		return false, err
	}
	return xpath1.Bool(v), nil
}

// evalDuration evaluates a deadline's htd:for: an expression whose
// string is an xsd:duration ('PT5M').
func evalDuration(src string, d *exprData, ns map[string]string) (xsd.Duration, error) {
	s, err := evalString(src, d, ns)
	if err != nil {
		return xsd.Duration{}, err
	}
	dur, err := xsd.ParseDuration(s)
	if err != nil {
		return xsd.Duration{}, fmt.Errorf("htd:for %q: %w", src, err)
	}
	if dur.Months < 0 || dur.Seconds < 0 || dur.Nanos < 0 {
		return xsd.Duration{}, fmt.Errorf("htd:for %q: a deadline cannot be in the past", src)
	}
	return dur, nil
}

// evalUntil evaluates a deadline's htd:until: an xsd:dateTime.
func evalUntil(src string, d *exprData, ns map[string]string) (time.Time, error) {
	s, err := evalString(src, d, ns)
	if err != nil {
		return time.Time{}, err
	}
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("htd:until %q: %q is no xsd:dateTime", src, s)
}

// evalPriority evaluates a priority expression to 0..10.
func evalPriority(src string, d *exprData, ns map[string]string) (int, error) {
	s, err := evalString(src, d, ns)
	if err != nil {
		return 0, err
	}
	p, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || p < 0 || p > 10 {
		return 0, fmt.Errorf("priority %q: %q is no integer from 0 to 10", src, s)
	}
	return p, nil
}

// substitute replaces the $name$ placeholders of a subject or
// description with the presentation parameters' values.
func substitute(s string, params map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i+1:], '$')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		name := s[i+1 : i+1+j]
		if v, ok := params[name]; ok {
			b.WriteString(s[:i])
			b.WriteString(v)
			s = s[i+2+j:]
			continue
		}
		b.WriteString(s[:i+1])
		s = s[i+1:]
	}
}
