package xpath1

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/beevik/etree"
)

// coreFunc is a function of the core library (section 4). It gets its
// arguments unevaluated, so that it converts each the way it needs.
type coreFunc struct {
	min, max int // argument counts; max -1 for any
	result   Type
	nodeArgs []bool // the arguments that must be node-sets
	fn       func(c *Context, x *Call) (Value, error)
}

func (f *coreFunc) arity() string {
	switch {
	case f.min == f.max && f.min == 1:
		return "1 argument"
	case f.min == f.max:
		return fmt.Sprintf("%d arguments", f.min)
	case f.max < 0:
		return fmt.Sprintf("%d or more arguments", f.min)
	}
	return fmt.Sprintf("%d to %d arguments", f.min, f.max)
}

var yes = []bool{true}

// coreFuncs is the core library, by name: a table built once, never
// changed.
var coreFuncs = coreLibrary()

func coreLibrary() map[string]*coreFunc {
	num := func(f func(float64) float64) func(*Context, *Call) (Value, error) {
		return func(c *Context, x *Call) (Value, error) {
			v, err := evalNumber(x.Args[0], c)
			return f(v), err
		}
	}
	str2 := func(f func(a, b string) Value) func(*Context, *Call) (Value, error) {
		return func(c *Context, x *Call) (Value, error) {
			a, err := evalString(x.Args[0], c)
			if err != nil {
				return nil, err
			}
			b, err := evalString(x.Args[1], c)
			if err != nil {
				return nil, err
			}
			return f(a, b), nil
		}
	}
	return map[string]*coreFunc{
		// Node-set functions (4.1).
		"last":     {0, 0, NumberType, nil, func(c *Context, _ *Call) (Value, error) { return float64(c.Size), nil }},
		"position": {0, 0, NumberType, nil, func(c *Context, _ *Call) (Value, error) { return float64(c.Position), nil }},
		"count": {1, 1, NumberType, yes, func(c *Context, x *Call) (Value, error) {
			s, err := evalNodes(x.Args[0], c, "the argument of count()")
			return float64(len(s)), err
		}},
		"id":            {1, 1, NodeSetType, nil, fnID},
		"local-name":    {0, 1, StringType, yes, nameFunc(Node.LocalName)},
		"namespace-uri": {0, 1, StringType, yes, nameFunc(Node.NamespaceURI)},
		"name":          {0, 1, StringType, yes, nameFunc(Node.Name)},
		// String functions (4.2).
		"string": {0, 1, StringType, nil, func(c *Context, x *Call) (Value, error) {
			if len(x.Args) == 0 {
				return c.Node.StringValue(), nil
			}
			return evalString(x.Args[0], c)
		}},
		"concat": {2, -1, StringType, nil, func(c *Context, x *Call) (Value, error) {
			var b strings.Builder
			for _, a := range x.Args {
				s, err := evalString(a, c)
				if err != nil {
					return nil, err
				}
				b.WriteString(s)
			}
			return b.String(), nil
		}},
		"starts-with": {2, 2, BooleanType, nil, str2(func(a, b string) Value { return strings.HasPrefix(a, b) })},
		"contains":    {2, 2, BooleanType, nil, str2(func(a, b string) Value { return strings.Contains(a, b) })},
		"substring-before": {2, 2, StringType, nil, str2(func(a, b string) Value {
			before, _, ok := strings.Cut(a, b)
			if !ok {
				return ""
			}
			return before
		})},
		"substring-after": {2, 2, StringType, nil, str2(func(a, b string) Value {
			_, after, ok := strings.Cut(a, b)
			if !ok {
				return ""
			}
			return after
		})},
		"substring": {2, 3, StringType, nil, func(c *Context, x *Call) (Value, error) {
			s, err := evalString(x.Args[0], c)
			if err != nil {
				return nil, err
			}
			start, err := evalNumber(x.Args[1], c)
			if err != nil {
				return nil, err
			}
			length := math.Inf(1)
			if len(x.Args) == 3 {
				if length, err = evalNumber(x.Args[2], c); err != nil {
					return nil, err
				}
			}
			return Substring(s, start, length), nil
		}},
		"string-length": {0, 1, NumberType, nil, func(c *Context, x *Call) (Value, error) {
			s, err := contextString(c, x)
			return float64(utf8.RuneCountInString(s)), err
		}},
		"normalize-space": {0, 1, StringType, nil, func(c *Context, x *Call) (Value, error) {
			s, err := contextString(c, x)
			return NormalizeSpace(s), err
		}},
		"translate": {3, 3, StringType, nil, func(c *Context, x *Call) (Value, error) {
			var s [3]string
			for i := range s {
				var err error
				if s[i], err = evalString(x.Args[i], c); err != nil {
					return nil, err
				}
			}
			return Translate(s[0], s[1], s[2]), nil
		}},
		// Boolean functions (4.3).
		"boolean": {1, 1, BooleanType, nil, func(c *Context, x *Call) (Value, error) { return evalBool(x.Args[0], c) }},
		"not": {1, 1, BooleanType, nil, func(c *Context, x *Call) (Value, error) {
			b, err := evalBool(x.Args[0], c)
			return !b, err
		}},
		"true":  {0, 0, BooleanType, nil, func(*Context, *Call) (Value, error) { return true, nil }},
		"false": {0, 0, BooleanType, nil, func(*Context, *Call) (Value, error) { return false, nil }},
		"lang":  {1, 1, BooleanType, nil, fnLang},
		// Number functions (4.4).
		"number": {0, 1, NumberType, nil, func(c *Context, x *Call) (Value, error) {
			if len(x.Args) == 0 {
				return Number(c.Node.StringValue()), nil
			}
			return evalNumber(x.Args[0], c)
		}},
		"sum": {1, 1, NumberType, yes, func(c *Context, x *Call) (Value, error) {
			s, err := evalNodes(x.Args[0], c, "the argument of sum()")
			if err != nil {
				return nil, err
			}
			t := 0.0
			for _, n := range s {
				t += Number(n.StringValue())
			}
			return t, nil
		}},
		"floor":   {1, 1, NumberType, nil, num(math.Floor)},
		"ceiling": {1, 1, NumberType, nil, num(math.Ceil)},
		"round":   {1, 1, NumberType, nil, num(Round)},
	}
}

