package expr

import (
	"errors"
	"fmt"
	"strings"

	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/suggest"
	"github.com/orchd/orchd/internal/xpath1"
	"github.com/orchd/orchd/internal/xpath2"
)

// isXPath1Function reports whether an XPath 1.0 expression may call
// local (unprefixed or in the fn namespace): XPath 1.0's core library
// (section 4), and lower-case and ends-with, which ODE's Jaxen offered
// too (jaxenFunction binds them).
func isXPath1Function(local string) bool {
	return xpath1.CoreFunction(local) || local == "lower-case" || local == "ends-with"
}

// CheckXPath1Functions refuses a call to a function outside
// isXPath1Function, naming it, and says where the function is to be had
// (XPath 2.0 for XPath 2.0's and for the BPEL and ODE functions); the
// XPath 1.0 compiler refuses them too, but cannot say that. src is the expression after rewrite (BPEL's
// functions resolved); ns resolves prefixes.
func CheckXPath1Functions(src string, ns map[string]string) error {
	return eachCall(src, func(prefix, local string) error { return xpath1Function(prefix, local, ns) })
}

// eachCall calls f with the prefix and local name of each function call
// in the XPath expression src (outside string literals, node tests and
// operators), stopping at the first error.
func eachCall(src string, f func(prefix, local string) error) error {
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
			for i < len(src) && (IsNameChar(src[i]) || src[i] == ':' && i+1 < len(src) && src[i+1] != ':') {
				i++
			}
			continue
		case !IsNameChar(c) || c == '-' || c == '.' || c >= '0' && c <= '9':
			i++
			continue
		}
		j := i
		for j < len(src) && IsNameChar(src[j]) {
			j++
		}
		prefix, local := "", src[i:j]
		if j+1 < len(src) && src[j] == ':' && src[j+1] != ':' {
			k := j + 1
			for k < len(src) && IsNameChar(src[k]) {
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
		if err := f(prefix, local); err != nil {
			return err
		}
	}
	return nil
}

// ErrUndeclaredPrefix is a function name's prefix no namespace declares.
var ErrUndeclaredPrefix = errors.New("undeclared namespace prefix")

func xpath1Function(prefix, local string, ns map[string]string) error {
	name := local
	if prefix != "" {
		name = prefix + ":" + local
		uri, ok := ns[prefix]
		switch {
		case !ok:
			return fmt.Errorf("function %s(): %w %q", name, ErrUndeclaredPrefix, prefix)
		case uri == xmldoc.NSActiveBPELFunctions:
			return abxCheck(name, local, -1)
		case uri == xmldoc.NSODEFunctions || uri == xmldoc.NSBPEL || uri == xmldoc.NSBPEL2004:
			return fmt.Errorf("unknown function %s() in XPath 1.0 (orchd offers the BPEL and ODE functions in XPath 2.0: expressionLanguage %q)", name, LangXPath20)
		case uri != xpath2.FnNamespace:
			return fmt.Errorf("unknown function %s() (namespace %s)", name, uri)
		}
	}
	if !isXPath1Function(local) {
		if isXPath2Function(local) {
			return fmt.Errorf("function %s() is XPath 2.0's, not XPath 1.0's (declare expressionLanguage %q to use it)", name, LangXPath20)
		}
		return fmt.Errorf("unknown function %s()%s", name, suggest.DidYouMean(local, append(xpath1.CoreFunctionNames(), "lower-case", "ends-with")))
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
