package check

import (
	"strconv"
	"strings"

	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// The expression rules read XPath text with a small scanner, not a
// parser: string literals are skipped, $name references and prefix:name(
// calls found. It is enough for the rules' forms and never needs the
// expression to be valid (the compiler reports syntax).

func isNameChar(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// skipLiteral returns the index after the string literal starting at i.
func skipLiteral(s string, i int) int {
	q := s[i]
	j := strings.IndexByte(s[i+1:], q)
	if j < 0 {
		return len(s)
	}
	return i + 1 + j + 1
}

// refs are the names of the variable references ($name) in s.
func refs(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\'' || c == '"':
			i = skipLiteral(s, i)
		case c == '$':
			j := i + 1
			for j < len(s) && (isNameChar(s[j]) || s[j] == ':') {
				j++
			}
			if j > i+1 {
				out = append(out, s[i+1:j])
			}
			i = j
		default:
			i++
		}
	}
	return out
}

// call is a function call found in an expression.
type call struct {
	prefix, local string
	args          []string // top-level arguments, trimmed
}

// calls are the prefixed function calls of s (prefix:name(...)).
func calls(s string) []call {
	var out []call
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\'' || c == '"' {
			i = skipLiteral(s, i)
			continue
		}
		if !isNameChar(c) || (i > 0 && (isNameChar(s[i-1]) || s[i-1] == '$' || s[i-1] == ':')) {
			i++
			continue
		}
		j := i
		for j < len(s) && isNameChar(s[j]) {
			j++
		}
		k := j
		if k < len(s) && s[k] == ':' {
			k++
			for k < len(s) && isNameChar(s[k]) {
				k++
			}
			m := k
			for m < len(s) && (s[m] == ' ' || s[m] == '\t' || s[m] == '\n' || s[m] == '\r') {
				m++
			}
			if k > j+1 && m < len(s) && s[m] == '(' {
				args, _ := splitArgs(s, m)
				out = append(out, call{prefix: s[i:j], local: s[j+1 : k], args: args})
			}
		}
		i = k
		if i == j {
			i++
		}
	}
	return out
}

