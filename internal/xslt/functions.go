package xslt

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/orchd/orchd/internal/xpath2"
)

// newLibrary is the fn: library plus XSLT 1.0's functions, closing over
// the stylesheet (for key()).
func newLibrary(s *Stylesheet) *xpath2.FunctionLibrary {
	l := xpath2.NewFunctionLibrary()
	fn := xpath2.FnNamespace
	l.Register(fn, "current", 0, 0, func(c xpath2.Context, _ []xpath2.Sequence) (xpath2.Sequence, error) {
		v, _ := c.Dynamic().Variables(internalNS, "current")
		return v, nil
	})
	l.Register(fn, "document", 1, 2, func(xpath2.Context, []xpath2.Sequence) (xpath2.Sequence, error) {
		return nil, &xpath2.Error{Code: "XTDE1170", Msg: "document() is not supported: a stylesheet reads only its source"}
	})
	l.Register(fn, "key", 2, 2, func(c xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
		return s.key(c, args)
	})
	l.Register(fn, "generate-id", 0, 1, func(c xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
		var n xpath2.Node
		if len(args) == 0 {
			n, _ = c.Item().(xpath2.Node)
		} else if len(args[0]) > 0 {
			n, _ = args[0][0].(xpath2.Node)
		}
		if n == nil {
			return xpath2.Sequence{xpath2.Str("")}, nil
		}
		return xpath2.Sequence{xpath2.Str(generateID(n))}, nil
	})
	l.Register(fn, "system-property", 1, 1, func(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
		switch v := stringOf(args[0]); v {
		case "xsl:version":
			return xpath2.Sequence{xpath2.Dbl(1)}, nil
		case "xsl:vendor":
			return xpath2.Sequence{xpath2.Str("orchd")}, nil
		case "xsl:vendor-url":
			return xpath2.Sequence{xpath2.Str("")}, nil
		}
		return xpath2.Sequence{xpath2.Str("")}, nil
	})
	avail := func(supported map[string]bool) xpath2.FuncImpl {
		return func(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
			return xpath2.Sequence{xpath2.Boolean(supported[stringOf(args[0])])}, nil
		}
	}
	l.Register(fn, "element-available", 1, 1, avail(map[string]bool{
		"xsl:apply-templates": true, "xsl:call-template": true, "xsl:value-of": true, "xsl:copy-of": true,
		"xsl:copy": true, "xsl:for-each": true, "xsl:if": true, "xsl:choose": true, "xsl:variable": true,
		"xsl:element": true, "xsl:attribute": true, "xsl:text": true, "xsl:comment": true,
		"xsl:processing-instruction": true, "xsl:number": true, "xsl:message": true, "xsl:fallback": true,
	}))
	l.Register(fn, "function-available", 1, 1, func(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
		name := stringOf(args[0])
		ok := !strings.Contains(name, ":") && name != "document" && l.Lookup(fn, name, 1) != nil || l.Lookup(fn, name, 0) != nil || l.Lookup(fn, name, 2) != nil
		return xpath2.Sequence{xpath2.Boolean(ok && name != "document")}, nil
	})
	return l
}

// generateID names a node by its path of child indexes from its root.
func generateID(n xpath2.Node) string {
	var parts []string
	for x := n; x != nil; x = x.Parent() {
		p := x.Parent()
		if p == nil {
			break
		}
		i := 0
		if x.Kind() == xpath2.AttributeNode {
			for j, a := range p.Attributes() {
				if a.Same(x) {
					i = j
				}
			}
			parts = append(parts, "a"+strconv.Itoa(i))
			continue
		}
		for j, k := range p.Children() {
			if k.Same(x) {
				i = j
			}
		}
		parts = append(parts, strconv.Itoa(i))
	}
	var b strings.Builder
	b.WriteString("id")
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString("_" + parts[i])
	}
	return b.String()
}

// key is key(name, value): the nodes of the context node's document that
// an xsl:key of that name matches and whose use value equals value (or
// one of value's items).
func (s *Stylesheet) key(c xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
	name := stringOf(args[0])
	defs := s.keys[name]
	if defs == nil {
		return nil, &xpath2.Error{Code: "XTDE1260", Msg: fmt.Sprintf("key(): no xsl:key named %q", name)}
	}
	want := map[string]bool{}
	for _, it := range args[1] {
		want[itemString(it)] = true
	}
	n, ok := c.Item().(xpath2.Node)
	if !ok {
		return nil, &xpath2.Error{Code: "XTDE1270", Msg: "key(): no context node"}
	}
	for n.Parent() != nil {
		n = n.Parent()
	}
	x := &run{s: s, opt: &Options{}, globals: map[string]xpath2.Sequence{}, busy: map[string]bool{}, steps: DefaultMaxSteps}
	var out xpath2.Sequence
	var walk func(m xpath2.Node) error
	visit := func(m xpath2.Node) error {
		for _, d := range defs {
			ok, err := d.match.match(x, m)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			seq, err := x.eval(d.use, m, 1, 1, nil)
			if err != nil {
				return err
			}
			for _, it := range seq {
				if want[itemString(it)] {
					out = append(out, m)
					return nil
				}
			}
		}
		return nil
	}
	walk = func(m xpath2.Node) error {
		if err := visit(m); err != nil {
			return err
		}
		for _, a := range m.Attributes() {
			if err := visit(a); err != nil {
				return err
			}
		}
		for _, k := range m.Children() {
			if err := walk(k); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(n); err != nil {
		return nil, err
	}
	return out, nil
}
