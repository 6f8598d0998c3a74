package xslt

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xmlparse"
	"github.com/orchd/orchd/internal/xpath1"
	"github.com/orchd/orchd/internal/xpath2"
)

// maxDepth bounds template recursion.
const maxDepth = 2000

// Options tune one transformation.
type Options struct {
	// Params are the stylesheet's global parameters, by name ("local" or
	// "{ns}local").
	Params map[string]xpath2.Sequence
	// Logger receives xsl:message output (nil: discarded).
	Logger *slog.Logger
	// MaxSteps bounds the instructions one transformation runs (0:
	// DefaultMaxSteps), so a runaway stylesheet ends with an error.
	MaxSteps int
}

// DefaultMaxSteps is the instruction budget of a transformation.
const DefaultMaxSteps = 10_000_000

// ErrTerminated is wrapped by the error of an xsl:message terminate="yes".
var ErrTerminated = errors.New("xsl:message terminated the transformation")

// ErrNotElement is returned by TransformElement when the result tree is
// not a single element.
var ErrNotElement = errors.New("the result of the transformation is not a single element")

// run is one transformation's state.
type run struct {
	s       *Stylesheet
	opt     *Options
	globals map[string]xpath2.Sequence
	busy    map[string]bool
	root    xpath2.Node // the source's root, context of global variables
	steps   int         // instructions left
	gerr    error
	depth   int
}

// binding is a local variable in scope.
type binding struct {
	name string
	val  xpath2.Sequence
	next *binding
}

// ctx is the dynamic context of an instruction.
type ctx struct {
	node      xpath2.Node
	pos, size int
	vars      *binding
}

type instr interface {
	exec(x *run, c *ctx, out *etree.Element) error
}

// Transform applies the stylesheet to a copy of src (placed in a
// document of its own) and returns the result document.
func (s *Stylesheet) Transform(src *etree.Element, opt *Options) (*etree.Document, error) {
	if opt == nil {
		opt = &Options{}
	}
	in := xmlparse.NewDocument()
	cp := src.Copy()
	for p, u := range inScope(src) {
		if _, ok := localDecl(cp, p); !ok {
			if p == "" {
				cp.CreateAttr("xmlns", u)
			} else {
				cp.CreateAttr("xmlns:"+p, u)
			}
		}
	}
	in.SetRoot(cp)
	if len(s.strip) > 0 {
		s.stripSpace(cp)
	}
	x := &run{s: s, opt: opt, globals: map[string]xpath2.Sequence{}, busy: map[string]bool{}, steps: opt.MaxSteps}
	if x.steps <= 0 {
		x.steps = DefaultMaxSteps
	}
	out := xmlparse.NewDocument()
	root := xpath2.NewDocument(in)
	x.root = root
	c := &ctx{node: root, pos: 1, size: 1}
	for _, g := range s.globals {
		if _, err := x.global(g.name); err != nil {
			return nil, err
		}
	}
	if err := x.applyTemplates(c, []xpath2.Node{root}, "", nil, &out.Element); err != nil {
		return nil, err
	}
	return out, nil
}

// TransformElement is Transform for a result that must be one element
// (WS-BPEL's doXslTransform): it returns the result's document element.
func (s *Stylesheet) TransformElement(src *etree.Element, opt *Options) (*etree.Element, error) {
	doc, err := s.Transform(src, opt)
	if err != nil {
		return nil, err
	}
	var root *etree.Element
	for _, t := range doc.Child {
		switch v := t.(type) {
		case *etree.Element:
			if root != nil {
				return nil, fmt.Errorf("%w: it has more than one element at the top", ErrNotElement)
			}
			root = v
		case *etree.CharData:
			if strings.TrimSpace(v.Data) != "" {
				return nil, fmt.Errorf("%w: it has text at the top", ErrNotElement)
			}
		}
	}
	if root == nil {
		return nil, fmt.Errorf("%w: it has no element", ErrNotElement)
	}
	return root, nil
}

func inScope(e *etree.Element) map[string]string {
	m := map[string]string{}
	for p := e.Parent(); p != nil; p = p.Parent() {
		for _, a := range p.Attr {
			k := ""
			switch {
			case a.Space == "xmlns":
				k = a.Key
			case a.Space == "" && a.Key == "xmlns":
			default:
				continue
			}
			if _, ok := m[k]; !ok {
				m[k] = a.Value
			}
		}
	}
	return m
}