// contextString is the string of a function's optional argument, the
// context node's string-value without one.
func contextString(c *Context, x *Call) (string, error) {
	if len(x.Args) == 0 {
		return c.Node.StringValue(), nil
	}
	return evalString(x.Args[0], c)
}

// nameFunc is local-name, namespace-uri or name: of the first node of the
// argument (in document order), or of the context node.
func nameFunc(f func(Node) string) func(*Context, *Call) (Value, error) {
	return func(c *Context, x *Call) (Value, error) {
		n := c.Node
		if len(x.Args) == 1 {
			s, err := evalNodes(x.Args[0], c, "the argument of "+x.Local+"()")
			if err != nil || len(s) == 0 {
				return "", err
			}
			n = s[0]
		}
		return f(n), nil
	}
}

// Translate is translate(s, from, to) (section 4.2).
func Translate(s, from, to string) string {
	fr, tr := []rune(from), []rune(to)
	var b strings.Builder
	for _, r := range s {
		i := -1
		for j, f := range fr {
			if f == r {
				i = j
				break
			}
		}
		switch {
		case i < 0:
			b.WriteRune(r)
		case i < len(tr):
			b.WriteRune(tr[i])
		}
	}
	return b.String()
}

// fnID is id(): orchd's documents carry no DTD, so no attribute is of
// type ID and id() selects nothing; its argument is still evaluated for
// its errors.
func fnID(c *Context, x *Call) (Value, error) {
	_, err := eval(x.Args[0], c)
	return NodeSet(nil), err
}

// fnLang is lang(s): whether the context node's xml:lang (on it or its
// nearest ancestor with one) is s or a sublanguage of s, ignoring case.
func fnLang(c *Context, x *Call) (Value, error) {
	want, err := evalString(x.Args[0], c)
	if err != nil {
		return nil, err
	}
	for n, ok := c.Node, true; ok; n, ok = parent(c.Tree, n) {
		e, isElem := n.elem()
		if !isElem {
			continue
		}
		if a := xmlLang(e); a != nil {
			l := a.Value
			return strings.EqualFold(l, want) ||
				len(l) > len(want) && l[len(want)] == '-' && strings.EqualFold(l[:len(want)], want), nil
		}
	}
	return false, nil
}

func xmlLang(e *etree.Element) *etree.Attr {
	for i := range e.Attr {
		if e.Attr[i].Space == "xml" && e.Attr[i].Key == "lang" {
			return &e.Attr[i]
		}
	}
	return nil
}

// CoreFunction reports whether name (unprefixed) is a function of XPath
// 1.0's core library.
func CoreFunction(name string) bool {
	_, ok := coreFuncs[name]
	return ok
}

// CoreFunctionNames lists the core library's functions, sorted (for
// "did you mean" suggestions).
func CoreFunctionNames() []string {
	names := make([]string, 0, len(coreFuncs))
	for n := range coreFuncs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func evalCall(x *Call, c *Context) (Value, error) {
	if x.core != nil {
		return x.core.fn(c, x)
	}
	if x.ext == nil {
		return nil, &Error{Pos: x.At, Msg: "unbound function " + x.Local + "()"}
	}
	args := make([]Value, len(x.Args))
	for i, a := range x.Args {
		v, err := eval(a, c)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	v, err := x.ext.Call(c, args)
	if err != nil {
		if _, ok := err.(*Error); !ok {
			err = &Error{Pos: x.At, Msg: fmt.Sprintf("%s(): %v", x.Local, err)}
		}
		return nil, err
	}
	return v, nil
}
