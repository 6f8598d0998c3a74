package xslt

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xpath2"
)

// NS is the XSLT namespace.
const NS = "http://www.w3.org/1999/XSL/Transform"

// internalNS names the variables the processor passes to its own
// functions (current()).
const internalNS = "urn:orchd:xslt:internal"

// CompileError is a stylesheet the processor refuses.
type CompileError struct {
	Pos  xmldoc.Pos
	Elem string // the element's name as written, e.g. "xsl:number"
	Err  error
}

func (e *CompileError) Error() string {
	if e.Elem == "" {
		return fmt.Sprintf("%s: %v", e.Pos, e.Err)
	}
	return fmt.Sprintf("%s: <%s>: %v", e.Pos, e.Elem, e.Err)
}

func (e *CompileError) Unwrap() error { return e.Err }

// Stylesheet is a compiled stylesheet: immutable, safe for concurrent use.
type Stylesheet struct {
	file      string
	rules     []*rule
	named     map[string]*template
	globals   []*variable
	keys      map[string][]*keyDef
	strip     []nameTest
	preserve  []nameTest
	lib       *xpath2.FunctionLibrary
	globalIdx map[string]*variable
}

type template struct {
	name   string
	mode   string
	params []*variable
	body   []instr
}

type rule struct {
	t        *template
	p        *pathPat
	priority float64
	order    int
}

type keyDef struct {
	match *pattern
	use   *xpath2.Expr
}

type compiler struct {
	doc  *xmldoc.Document
	s    *Stylesheet
	errs []error
	// globals are the names of the global variables and parameters;
	// scope the local ones in scope where an expression is compiled.
	globals map[string]bool
	scope   []string
}

func (c *compiler) fail(e *etree.Element, format string, args ...any) {
	c.errs = append(c.errs, &CompileError{Pos: c.doc.Pos(e), Elem: e.FullTag(), Err: fmt.Errorf(format, args...)})
}

// Compile parses and compiles the stylesheet data read from file (the
// name errors give).
func Compile(file string, data []byte) (*Stylesheet, error) {
	doc, err := xmldoc.Parse(file, data)
	if err != nil {
		return nil, fmt.Errorf("stylesheet: %w", err)
	}
	c := &compiler{doc: doc, s: &Stylesheet{file: file, named: map[string]*template{}, keys: map[string][]*keyDef{}, globalIdx: map[string]*variable{}}}
	c.s.lib = newLibrary(c.s)
	root := doc.Root
	if !c.isXSL(root, "stylesheet") && !c.isXSL(root, "transform") {
		if c.nsOf(root) == NS {
			c.fail(root, "not a stylesheet element")
		} else {
			c.fail(root, "literal result element as stylesheet is not supported; use xsl:stylesheet")
		}
		return nil, errors.Join(c.errs...)
	}
	if root.SelectAttr("version") == nil {
		c.fail(root, "missing version attribute")
	}
	excl := c.excluded(root, root.SelectAttrValue("exclude-result-prefixes", ""))
	c.globals = map[string]bool{}
	for _, e := range root.ChildElements() {
		if (c.isXSL(e, "variable") || c.isXSL(e, "param")) && e.SelectAttrValue("name", "") != "" {
			c.globals[c.qname(e, e.SelectAttrValue("name", ""))] = true
		}
	}
	for _, e := range root.ChildElements() {
		if c.nsOf(e) != NS {
			continue // top-level elements of other namespaces are ignored
		}
		switch e.Tag {
		case "template":
			c.template(e, excl)
		case "variable", "param":
			v := c.variable(e, excl)
			if v != nil {
				if _, dup := c.s.globalIdx[v.name]; dup {
					c.fail(e, "duplicate global variable %q", v.name)
				}
				c.s.globalIdx[v.name] = v
				c.s.globals = append(c.s.globals, v)
			}
		case "output":
			if m := e.SelectAttrValue("method", "xml"); m != "xml" {
				c.fail(e, "output method %q is not supported: the result of doXslTransform is an element (method xml)", m)
			}
		case "key":
			name := e.SelectAttrValue("name", "")
			m := c.pattern(e, "match")
			u := c.xpath(e, "use", true)
			if name == "" {
				c.fail(e, "missing name attribute")
			}
			if m != nil && u != nil {
				c.s.keys[c.qname(e, name)] = append(c.s.keys[c.qname(e, name)], &keyDef{m, u})
			}
		case "strip-space", "preserve-space":
			var tests []nameTest
			for _, f := range strings.Fields(e.SelectAttrValue("elements", "")) {
				t, err := c.nameTest(e, f)
				if err != nil {
					c.fail(e, "%v", err)
					continue
				}
				tests = append(tests, t)
			}
			if e.Tag == "strip-space" {
				c.s.strip = append(c.s.strip, tests...)
			} else {
				c.s.preserve = append(c.s.preserve, tests...)
			}
		case "import", "include", "attribute-set", "namespace-alias", "decimal-format":
			c.fail(e, "not supported")
		default:
			c.fail(e, "unknown top-level element")
		}
	}
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	return c.s, nil
}