func localDecl(e *etree.Element, prefix string) (string, bool) {
	for _, a := range e.Attr {
		if (prefix == "" && a.Space == "" && a.Key == "xmlns") || (prefix != "" && a.Space == "xmlns" && a.Key == prefix) {
			return a.Value, true
		}
	}
	return "", false
}

func (s *Stylesheet) stripSpace(e *etree.Element) {
	n := xpath2.WrapElement(e)
	strip := false
	for _, t := range s.strip {
		if t.matches(n, false) {
			strip = true
		}
	}
	for _, t := range s.preserve {
		if t.matches(n, false) {
			strip = false
		}
	}
	kept := e.Child[:0]
	for _, t := range e.Child {
		if cd, ok := t.(*etree.CharData); ok && strip && strings.TrimSpace(cd.Data) == "" {
			continue
		}
		kept = append(kept, t)
	}
	for i := len(kept); i < len(e.Child); i++ {
		e.Child[i] = nil
	}
	e.Child = kept
	for i, t := range e.Child {
		if k, ok := t.(*etree.Element); ok {
			_ = i
			s.stripSpace(k)
		}
	}
}

// global returns a global variable's or parameter's value, evaluating it
// on first use.
func (x *run) global(name string) (xpath2.Sequence, error) {
	if v, ok := x.globals[name]; ok {
		return v, nil
	}
	g := x.s.globalIdx[name]
	if g == nil {
		return nil, fmt.Errorf("undefined variable $%s", name)
	}
	if g.param {
		if v, ok := x.opt.Params[name]; ok {
			x.globals[name] = v
			return v, nil
		}
	}
	if x.busy[name] {
		return nil, fmt.Errorf("%s: global variable $%s is defined in terms of itself", g.pos, name)
	}
	x.busy[name] = true
	v, err := g.value(x, &ctx{node: x.root, pos: 1, size: 1})
	delete(x.busy, name)
	if err != nil {
		return nil, err
	}
	x.globals[name] = v
	return v, nil
}

// eval evaluates a compiled expression with node as context.
func (x *run) eval(e *xpath2.Expr, node xpath2.Node, pos, size int, vars *binding) (xpath2.Sequence, error) {
	if e == nil {
		return nil, nil
	}
	dc := &xpath2.DynamicContext{Position: pos, Size: size}
	if node != nil {
		dc.Item = node
	}
	dc.Variables = func(ns, local string) (xpath2.Sequence, bool) {
		if ns == internalNS {
			switch local {
			case "current":
				if node == nil {
					return nil, true
				}
				return xpath2.Sequence{node}, true
			case "keys":
				return nil, true
			}
		}
		name := local
		if ns != "" {
			name = "{" + ns + "}" + local
		}
		for b := vars; b != nil; b = b.next {
			if b.name == name {
				return b.val, true
			}
		}
		v, err := x.global(name)
		if err != nil {
			if x.gerr == nil {
				x.gerr = err
			}
			return nil, false
		}
		return v, true
	}
	seq, err := e.Evaluate(dc)
	if x.gerr != nil {
		err, x.gerr = x.gerr, nil
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%q: %w", e.String(), err)
	}
	return seq, nil
}

func (x *run) evalC(e *xpath2.Expr, c *ctx) (xpath2.Sequence, error) {
	return x.eval(e, c.node, c.pos, c.size, c.vars)
}

// execBody runs a sequence constructor; a variable binds for the
// instructions after it.
func (x *run) execBody(body []instr, c *ctx, out *etree.Element) error {
	saved := c.vars
	defer func() { c.vars = saved }()
	for _, in := range body {
		if x.steps--; x.steps < 0 {
			return errors.New("the transformation ran more instructions than allowed (runaway stylesheet?)")
		}
		if v, ok := in.(*variable); ok {
			val, err := v.value(x, c)
			if err != nil {
				return err
			}
			c.vars = &binding{name: v.name, val: val, next: c.vars}
			continue
		}
		if err := in.exec(x, c, out); err != nil {
			return err
		}
	}
	return nil
}