// splitArgs splits the argument list whose '(' is at open into its
// top-level arguments; end is the index after ')'.
func splitArgs(s string, open int) (args []string, end int) {
	depth, start := 0, open+1
	for i := open; i < len(s); {
		switch s[i] {
		case '\'', '"':
			i = skipLiteral(s, i)
			continue
		case '(', '[':
			depth++
		case ')', ']':
			depth--
			if depth == 0 {
				if a := strings.TrimSpace(s[start:i]); a != "" || len(args) > 0 {
					args = append(args, a)
				}
				return args, i + 1
			}
		case ',':
			if depth == 1 {
				args = append(args, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
		i++
	}
	return args, len(s)
}

// bpelCall reports whether c calls a WS-BPEL function: its prefix is
// bound to the WS-BPEL namespace at e.
func bpelCall(e *ast.Element, c call) bool {
	uri, _, err := e.ResolveQName(c.prefix+":x", false)
	return err == nil && (uri == xmldoc.NSBPEL || uri == xmldoc.NSBPEL2004)
}

// isStringLiteral reports a quoted XPath string literal.
func isStringLiteral(a string) bool {
	return len(a) >= 2 && (a[0] == '\'' || a[0] == '"') && a[len(a)-1] == a[0] && !strings.ContainsRune(a[1:len(a)-1], rune(a[0]))
}

// isQName reports whether s is a QName (prefix:local or local).
func isQName(s string) bool {
	parts := strings.Split(s, ":")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if !isNCName(p) {
			return false
		}
	}
	return true
}

// isNCName reports whether s is an XML NCName (ASCII approximation:
// letters, digits, '_', '-', '.' and non-ASCII, not starting with a digit,
// '-' or '.').
func isNCName(s string) bool {
	if s == "" || s[0] == '-' || s[0] == '.' || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isNameChar(s[i]) {
			return false
		}
	}
	return true
}

// expressionElems are the elements whose text is an expression or query.
var expressionElems = []string{"condition", "joinCondition", "transitionCondition", "for", "until", "repeatEvery",
	"startCounterValue", "finalCounterValue", "branches", "from", "to", "query"}

// eachCall calls f for every call of the WS-BPEL function local in the
// process's expressions.
func (p *pass) eachCall(local string, f func(e *ast.Element, c call)) {
	p.each(func(e *ast.Element) {
		text := expression(e)
		if !strings.Contains(text, local) {
			return
		}
		for _, c := range calls(text) {
			if c.local == local && bpelCall(e, c) {
				f(e, c)
			}
		}
	}, expressionElems...)
}

func checkJoinConditionFunctions(p *pass) {
	p.each(func(jc *ast.Element) {
		for _, c := range calls(expression(jc)) {
			if bpelCall(jc, c) {
				p.report(jc, "a join condition must not call WS-BPEL functions (%s:%s); use only its links' status", c.prefix, c.local)
			}
		}
	}, "joinCondition")
}

func checkAliasQuery(p *pass) {
	for k, a := range p.w.Aliases {
		if rs := refs(a.Query); len(rs) > 0 {
			p.reportAt(a.Pos, "vprop:propertyAlias", "the query of the propertyAlias for %s refers to $%s; a propertyAlias query must not use variables", k.Prop.Local, rs[0])
			continue
		}
		for _, c := range calls(a.Query) {
			if uri, ok := a.Ns[c.prefix]; ok && (uri == xmldoc.NSBPEL || uri == xmldoc.NSBPEL2004) {
				p.reportAt(a.Pos, "vprop:propertyAlias", "the query of the propertyAlias for %s calls %s:%s; a propertyAlias query must not use WS-BPEL functions", k.Prop.Local, c.prefix, c.local)
				break
			}
		}
	}
}

func checkGetVariablePropertyArgs(p *pass) {
	p.eachCall("getVariableProperty", func(e *ast.Element, c call) {
		for _, a := range c.args {
			if !isStringLiteral(a) {
				p.report(e, "the arguments of bpel:getVariableProperty must be quoted strings, not %s; write the variable and property names as literals", a)
				return
			}
		}
	})
}

func checkGetVariablePropertyQName(p *pass) {
	p.eachCall("getVariableProperty", func(e *ast.Element, c call) {
		if len(c.args) == 2 && isStringLiteral(c.args[1]) && !isQName(c.args[1][1:len(c.args[1])-1]) {
			p.report(e, "the second argument of bpel:getVariableProperty, %s, must be a property's QName", c.args[1])
		}
	})
}

func checkXslStylesheet(p *pass) {
	p.eachCall("doXslTransform", func(e *ast.Element, c call) {
		if len(c.args) > 0 && !isStringLiteral(c.args[0]) {
			p.report(e, "the first argument of bpel:doXslTransform must be the stylesheet's URI as a string literal, not %s", c.args[0])
		}
	})
}

func checkXslParamPairs(p *pass) {
	p.eachCall("doXslTransform", func(e *ast.Element, c call) {
		if len(c.args) > 2 && (len(c.args)-2)%2 != 0 {
			p.report(e, "bpel:doXslTransform takes its stylesheet parameters in name-value pairs; %d arguments follow the source, give each name a value", len(c.args)-2)
		}
	})
}

func checkXslParamNames(p *pass) {
	p.eachCall("doXslTransform", func(e *ast.Element, c call) {
		for i := 2; i < len(c.args); i += 2 {
			a := c.args[i]
			if !isStringLiteral(a) || !isQName(a[1:len(a)-1]) {
				p.report(e, "stylesheet parameter name %s of bpel:doXslTransform must be a QName in a string literal", a)
			}
		}
	})
}

// constant is the value of an expression that is a number literal.
func constant(e *ast.Element) (float64, bool) {
	t := expression(e)
	if isStringLiteral(t) {
		t = strings.TrimSpace(t[1 : len(t)-1])
	}
	v, err := strconv.ParseFloat(t, 64)
	return v, err == nil && !strings.ContainsAny(t, "eEinfINFx")
}

func checkCounterConstants(p *pass) {
	p.each(func(e *ast.Element) {
		if attr(e, "expressionLanguage") != "" {
			return
		}
		t := expression(e)
		if isStringLiteral(t) && strings.TrimSpace(t[1:len(t)-1]) == "" {
			p.report(e, "the %s is an empty string; it must be an xsd:unsignedInt", e.Tag)
			return
		}
		if v, ok := constant(e); ok && (v < 0 || v != float64(int64(v)) || v > 4294967295) {
			p.report(e, "the %s is %s, not an xsd:unsignedInt (0 to 4294967295)", e.Tag, t)
		}
	}, "startCounterValue", "finalCounterValue")
}

func checkBranchesConstant(p *pass) {
	p.each(func(fe *ast.Element) {
		cc := child(fe, "completionCondition")
		if cc == nil || child(cc, "branches") == nil {
			return
		}
		br, ok1 := constant(child(cc, "branches"))
		start, ok2 := constant(orEmpty(child(fe, "startCounterValue")))
		final, ok3 := constant(orEmpty(child(fe, "finalCounterValue")))
		if ok1 && ok2 && ok3 && br > final-start+1 {
			p.report(child(cc, "branches"), "the completion condition waits for %v branches but the forEach runs only %v; lower <branches>", br, final-start+1)
		}
	}, "forEach")
}

func orEmpty(e *ast.Element) *ast.Element {
	if e == nil {
		return &ast.Element{Tag: "none"}
	}
	return e
}

func checkToExpression(p *pass) {
	p.each(func(to *ast.Element) {
		if to.Parent() == nil || to.Parent().Tag != "copy" || len(to.Attrs) > countNS(to) && !onlyLang(to) || !xpath1(to) {
			return
		}
		t := expression(to)
		if t == "" || child(to, "query") != nil {
			return
		}
		if !strings.HasPrefix(t, "$") {
			p.report(to, "the expression of a <to> must begin with a variable reference ($name...), not %q", t)
		}
	}, "to")
}

// countNS is the number of namespace declarations among e's attributes.
func countNS(e *ast.Element) int {
	n := 0
	for _, a := range e.Attrs {
		if a.Space == "xmlns" || (a.Space == "" && a.Key == "xmlns") {
			n++
		}
	}
	return n
}

// onlyLang reports whether e's only other attribute is expressionLanguage.
func onlyLang(e *ast.Element) bool {
	return len(e.Attrs)-countNS(e) == 1 && hasAttr(e, "expressionLanguage")
}

// langXPath10 is WS-BPEL's XPath 1.0 binding, the only expression
// language the specification defines (and its rules speak of).
const langXPath10 = "urn:oasis:names:tc:wsbpel:2.0:sublang:xpath1.0"

// xpath1 reports whether e's expression is XPath 1.0: its own
// expressionLanguage, else the process's, else the default.
func xpath1(e *ast.Element) bool {
	lang := attr(e, "expressionLanguage")
	if lang == "" {
		for r := e; r != nil; r = r.Parent() {
			if r.Tag == "process" && isBPEL(r) {
				lang = attr(r, "expressionLanguage")
			}
		}
	}
	return lang == "" || lang == langXPath10
}