func (c *compiler) nsOf(e *etree.Element) string {
	u, _, _ := xmldoc.ResolveQName(e, e.FullTag(), true)
	return u
}

func (c *compiler) isXSL(e *etree.Element, local string) bool {
	return e.Tag == local && c.nsOf(e) == NS
}

// qname resolves a QName written in e (no default namespace) to "{ns}local"
// or "local".
func (c *compiler) qname(e *etree.Element, q string) string {
	u, l, err := xmldoc.ResolveQName(e, q, false)
	if err != nil {
		c.fail(e, "%v", err)
		return q
	}
	if u == "" {
		return l
	}
	return "{" + u + "}" + l
}

// excluded returns the URIs excluded from literal result elements.
func (c *compiler) excluded(e *etree.Element, list string) map[string]bool {
	m := map[string]bool{NS: true}
	for _, p := range strings.Fields(list) {
		if p == "#default" {
			p = ""
		}
		u, ok := xmldoc.Namespaces(e)[p]
		if !ok {
			c.fail(e, "exclude-result-prefixes: undeclared prefix %q", p)
			continue
		}
		m[u] = true
	}
	return m
}

// staticContext is what an expression written in e is compiled against:
// e's namespaces, the function library, and the variables in scope there.
func (c *compiler) staticContext(e *etree.Element) *xpath2.StaticContext {
	ns := xmldoc.Namespaces(e)
	delete(ns, "")
	locals := make(map[string]bool, len(c.scope))
	for _, n := range c.scope {
		locals[n] = true
	}
	globals := c.globals
	return &xpath2.StaticContext{Namespaces: ns, Functions: c.s.lib, Variables: func(space, local string) bool {
		if space == internalNS {
			return true
		}
		name := local
		if space != "" {
			name = "{" + space + "}" + local
		}
		return locals[name] || globals[name]
	}}
}

// compileExpr compiles an XPath expression written in e.
func (c *compiler) compileExpr(e *etree.Element, what, src string) *xpath2.Expr {
	x, err := xpath2.Compile(src, c.staticContext(e))
	if err != nil {
		c.fail(e, "%s %q: %w", what, src, err)
		return nil
	}
	return x
}

// xpath compiles attribute attr of e; required says whether it must be
// there (nil, without error, when it is absent and optional).
func (c *compiler) xpath(e *etree.Element, attr string, required bool) *xpath2.Expr {
	a := e.SelectAttr(attr)
	if a == nil {
		if required {
			c.fail(e, "missing %s attribute", attr)
		}
		return nil
	}
	return c.compileExpr(e, attr, a.Value)
}