// variable is xsl:variable, xsl:param or xsl:with-param.
type variable struct {
	name    string
	sel     *xpath2.Expr
	body    []instr
	hasBody bool
	param   bool
	pos     xmldoc.Pos
}

func (v *variable) exec(*run, *ctx, *etree.Element) error { return nil }

// value computes the variable's value: select, a result tree fragment
// from the content, or the empty string.
func (v *variable) value(x *run, c *ctx) (xpath2.Sequence, error) {
	if v.sel != nil {
		return x.evalC(v.sel, c)
	}
	if !v.hasBody {
		return xpath2.Sequence{xpath2.Str("")}, nil
	}
	doc := xmlparse.NewDocument()
	if err := x.execBody(v.body, c, &doc.Element); err != nil {
		return nil, err
	}
	return xpath2.Sequence{xpath2.NewDocument(doc)}, nil
}

func nodesOf(seq xpath2.Sequence, what string) ([]xpath2.Node, error) {
	out := make([]xpath2.Node, 0, len(seq))
	for _, it := range seq {
		n, ok := it.(xpath2.Node)
		if !ok {
			return nil, fmt.Errorf("%s: %v is not a node", what, it)
		}
		out = append(out, n)
	}
	return out, nil
}

type applyTemplates struct {
	sel    *xpath2.Expr
	mode   string
	sorts  []*sortKey
	params []*variable
}

func (a *applyTemplates) exec(x *run, c *ctx, out *etree.Element) error {
	var nodes []xpath2.Node
	if a.sel == nil {
		nodes = c.node.Children()
	} else {
		seq, err := x.evalC(a.sel, c)
		if err != nil {
			return err
		}
		if nodes, err = nodesOf(seq, "xsl:apply-templates select"); err != nil {
			return err
		}
	}
	nodes, err := x.sortNodes(nodes, a.sorts, c)
	if err != nil {
		return err
	}
	params, err := x.withParams(a.params, c)
	if err != nil {
		return err
	}
	return x.applyTemplates(c, nodes, a.mode, params, out)
}

func (x *run) withParams(ps []*variable, c *ctx) (*binding, error) {
	var b *binding
	for _, p := range ps {
		v, err := p.value(x, c)
		if err != nil {
			return nil, err
		}
		b = &binding{name: p.name, val: v, next: b}
	}
	return b, nil
}

// applyTemplates processes each node with its best template rule.
func (x *run) applyTemplates(c *ctx, nodes []xpath2.Node, mode string, params *binding, out *etree.Element) error {
	x.depth++
	defer func() { x.depth-- }()
	if x.depth > maxDepth {
		return fmt.Errorf("templates nested deeper than %d (infinite recursion?)", maxDepth)
	}
	for i, n := range nodes {
		if x.steps--; x.steps < 0 {
			return errors.New("the transformation ran more instructions than allowed (runaway stylesheet?)")
		}
		r, err := x.best(n, mode)
		if err != nil {
			return err
		}
		nc := &ctx{node: n, pos: i + 1, size: len(nodes)}
		if r == nil {
			if err := x.builtin(nc, mode, out); err != nil {
				return err
			}
			continue
		}
		if err := x.invoke(r.t, nc, params, out); err != nil {
			return err
		}
	}
	return nil
}

// invoke runs a template with the given parameters in context nc.
func (x *run) invoke(t *template, nc *ctx, params *binding, out *etree.Element) error {
	for _, p := range t.params {
		var val xpath2.Sequence
		found := false
		for b := params; b != nil; b = b.next {
			if b.name == p.name {
				val, found = b.val, true
				break
			}
		}
		if !found {
			var err error
			if val, err = p.value(x, nc); err != nil {
				return err
			}
		}
		nc.vars = &binding{name: p.name, val: val, next: nc.vars}
	}
	return x.execBody(t.body, nc, out)
}

func (x *run) best(n xpath2.Node, mode string) (*rule, error) {
	var best *rule
	for _, r := range x.s.rules {
		if r.t.mode != mode {
			continue
		}
		if best != nil && (r.priority < best.priority) {
			continue
		}
		ok, err := r.p.match(x, n)
		if err != nil {
			return nil, err
		}
		if ok && (best == nil || r.priority > best.priority || r.order > best.order) {
			best = r
		}
	}
	return best, nil
}

