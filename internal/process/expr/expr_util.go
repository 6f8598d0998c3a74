package expr

import (
	"fmt"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

func FirstElement(e *etree.Element) *etree.Element {
	for _, c := range e.Child {
		if ce, ok := c.(*etree.Element); ok {
			return ce
		}
	}
	return nil
}

// SplitSteps splits a relative location path at the slashes outside
// predicates and string literals.
func SplitSteps(s string) ([]string, error) {
	var steps []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("an unterminated string literal")
			}
			i += j + 1
		case '[':
			depth++
		case ']':
			depth--
		case '|':
			if depth == 0 {
				return nil, fmt.Errorf("a union (|)")
			}
		case '/':
			if depth > 0 {
				continue
			}
			if i == start {
				return nil, fmt.Errorf("// (descendant steps)")
			}
			steps = append(steps, s[start:i])
			start = i + 1
		}
	}
	if start == len(s) {
		return nil, fmt.Errorf("an empty step (trailing /)")
	}
	return append(steps, s[start:]), nil
}

// odeVariable reports a reference to one of ODE's special variables
// ($ode:pid, $ode:processQName) at src[i:] (src[i] is '$') in an XPath 1.0
// expression: orchd provides them to XPath 2.0 only.
func odeVariable(src string, i int, ns map[string]string) error {
	j := i + 1
	for j < len(src) && IsNameChar(src[j]) && src[j] != '.' {
		j++
	}
	if j >= len(src) || src[j] != ':' || ns[src[i+1:j]] != xmldoc.NSODEFunctions {
		return nil
	}
	k := j + 1
	for k < len(src) && IsNameChar(src[k]) && src[k] != '.' {
		k++
	}
	return fmt.Errorf("%w: ODE variable %s in %q", xmldoc.ErrNotSupported, src[i:k], src)
}
