package process

import (
	"errors"
	"fmt"
	"strings"

	"github.com/orchd/orchd/internal/process/bpel"
	"github.com/orchd/orchd/internal/xpath2"
)

// xpath1Functions are the functions an XPath 1.0 expression may call:
// XPath 1.0's core library (section 4), and lower-case and ends-with,
// which ODE's Jaxen offered too. antchfx/xpath knows a few XPath 2.0
// functions besides (matches, replace, reverse, string-join) and ignores
// a function's prefix, so without this check `ode:concat(...)` would run
// as concat and `matches(...)` with XPath 2.0 semantics in an XPath 1.0
// process.
var xpath1Functions = map[string]bool{
	"last": true, "position": true, "count": true, "id": true, "local-name": true,
	"namespace-uri": true, "name": true, "string": true, "concat": true,
	"starts-with": true, "contains": true, "substring-before": true,
	"substring-after": true, "substring": true, "string-length": true,
	"normalize-space": true, "translate": true, "boolean": true, "not": true,
	"true": true, "false": true, "lang": true, "number": true, "sum": true,
	"floor": true, "ceiling": true, "round": true,
	"lower-case": true, "ends-with": true,
}

// checkXPath1Functions refuses a call to a function outside
// xpath1Functions, naming it. src is the expression after rewrite (BPEL's
// functions resolved); ns resolves prefixes.
func checkXPath1Functions(src string, ns map[string]string) error {
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(src[i+1:], c)
			if j < 0 {
				return nil // the compiler reports it
			}
			i += j + 2
			continue
		case c == '@' || c == '$':
			// an attribute or variable name, never a call
			i++
			for i < len(src) && (isNameChar(src[i]) || src[i] == ':' && i+1 < len(src) && src[i+1] != ':') {
				i++
			}
			continue
		case !isNameChar(c) || c == '-' || c == '.' || c >= '0' && c <= '9':
			i++
			continue
		}
		j := i
		for j < len(src) && isNameChar(src[j]) {
			j++
		}
		prefix, local := "", src[i:j]
		if j+1 < len(src) && src[j] == ':' && src[j+1] != ':' {
			k := j + 1
			for k < len(src) && isNameChar(src[k]) {
				k++
			}
			prefix, local = local, src[j+1:k]
			j = k
		}
		k := j
		for k < len(src) && (src[k] == ' ' || src[k] == '\t' || src[k] == '\n' || src[k] == '\r') {
			k++
		}
		i = j
		if k == len(src) || src[k] != '(' {
			continue
		}
		if prefix == "" {
			switch local {
			case "node", "text", "comment", "processing-instruction", "and", "or", "div", "mod":
				continue
			}
		}
		if err := xpath1Function(prefix, local, ns); err != nil {
			return err
		}
	}
	return nil
}

// errUndeclaredPrefix is a function name's prefix no namespace declares.
var errUndeclaredPrefix = errors.New("undeclared namespace prefix")

func xpath1Function(prefix, local string, ns map[string]string) error {
	name := local
	if prefix != "" {
		name = prefix + ":" + local
		uri, ok := ns[prefix]
		switch {
		case !ok:
			return fmt.Errorf("function %s(): %w %q", name, errUndeclaredPrefix, prefix)
		case uri == bpel.NSODEFunctions || uri == bpel.NSBPEL || uri == bpel.NSBPEL2004:
			return fmt.Errorf("unknown function %s() in XPath 1.0 (orchd offers the BPEL and ODE functions in XPath 2.0: expressionLanguage %q)", name, langXPath20)
		case uri != xpath2.FnNamespace:
			return fmt.Errorf("unknown function %s() (namespace %s)", name, uri)
		}
	}
	if !xpath1Functions[local] {
		if isXPath2Function(local) {
			return fmt.Errorf("function %s() is XPath 2.0's, not XPath 1.0's (declare expressionLanguage %q to use it)", name, langXPath20)
		}
		return fmt.Errorf("unknown function %s()", name)
	}
	return nil
}

// isXPath2Function reports whether fn:local exists in XPath 2.0. It runs
// only for an expression about to be refused.
func isXPath2Function(local string) bool {
	l := xpath2.NewFunctionLibrary()
	for n := 0; n <= 4; n++ {
		if l.Lookup(xpath2.FnNamespace, local, n) != nil {
			return true
		}
	}
	return false
}