func (c *compiler) template(e *etree.Element, excl map[string]bool) {
	t := &template{name: e.SelectAttrValue("name", ""), mode: e.SelectAttrValue("mode", "")}
	if t.name != "" {
		t.name = c.qname(e, t.name)
	}
	if t.mode != "" {
		t.mode = c.qname(e, t.mode)
	}
	kids := c.bodyTokens(e)
	saved := len(c.scope)
	i := 0
	for ; i < len(kids); i++ {
		k, ok := kids[i].(*etree.Element)
		if !ok || !c.isXSL(k, "param") {
			break
		}
		if v := c.variable(k, excl); v != nil {
			t.params = append(t.params, v)
			c.scope = append(c.scope, v.name)
		}
	}
	t.body = c.seq(kids[i:], excl)
	c.scope = c.scope[:saved]
	m := e.SelectAttr("match")
	if m == nil && t.name == "" {
		c.fail(e, "a template needs a match or a name attribute")
		return
	}
	if t.name != "" {
		if _, dup := c.s.named[t.name]; dup {
			c.fail(e, "duplicate template name %q", t.name)
		}
		c.s.named[t.name] = t
	}
	if m == nil {
		return
	}
	p := c.pattern(e, "match")
	if p == nil {
		return
	}
	var prio *float64
	if a := e.SelectAttr("priority"); a != nil {
		var f float64
		if _, err := fmt.Sscan(a.Value, &f); err != nil {
			c.fail(e, "priority %q is not a number", a.Value)
			return
		}
		prio = &f
	}
	for _, alt := range p.alts {
		r := &rule{t: t, p: alt, priority: alt.defaultPriority(), order: len(c.s.rules)}
		if prio != nil {
			r.priority = *prio
		}
		c.s.rules = append(c.s.rules, r)
	}
}

// bodyTokens returns the children of e that a sequence constructor
// holds: elements and text that is not whitespace only (xsl:text keeps
// its whitespace apart).
func (c *compiler) bodyTokens(e *etree.Element) []etree.Token {
	var out []etree.Token
	for _, t := range e.Child {
		switch x := t.(type) {
		case *etree.Element:
			out = append(out, x)
		case *etree.CharData:
			if strings.TrimSpace(x.Data) != "" || e.SelectAttrValue("xml:space", "") == "preserve" {
				out = append(out, x)
			}
		}
	}
	return out
}

// seq compiles a sequence constructor; a local variable is in scope for
// the instructions after it.
func (c *compiler) seq(toks []etree.Token, excl map[string]bool) []instr {
	var out []instr
	saved := len(c.scope)
	for _, t := range toks {
		switch x := t.(type) {
		case *etree.CharData:
			out = append(out, &textInstr{s: x.Data})
		case *etree.Element:
			if in := c.instruction(x, excl); in != nil {
				out = append(out, in)
				if v, ok := in.(*variable); ok {
					c.scope = append(c.scope, v.name)
				}
			}
		}
	}
	c.scope = c.scope[:saved]
	return out
}

func (c *compiler) body(e *etree.Element, excl map[string]bool) []instr {
	return c.seq(c.bodyTokens(e), excl)
}

