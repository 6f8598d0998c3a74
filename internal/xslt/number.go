package xslt

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/xpath2"
)

// numberInstr is xsl:number, levels single and any.
type numberInstr struct {
	level       string
	count, from *pattern
	value       *xpath2.Expr
	format      string
}

func (n *numberInstr) exec(x *run, c *ctx, out *etree.Element) error {
	var num int
	if n.value != nil {
		seq, err := x.evalC(n.value, c)
		if err != nil {
			return err
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(stringOf(seq)), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			addText(out, stringOf(seq))
			return nil
		}
		num = int(math.Floor(f + 0.5))
	} else {
		var err error
		if num, err = n.countNodes(x, c.node); err != nil {
			return err
		}
	}
	addText(out, formatInt(num, n.format))
	return nil
}

// counts reports whether m is counted: the count pattern, or by default
// nodes of the context node's type and name.
func (n *numberInstr) counts(x *run, m, like xpath2.Node) (bool, error) {
	if n.count != nil {
		return n.count.match(x, m)
	}
	return m.Kind() == like.Kind() && m.LocalName() == like.LocalName() && m.NamespaceURI() == like.NamespaceURI(), nil
}

func (n *numberInstr) isFrom(x *run, m xpath2.Node) (bool, error) {
	if n.from == nil {
		return false, nil
	}
	return n.from.match(x, m)
}

func (n *numberInstr) countNodes(x *run, node xpath2.Node) (int, error) {
	if n.level == "single" {
		// the first ancestor-or-self counted, numbered among its siblings
		for a := node; a != nil; a = a.Parent() {
			if stop, err := n.isFrom(x, a); err != nil || stop {
				return 0, err
			}
			ok, err := n.counts(x, a, node)
			if err != nil {
				return 0, err
			}
			if !ok {
				continue
			}
			p := a.Parent()
			if p == nil {
				return 1, nil
			}
			i := 0
			for _, s := range p.Children() {
				if ok, err := n.counts(x, s, node); err != nil {
					return 0, err
				} else if ok {
					i++
				}
				if s.Same(a) {
					break
				}
			}
			return i, nil
		}
		return 0, nil
	}
	// level any: counted nodes before node in document order (preceding
	// and ancestors), and node itself, back to the last "from" match
	root := node
	for root.Parent() != nil {
		root = root.Parent()
	}
	total := 0
	done := false
	var walk func(m xpath2.Node) error
	walk = func(m xpath2.Node) error {
		if done {
			return nil
		}
		if f, err := n.isFrom(x, m); err != nil {
			return err
		} else if f {
			total = 0
		}
		if ok, err := n.counts(x, m, node); err != nil {
			return err
		} else if ok {
			total++
		}
		if m.Same(node) {
			done = true
			return nil
		}
		for _, k := range m.Children() {
			if err := walk(k); err != nil {
				return err
			}
		}
		return nil
	}
	return total, walk(root)
}

// formatInt formats a number with an xsl:number format token and the
// punctuation around it ("1.", "(a)", "01").
func formatInt(v int, format string) string {
	start := strings.IndexFunc(format, isAlnum)
	if start < 0 {
		return format + strconv.Itoa(v)
	}
	end := start + strings.IndexFunc(format[start:], func(r rune) bool { return !isAlnum(r) })
	if end < start {
		end = len(format)
	}
	prefix, tok, suffix := format[:start], format[start:end], format[end:]
	var s string
	switch {
	case tok == "a" || tok == "A":
		s = alpha(v, tok == "A")
	case tok == "i" || tok == "I":
		s = roman(v)
		if tok == "I" {
			s = strings.ToUpper(s)
		}
	case strings.Trim(tok, "0123456789") == "":
		s = fmt.Sprintf("%0*d", len(tok), v)
	default:
		s = strconv.Itoa(v)
	}
	return prefix + s + suffix
}

func isAlnum(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

func alpha(v int, upper bool) string {
	if v <= 0 {
		return strconv.Itoa(v)
	}
	base := byte('a')
	if upper {
		base = 'A'
	}
	var b []byte
	for v > 0 {
		v--
		b = append([]byte{base + byte(v%26)}, b...)
		v /= 26
	}
	return string(b)
}

func roman(v int) string {
	if v <= 0 || v >= 4000 {
		return strconv.Itoa(v)
	}
	vals := []int{1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1}
	syms := []string{"m", "cm", "d", "cd", "c", "xc", "l", "xl", "x", "ix", "v", "iv", "i"}
	var b strings.Builder
	for i, n := range vals {
		for v >= n {
			b.WriteString(syms[i])
			v -= n
		}
	}
	return b.String()
}