// builtin is XSLT's built-in template rules.
func (x *run) builtin(c *ctx, mode string, out *etree.Element) error {
	switch c.node.Kind() {
	case xpath2.DocumentNode, xpath2.ElementNode:
		return x.applyTemplates(c, c.node.Children(), mode, nil, out)
	case xpath2.TextNode, xpath2.AttributeNode:
		addText(out, c.node.StringValue())
	}
	return nil
}

type callTemplate struct {
	name   string
	params []*variable
	pos    xmldoc.Pos
}

func (ct *callTemplate) exec(x *run, c *ctx, out *etree.Element) error {
	t := x.s.named[ct.name]
	if t == nil {
		return fmt.Errorf("%s: xsl:call-template: no template named %q", ct.pos, ct.name)
	}
	params, err := x.withParams(ct.params, c)
	if err != nil {
		return err
	}
	x.depth++
	defer func() { x.depth-- }()
	if x.depth > maxDepth {
		return fmt.Errorf("templates nested deeper than %d (infinite recursion?)", maxDepth)
	}
	return x.invoke(t, &ctx{node: c.node, pos: c.pos, size: c.size}, params, out)
}

type textInstr struct{ s string }

func (t *textInstr) exec(_ *run, _ *ctx, out *etree.Element) error {
	addText(out, t.s)
	return nil
}

type valueOf struct{ sel *xpath2.Expr }

func (v *valueOf) exec(x *run, c *ctx, out *etree.Element) error {
	seq, err := x.evalC(v.sel, c)
	if err != nil {
		return err
	}
	addText(out, stringOf(seq))
	return nil
}

// stringOf is XPath 1.0's string(): the string value of the first item.
func stringOf(seq xpath2.Sequence) string {
	if len(seq) == 0 {
		return ""
	}
	return itemString(seq[0])
}

func itemString(it xpath2.Item) string {
	switch v := it.(type) {
	case xpath2.Node:
		return v.StringValue()
	case xpath2.Double:
		return xpath1.FormatNumber(v.V)
	case xpath2.Atomic:
		return v.String()
	}
	return fmt.Sprint(it)
}

type copyOf struct{ sel *xpath2.Expr }

func (co *copyOf) exec(x *run, c *ctx, out *etree.Element) error {
	seq, err := x.evalC(co.sel, c)
	if err != nil {
		return err
	}
	for _, it := range seq {
		n, ok := it.(xpath2.Node)
		if !ok {
			addText(out, itemString(it))
			continue
		}
		copyNode(out, n, true)
	}
	return nil
}

type copyInstr struct{ body []instr }

func (ci *copyInstr) exec(x *run, c *ctx, out *etree.Element) error {
	switch c.node.Kind() {
	case xpath2.DocumentNode:
		return x.execBody(ci.body, c, out)
	case xpath2.ElementNode:
		el := copyNode(out, c.node, false)
		return x.execBody(ci.body, c, el)
	}
	copyNode(out, c.node, false)
	return nil
}

type forEach struct {
	sel   *xpath2.Expr
	sorts []*sortKey
	body  []instr
}

func (f *forEach) exec(x *run, c *ctx, out *etree.Element) error {
	seq, err := x.evalC(f.sel, c)
	if err != nil {
		return err
	}
	nodes, err := nodesOf(seq, "xsl:for-each select")
	if err != nil {
		return err
	}
	if nodes, err = x.sortNodes(nodes, f.sorts, c); err != nil {
		return err
	}
	for i, n := range nodes {
		if err := x.execBody(f.body, &ctx{node: n, pos: i + 1, size: len(nodes), vars: c.vars}, out); err != nil {
			return err
		}
	}
	return nil
}

type sortKey struct {
	sel             *xpath2.Expr
	order, dataType *avt
}