func (c *compiler) instruction(e *etree.Element, excl map[string]bool) instr {
	if c.nsOf(e) != NS {
		return c.literal(e, excl)
	}
	switch e.Tag {
	case "apply-templates":
		a := &applyTemplates{sel: c.xpath(e, "select", false)}
		if m := e.SelectAttrValue("mode", ""); m != "" {
			a.mode = c.qname(e, m)
		}
		a.sorts, a.params = c.sortsAndParams(e, excl, true)
		return a
	case "call-template":
		name := e.SelectAttrValue("name", "")
		if name == "" {
			c.fail(e, "missing name attribute")
			return nil
		}
		ct := &callTemplate{name: c.qname(e, name), pos: c.doc.Pos(e)}
		_, ct.params = c.sortsAndParams(e, excl, false)
		return ct
	case "value-of":
		return &valueOf{sel: c.xpath(e, "select", true)}
	case "copy-of":
		return &copyOf{sel: c.xpath(e, "select", true)}
	case "copy":
		return &copyInstr{body: c.body(e, excl)}
	case "for-each":
		f := &forEach{sel: c.xpath(e, "select", true)}
		var rest []etree.Token
		for _, t := range c.bodyTokens(e) {
			if k, ok := t.(*etree.Element); ok && c.isXSL(k, "sort") {
				if s := c.sortKey(k); s != nil {
					f.sorts = append(f.sorts, s)
				}
				continue
			}
			rest = append(rest, t)
		}
		f.body = c.seq(rest, excl)
		return f
	case "if":
		return &ifInstr{test: c.xpath(e, "test", true), body: c.body(e, excl)}
	case "choose":
		ch := &choose{}
		for _, k := range e.ChildElements() {
			switch {
			case c.isXSL(k, "when"):
				ch.whens = append(ch.whens, when{test: c.xpath(k, "test", true), body: c.body(k, excl)})
			case c.isXSL(k, "otherwise"):
				ch.otherwise = c.body(k, excl)
			default:
				c.fail(k, "not allowed in xsl:choose")
			}
		}
		if len(ch.whens) == 0 {
			c.fail(e, "xsl:choose needs at least one xsl:when")
		}
		return ch
	case "variable":
		if v := c.variable(e, excl); v != nil {
			return v
		}
		return nil // a typed nil would pass as an instruction
	case "param":
		c.fail(e, "xsl:param must come first in a template")
		return nil
	case "text":
		return &textInstr{s: e.Text()}
	case "element":
		return &elementInstr{name: c.avt(e, "name", true), ns: c.avt(e, "namespace", false), scope: e, body: c.body(e, excl)}
	case "attribute":
		return &attributeInstr{name: c.avt(e, "name", true), ns: c.avt(e, "namespace", false), scope: e, body: c.body(e, excl)}
	case "comment":
		return &commentInstr{body: c.body(e, excl)}
	case "processing-instruction":
		return &piInstr{name: c.avt(e, "name", true), body: c.body(e, excl)}
	case "number":
		return c.number(e)
	case "message":
		return &messageInstr{terminate: e.SelectAttrValue("terminate", "no") == "yes", body: c.body(e, excl), pos: c.doc.Pos(e)}
	case "fallback":
		return nil
	}
	c.fail(e, "not supported")
	return nil
}

func (c *compiler) sortsAndParams(e *etree.Element, excl map[string]bool, sorts bool) ([]*sortKey, []*variable) {
	var ss []*sortKey
	var ps []*variable
	for _, k := range e.ChildElements() {
		switch {
		case sorts && c.isXSL(k, "sort"):
			if s := c.sortKey(k); s != nil {
				ss = append(ss, s)
			}
		case c.isXSL(k, "with-param"):
			if v := c.variable(k, excl); v != nil {
				ps = append(ps, v)
			}
		default:
			c.fail(k, "not allowed in <%s>", e.FullTag())
		}
	}
	return ss, ps
}

func (c *compiler) sortKey(e *etree.Element) *sortKey {
	s := &sortKey{sel: c.xpath(e, "select", false)}
	s.order = c.avt(e, "order", false)
	s.dataType = c.avt(e, "data-type", false)
	return s
}

func (c *compiler) variable(e *etree.Element, excl map[string]bool) *variable {
	name := e.SelectAttrValue("name", "")
	if name == "" {
		c.fail(e, "missing name attribute")
		return nil
	}
	v := &variable{name: c.qname(e, name), sel: c.xpath(e, "select", false), param: e.Tag == "param", pos: c.doc.Pos(e)}
	if v.sel != nil && len(c.bodyTokens(e)) > 0 {
		c.fail(e, "has both a select attribute and content")
	}
	v.body = c.body(e, excl)
	v.hasBody = len(v.body) > 0
	return v
}

// literal compiles a literal result element.
func (c *compiler) literal(e *etree.Element, excl map[string]bool) instr {
	l := &literal{prefix: e.Space, local: e.Tag, uri: c.nsOf(e)}
	excl2 := excl
	if a := e.SelectAttr("xsl:exclude-result-prefixes"); a != nil {
		excl2 = map[string]bool{}
		for k := range excl {
			excl2[k] = true
		}
		for k := range c.excluded(e, a.Value) {
			excl2[k] = true
		}
	}
	// XSLT 1.0 section 7.1.1: the element gets the namespaces in scope
	// in the stylesheet but the XSLT one and the excluded ones (which a
	// QName in content may need).
	ns := xmldoc.Namespaces(e)
	prefixes := make([]string, 0, len(ns))
	for p := range ns {
		prefixes = append(prefixes, p)
	}
	sort.Strings(prefixes)
	for _, p := range prefixes {
		if u := ns[p]; p != "xml" && u != "" && !excl2[u] {
			l.decls = append(l.decls, [2]string{p, u})
		}
	}
	for _, a := range e.Attr {
		switch {
		case a.Space == "xmlns" || (a.Space == "" && a.Key == "xmlns"):
		case a.Space != "" && c.attrNS(e, a.Space) == NS:
			// xsl:exclude-result-prefixes, xsl:version, ... are not output
		default:
			uri := ""
			if a.Space != "" {
				uri = c.attrNS(e, a.Space)
			}
			x := c.parseAVT(e, a.Key, a.Value)
			l.attrs = append(l.attrs, litAttr{prefix: a.Space, local: a.Key, uri: uri, v: x})
		}
	}
	l.body = c.body(e, excl2)
	return l
}

func (c *compiler) attrNS(e *etree.Element, prefix string) string {
	if prefix == "xml" {
		return "http://www.w3.org/XML/1998/namespace"
	}
	return xmldoc.Namespaces(e)[prefix]
}

// avt compiles attribute attr of e as an attribute value template.
func (c *compiler) avt(e *etree.Element, attr string, required bool) *avt {
	a := e.SelectAttr(attr)
	if a == nil {
		if required {
			c.fail(e, "missing %s attribute", attr)
		}
		return nil
	}
	return c.parseAVT(e, attr, a.Value)
}

func (c *compiler) parseAVT(e *etree.Element, attr, v string) *avt {
	out := &avt{}
	var lit strings.Builder
	for i := 0; i < len(v); i++ {
		ch := v[i]
		switch {
		case ch == '{' && i+1 < len(v) && v[i+1] == '{':
			lit.WriteByte('{')
			i++
		case ch == '}' && i+1 < len(v) && v[i+1] == '}':
			lit.WriteByte('}')
			i++
		case ch == '}':
			c.fail(e, "attribute %s: unmatched '}' in %q", attr, v)
			return out
		case ch == '{':
			end := exprEnd(v, i+1)
			if end < 0 {
				c.fail(e, "attribute %s: unterminated '{' in %q", attr, v)
				return out
			}
			if lit.Len() > 0 {
				out.parts = append(out.parts, avtPart{lit: lit.String()})
				lit.Reset()
			}
			x := c.compileExpr(e, "attribute "+attr, v[i+1:end])
			out.parts = append(out.parts, avtPart{x: x})
			i = end
		default:
			lit.WriteByte(ch)
		}
	}
	if lit.Len() > 0 || len(out.parts) == 0 {
		out.parts = append(out.parts, avtPart{lit: lit.String()})
	}
	return out
}

// exprEnd finds the '}' closing an expression of an attribute value
// template that starts at i, skipping string literals.
func exprEnd(v string, i int) int {
	for ; i < len(v); i++ {
		switch v[i] {
		case '\'', '"':
			j := strings.IndexByte(v[i+1:], v[i])
			if j < 0 {
				return -1
			}
			i += j + 1
		case '}':
			return i
		}
	}
	return -1
}

func (c *compiler) number(e *etree.Element) instr {
	n := &numberInstr{level: e.SelectAttrValue("level", "single"), value: c.xpath(e, "value", false), format: e.SelectAttrValue("format", "1")}
	switch n.level {
	case "single", "any":
	default:
		c.fail(e, "level %q is not supported (single and any are)", n.level)
	}
	if e.SelectAttr("count") != nil {
		n.count = c.pattern(e, "count")
	}
	if e.SelectAttr("from") != nil {
		n.from = c.pattern(e, "from")
	}
	return n
}