// sortNodes sorts nodes by the keys (stable; none: unchanged).
func (x *run) sortNodes(nodes []xpath2.Node, keys []*sortKey, c *ctx) ([]xpath2.Node, error) {
	if len(keys) == 0 || len(nodes) < 2 {
		return nodes, nil
	}
	type row struct {
		n    xpath2.Node
		strs []string
		nums []float64
	}
	desc := make([]bool, len(keys))
	num := make([]bool, len(keys))
	for i, k := range keys {
		o, err := k.order.eval(x, c, "ascending")
		if err != nil {
			return nil, err
		}
		d, err := k.dataType.eval(x, c, "text")
		if err != nil {
			return nil, err
		}
		desc[i], num[i] = o == "descending", d == "number"
	}
	rows := make([]row, len(nodes))
	for i, n := range nodes {
		rows[i] = row{n: n, strs: make([]string, len(keys)), nums: make([]float64, len(keys))}
		for j, k := range keys {
			s := n.StringValue()
			if k.sel != nil {
				seq, err := x.eval(k.sel, n, i+1, len(nodes), c.vars)
				if err != nil {
					return nil, err
				}
				s = stringOf(seq)
			}
			rows[i].strs[j] = s
			if num[j] {
				f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
				if err != nil {
					f = math.NaN()
				}
				rows[i].nums[j] = f
			}
		}
	}
	sort.SliceStable(rows, func(a, b int) bool {
		for j := range keys {
			var cmp int
			if num[j] {
				fa, fb := rows[a].nums[j], rows[b].nums[j]
				switch {
				case math.IsNaN(fa) && math.IsNaN(fb):
				case math.IsNaN(fa):
					cmp = -1
				case math.IsNaN(fb):
					cmp = 1
				case fa < fb:
					cmp = -1
				case fa > fb:
					cmp = 1
				}
			} else {
				cmp = strings.Compare(rows[a].strs[j], rows[b].strs[j])
			}
			if desc[j] {
				cmp = -cmp
			}
			if cmp != 0 {
				return cmp < 0
			}
		}
		return false
	})
	out := make([]xpath2.Node, len(rows))
	for i, r := range rows {
		out[i] = r.n
	}
	return out, nil
}

type ifInstr struct {
	test *xpath2.Expr
	body []instr
}

func (x *run) test(e *xpath2.Expr, c *ctx) (bool, error) {
	seq, err := x.evalC(e, c)
	if err != nil {
		return false, err
	}
	b, err := xpath2.EffectiveBooleanValue(seq)
	if err != nil {
		return false, fmt.Errorf("%q: %w", e.String(), err)
	}
	return b, nil
}

func (i *ifInstr) exec(x *run, c *ctx, out *etree.Element) error {
	ok, err := x.test(i.test, c)
	if err != nil || !ok {
		return err
	}
	return x.execBody(i.body, c, out)
}

type when struct {
	test *xpath2.Expr
	body []instr
}

type choose struct {
	whens     []when
	otherwise []instr
}

func (ch *choose) exec(x *run, c *ctx, out *etree.Element) error {
	for _, w := range ch.whens {
		ok, err := x.test(w.test, c)
		if err != nil {
			return err
		}
		if ok {
			return x.execBody(w.body, c, out)
		}
	}
	return x.execBody(ch.otherwise, c, out)
}

// avt is an attribute value template.
type avt struct{ parts []avtPart }

type avtPart struct {
	lit string
	x   *xpath2.Expr
}

// eval computes the template's string; def when a is nil (absent).
func (a *avt) eval(x *run, c *ctx, def string) (string, error) {
	if a == nil {
		return def, nil
	}
	if len(a.parts) == 1 && a.parts[0].x == nil {
		return a.parts[0].lit, nil
	}
	var b strings.Builder
	for _, p := range a.parts {
		if p.x == nil {
			b.WriteString(p.lit)
			continue
		}
		seq, err := x.evalC(p.x, c)
		if err != nil {
			return "", err
		}
		b.WriteString(stringOf(seq))
	}
	return b.String(), nil
}

type litAttr struct {
	prefix, local, uri string
	v                  *avt
}

// literal is a literal result element.
type literal struct {
	prefix, local, uri string
	decls              [][2]string
	attrs              []litAttr
	body               []instr
}

func (l *literal) exec(x *run, c *ctx, out *etree.Element) error {
	el := addElement(out, l.prefix, l.local, l.uri)
	for _, d := range l.decls {
		declare(el, d[0], d[1])
	}
	for _, a := range l.attrs {
		v, err := a.v.eval(x, c, "")
		if err != nil {
			return err
		}
		setAttr(el, a.prefix, a.local, a.uri, v)
	}
	return x.execBody(l.body, c, el)
}

// computedName evaluates the name (and namespace) of xsl:element or
// xsl:attribute, resolving a prefix in the instruction's scope.
func computedName(x *run, c *ctx, name, ns *avt, scope *etree.Element, attr bool) (prefix, local, uri string, err error) {
	q, err := name.eval(x, c, "")
	if err != nil {
		return "", "", "", err
	}
	q = strings.TrimSpace(q)
	prefix, local, ok := strings.Cut(q, ":")
	if !ok {
		prefix, local = "", q
	}
	if local == "" || strings.ContainsAny(local, " <>&\"'/:") {
		return "", "", "", fmt.Errorf("%q is not a valid name", q)
	}
	if ns != nil {
		uri, err = ns.eval(x, c, "")
		if err != nil {
			return "", "", "", err
		}
		if uri != "" && prefix == "" && attr {
			prefix = "ns0"
		}
		return prefix, local, uri, nil
	}
	if prefix == "" && attr {
		return "", local, "", nil
	}
	u, found := xmldoc.Namespaces(scope)[prefix]
	if !found && prefix != "" {
		return "", "", "", fmt.Errorf("undeclared namespace prefix %q in %q", prefix, q)
	}
	return prefix, local, u, nil
}

type elementInstr struct {
	name, ns *avt
	scope    *etree.Element
	body     []instr
}

func (e *elementInstr) exec(x *run, c *ctx, out *etree.Element) error {
	p, l, u, err := computedName(x, c, e.name, e.ns, e.scope, false)
	if err != nil {
		return fmt.Errorf("xsl:element: %w", err)
	}
	return x.execBody(e.body, c, addElement(out, p, l, u))
}

type attributeInstr struct {
	name, ns *avt
	scope    *etree.Element
	body     []instr
}

// content runs body into a scratch element and returns its text.
func (x *run) content(body []instr, c *ctx) (string, error) {
	tmp := etree.NewElement("t")
	if err := x.execBody(body, c, tmp); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, t := range tmp.Child {
		if cd, ok := t.(*etree.CharData); ok {
			b.WriteString(cd.Data)
		} else if e, ok := t.(*etree.Element); ok {
			b.WriteString(xpath2.WrapElement(e).StringValue())
		}
	}
	return b.String(), nil
}

func (a *attributeInstr) exec(x *run, c *ctx, out *etree.Element) error {
	p, l, u, err := computedName(x, c, a.name, a.ns, a.scope, true)
	if err != nil {
		return fmt.Errorf("xsl:attribute: %w", err)
	}
	if p == "xmlns" || (p == "" && l == "xmlns") {
		return fmt.Errorf("xsl:attribute: %q is not an attribute name", l)
	}
	v, err := x.content(a.body, c)
	if err != nil {
		return err
	}
	setAttr(out, p, l, u, v)
	return nil
}

type commentInstr struct{ body []instr }

func (ci *commentInstr) exec(x *run, c *ctx, out *etree.Element) error {
	v, err := x.content(ci.body, c)
	if err != nil {
		return err
	}
	out.CreateComment(strings.ReplaceAll(v, "--", "- -"))
	return nil
}

type piInstr struct {
	name *avt
	body []instr
}

func (pi *piInstr) exec(x *run, c *ctx, out *etree.Element) error {
	n, err := pi.name.eval(x, c, "")
	if err != nil {
		return err
	}
	if n == "" || strings.EqualFold(n, "xml") || strings.ContainsAny(n, " :") {
		return fmt.Errorf("xsl:processing-instruction: %q is not a valid target", n)
	}
	v, err := x.content(pi.body, c)
	if err != nil {
		return err
	}
	out.CreateProcInst(n, strings.ReplaceAll(v, "?>", "? >"))
	return nil
}

type messageInstr struct {
	terminate bool
	body      []instr
	pos       xmldoc.Pos
}

func (m *messageInstr) exec(x *run, c *ctx, _ *etree.Element) error {
	v, err := x.content(m.body, c)
	if err != nil {
		return err
	}
	if m.terminate {
		return fmt.Errorf("%s: %w: %s", m.pos, ErrTerminated, v)
	}
	if x.opt.Logger != nil {
		x.opt.Logger.Info("xsl:message", "at", m.pos.String(), "message", v)
	}
	return nil
}
