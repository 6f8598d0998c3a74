package xpath2

import (
	"sort"
	"strings"

	"github.com/beevik/etree"
)

// AST nodes and evaluation of the XQuery 1.0 additions (xquery.go).
// Constructors build etree trees: a constructed element is a parentless
// etree element, a document an etree document, a text, comment or
// processing instruction a parentless etree token, an attribute one of a
// parentless holder element (orphanAttr).

type (
	flworExpr struct {
		clauses []flworClause
		where   expr
		order   []orderSpec
		ret     expr
	}
	flworClause struct {
		let     bool
		slot    int
		posSlot int // -1: no "at" variable
		typ     *seqType
		in      expr
	}
	orderSpec struct {
		key           expr
		desc          bool
		emptyGreatest bool
	}
	typeswitchExpr struct {
		operand expr
		cases   []tsCase
		def     tsCase
	}
	tsCase struct {
		slot int // -1: no variable
		st   seqType
		ret  expr
	}
	// consName is a constructor's name: fixed (prefix, uri, local) or
	// computed by e, whose lexical QName resolves against ns and defNS.
	consName struct {
		prefix, uri, local string
		e                  expr
		ns                 map[string]string
		defNS              string
	}
	// consPart is literal text or an expression of constructor content.
	consPart struct {
		text   string
		isText bool
		e      expr
	}
	elemCons struct {
		name    consName
		decls   [][2]string // namespace declarations: prefix, URI
		attrs   []*attrCons
		content []consPart
	}
	attrCons struct {
		name  consName
		parts []consPart
	}
	docCons     struct{ e expr }
	textCons    struct{ e expr }
	commentCons struct {
		e     expr
		lit   string
		isLit bool
	}
	piCons struct {
		name  consName
		e     expr
		lit   string
		isLit bool
	}
)

func (e *flworExpr) eval(c *evalCtx) (Sequence, error) {
	var out Sequence
	if len(e.order) == 0 {
		err := e.tuples(c, 0, func() error {
			r, err := e.ret.eval(c)
			if err == nil {
				err = c.items(len(out) + len(r))
			}
			out = append(out, r...)
			return err
		})
		return out, err
	}
	type tuple struct {
		locals []Sequence
		keys   []Atomic
	}
	var ts []tuple
	err := e.tuples(c, 0, func() error {
		t := tuple{locals: append([]Sequence(nil), c.locals...), keys: make([]Atomic, len(e.order))}
		for i, o := range e.order {
			k, err := evalAtomOpt(c, o.key)
			if err != nil {
				return err
			}
			if k != nil && k.Type() == TUntypedAtomic {
				k = Str(k.String())
			}
			t.keys[i] = k
		}
		if err := c.items(len(ts) + 1); err != nil {
			return err
		}
		ts = append(ts, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	tz := c.dyn.dc.ImplicitTimezone
	var cmpErr error
	sort.SliceStable(ts, func(i, j int) bool {
		for k, o := range e.order {
			r, err := orderCompare(ts[i].keys[k], ts[j].keys[k], o.emptyGreatest, tz)
			if err != nil && cmpErr == nil {
				cmpErr = err
			}
			if r != 0 {
				if o.desc {
					return r > 0
				}
				return r < 0
			}
		}
		return false
	})
	if cmpErr != nil {
		return nil, cmpErr
	}
	for _, t := range ts {
		copy(c.locals, t.locals)
		r, err := e.ret.eval(c)
		if err != nil {
			return nil, err
		}
		if err := c.items(len(out) + len(r)); err != nil {
			return nil, err
		}
		out = append(out, r...)
	}
	return out, nil
}

// orderCompare orders two order-by keys; the empty sequence and NaN sort
// least, or greatest with emptyGreatest (NaN just above or below the
// empty sequence).
func orderCompare(a, b Atomic, emptyGreatest bool, tz int) (int, error) {
	rank := func(x Atomic) int64 {
		switch {
		case x == nil && emptyGreatest:
			return 2
		case x == nil:
			return 0
		case isNaN(x):
			return 1
		case emptyGreatest:
			return 0
		}
		return 2
	}
	ra, rb := rank(a), rank(b)
	if ra != rb || a == nil || isNaN(a) {
		return cmpInt64(ra, rb), nil
	}
	r, _, err := compareAtomic(a, b, tz, false)
	return r, err
}

// tuples binds the clauses from i on and calls f for each tuple that
// passes the where clause.
func (e *flworExpr) tuples(c *evalCtx, i int, f func() error) error {
	if i == len(e.clauses) {
		if e.where != nil {
			s, err := e.where.eval(c)
			if err != nil {
				return err
			}
			b, err := ebv(s)
			if err != nil || !b {
				return err
			}
		}
		return f()
	}
	cl := &e.clauses[i]
	s, err := cl.in.eval(c)
	if err != nil {
		return err
	}
	if cl.let {
		if cl.typ != nil && !matchesSeqType(s, cl.typ) {
			return errf("XPTY0004", "let: the value does not match the declared type")
		}
		c.locals[cl.slot] = s
		return e.tuples(c, i+1, f)
	}
	for k, it := range s {
		v := Sequence{it}
		if cl.typ != nil && !matchesSeqType(v, cl.typ) {
			return errf("XPTY0004", "for: item %d does not match the declared type", k+1)
		}
		c.locals[cl.slot] = v
		if cl.posSlot >= 0 {
			c.locals[cl.posSlot] = Sequence{Int(int64(k + 1))}
		}
		if err := e.tuples(c, i+1, f); err != nil {
			return err
		}
	}
	return nil
}

func (e *typeswitchExpr) eval(c *evalCtx) (Sequence, error) {
	s, err := e.operand.eval(c)
	if err != nil {
		return nil, err
	}
	branch := &e.def
	for i := range e.cases {
		if matchesSeqType(s, &e.cases[i].st) {
			branch = &e.cases[i]
			break
		}
	}
	if branch.slot >= 0 {
		c.locals[branch.slot] = s
	}
	return branch.ret.eval(c)
}

// resolve returns the constructor's expanded name.
func (n *consName) resolve(c *evalCtx) (prefix, uri, local string, err error) {
	if n.e == nil {
		return n.prefix, n.uri, n.local, nil
	}
	s, err := n.e.eval(c)
	if err != nil {
		return "", "", "", err
	}
	if len(s) != 1 {
		return "", "", "", errf("XPTY0004", "a constructor name must be one atomic value, not %d items", len(s))
	}
	switch a := atomizeItem(s[0]).(type) {
	case QName:
		return a.Prefix, a.NS, a.Local, nil
	case String:
		if a.T != TString && a.T != TUntypedAtomic {
			break
		}
		name := strings.TrimSpace(a.V)
		if !isQName(name) {
			return "", "", "", errf("XQDY0074", "%q is not a lexical QName", name)
		}
		prefix, local, ok := strings.Cut(name, ":")
		if !ok {
			return "", n.defNS, name, nil
		}
		u, found := n.ns[prefix]
		if !found {
			return "", "", "", errf("XQDY0074", "namespace prefix %q is not declared", prefix)
		}
		return prefix, u, local, nil
	}
	return "", "", "", errf("XPTY0004", "a constructor name must be a QName or a string")
}

func isQName(s string) bool {
	p, l, ok := strings.Cut(s, ":")
	if ok {
		return isNCName(p) && isNCName(l)
	}
	return isNCName(s)
}

// joinAtomized is the string value of s, atomized, its items separated
// by spaces (the content of an attribute, text, comment or PI).
func joinAtomized(s Sequence) string {
	var b strings.Builder
	for i, it := range s {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(atomizeItem(it).String())
	}
	return b.String()
}

func (e *elemCons) eval(c *evalCtx) (Sequence, error) {
	prefix, uri, local, err := e.name.resolve(c)
	if err != nil {
		return nil, err
	}
	if uri == "http://www.w3.org/2000/xmlns/" || prefix == "xmlns" || (prefix == "xml") != (uri == "http://www.w3.org/XML/1998/namespace") && prefix != "" {
		return nil, errf("XQDY0096", "element name {%s}%s is not allowed", uri, local)
	}
	el := etree.NewElement(local)
	el.Space = prefix
	for _, d := range e.decls {
		el.Attr = append(el.Attr, nsDecl(d[0], d[1]))
	}
	declareNS(el, prefix, uri)
	b := contentBuilder{el: el}
	for _, a := range e.attrs {
		ap, au, al, v, err := a.value(c)
		if err != nil {
			return nil, err
		}
		if err := b.addAttr(ap, au, al, v); err != nil {
			return nil, err
		}
	}
	for _, part := range e.content {
		if part.isText {
			b.addText(part.text)
			continue
		}
		s, err := part.e.eval(c)
		if err != nil {
			return nil, err
		}
		if err := b.addSeq(s); err != nil {
			return nil, err
		}
	}
	return Sequence{etreeNode{el, -1}}, nil
}

func nsDecl(prefix, uri string) etree.Attr {
	if prefix == "" {
		return etree.Attr{Key: "xmlns", Value: uri}
	}
	return etree.Attr{Space: "xmlns", Key: prefix, Value: uri}
}

// declareNS makes prefix bind uri at el, declaring it there when el's
// in-scope namespaces do not; it reports false when el itself binds
// prefix to another URI.
func declareNS(el *etree.Element, prefix, uri string) bool {
	if prefix == "xml" {
		return true
	}
	got, ok := lookupNS(el, prefix)
	if got == uri && (ok || uri == "") {
		return true
	}
	for _, a := range el.Attr {
		if (prefix == "" && a.Space == "" && a.Key == "xmlns") || (prefix != "" && a.Space == "xmlns" && a.Key == prefix) {
			return false
		}
	}
	el.Attr = append(el.Attr, nsDecl(prefix, uri))
	return true
}

// value is the attribute's name and string value.
func (a *attrCons) value(c *evalCtx) (prefix, uri, local, v string, err error) {
	if prefix, uri, local, err = a.name.resolve(c); err != nil {
		return
	}
	if prefix == "xmlns" || (prefix == "" && local == "xmlns") || uri == "http://www.w3.org/2000/xmlns/" {
		err = errf("XQDY0044", "attribute name %s is a namespace declaration", local)
		return
	}
	var b strings.Builder
	for _, part := range a.parts {
		if part.isText {
			b.WriteString(part.text)
			continue
		}
		s, e := part.e.eval(c)
		if e != nil {
			err = e
			return
		}
		b.WriteString(joinAtomized(s))
	}
	return prefix, uri, local, b.String(), nil
}

func (a *attrCons) eval(c *evalCtx) (Sequence, error) {
	prefix, uri, local, v, err := a.value(c)
	if err != nil {
		return nil, err
	}
	holder := etree.NewElement("")
	b := contentBuilder{el: holder}
	if err := b.addAttr(prefix, uri, local, v); err != nil {
		return nil, err
	}
	return Sequence{orphanAttr{etreeNode{holder, len(holder.Attr) - 1}}}, nil
}

func (e *docCons) eval(c *evalCtx) (Sequence, error) {
	s, err := e.e.eval(c)
	if err != nil {
		return nil, err
	}
	doc := etree.NewDocument()
	b := contentBuilder{el: &doc.Element, doc: true}
	if err := b.addSeq(s); err != nil {
		return nil, err
	}
	return Sequence{NewDocument(doc)}, nil
}

func (e *textCons) eval(c *evalCtx) (Sequence, error) {
	s, err := e.e.eval(c)
	if err != nil || len(s) == 0 {
		return nil, err
	}
	return Sequence{etreeNode{etree.NewText(joinAtomized(s)), -1}}, nil
}

func (e *commentCons) eval(c *evalCtx) (Sequence, error) {
	text := e.lit
	if !e.isLit {
		s, err := e.e.eval(c)
		if err != nil {
			return nil, err
		}
		text = joinAtomized(s)
		if strings.Contains(text, "--") || strings.HasSuffix(text, "-") {
			return nil, errf("XQDY0072", "comment content %q holds '--' or ends with '-'", text)
		}
	}
	return Sequence{etreeNode{etree.NewComment(text), -1}}, nil
}

func (e *piCons) eval(c *evalCtx) (Sequence, error) {
	target, text := e.name.local, e.lit
	if e.name.e != nil {
		s, err := e.name.e.eval(c)
		if err != nil {
			return nil, err
		}
		a, err := atomizeOpt(s)
		if err != nil || a == nil {
			return nil, errf("XPTY0004", "a processing-instruction target must be one atomic value")
		}
		target = strings.TrimSpace(a.String())
		if !isNCName(target) {
			return nil, errf("XQDY0041", "%q is not an NCName", target)
		}
	}
	if strings.EqualFold(target, "xml") {
		return nil, errf("XQDY0064", "processing-instruction target %q", target)
	}
	if !e.isLit {
		s, err := e.e.eval(c)
		if err != nil {
			return nil, err
		}
		text = strings.TrimLeft(joinAtomized(s), " \t\r\n")
		if strings.Contains(text, "?>") {
			return nil, errf("XQDY0026", "processing-instruction content holds '?>'")
		}
	}
	return Sequence{etreeNode{etree.NewProcInst(target, text), -1}}, nil
}

// contentBuilder adds content to a constructed element or document
// (XQuery 1.0 section 3.7.1.3): atomic values adjacent in one sequence
// become one text node, separated by spaces; nodes are copied; adjacent
// text merges; attributes must come before other content.
type contentBuilder struct {
	el  *etree.Element
	doc bool
}

func (b *contentBuilder) addText(s string) {
	if s == "" {
		return
	}
	if n := len(b.el.Child); n > 0 {
		if cd, ok := b.el.Child[n-1].(*etree.CharData); ok {
			cd.SetData(cd.Data + s)
			return
		}
	}
	b.el.AddChild(etree.NewText(s))
}

func (b *contentBuilder) addAttr(prefix, uri, local, v string) error {
	if b.doc {
		return errf("XPTY0004", "an attribute node in document content")
	}
	for _, c := range b.el.Child {
		switch c.(type) {
		case *etree.Element, *etree.CharData, *etree.Comment, *etree.ProcInst:
			return errf("XQTY0024", "attribute %s after other content of element %s", local, b.el.Tag)
		}
	}
	for _, a := range b.el.Attr {
		if a.Space == "xmlns" || (a.Space == "" && a.Key == "xmlns") || a.Key != local {
			continue
		}
		if a.Space == "" && uri == "" || a.Space != "" && lookupNSOrXML(b.el, a.Space) == uri && uri != "" {
			return errf("XQDY0025", "attribute %s repeated", local)
		}
	}
	if uri == "" {
		prefix = ""
	} else {
		if prefix == "" {
			prefix = "ns0"
		}
		for i := 1; !declareNS(b.el, prefix, uri); i++ {
			prefix = "ns" + itoa(i)
		}
	}
	b.el.Attr = append(b.el.Attr, etree.Attr{Space: prefix, Key: local, Value: v})
	return nil
}

func lookupNSOrXML(el *etree.Element, prefix string) string {
	u, _ := lookupNS(el, prefix)
	return u
}

func (b *contentBuilder) addSeq(s Sequence) error {
	prevAtomic := false
	for _, it := range s {
		n, ok := it.(Node)
		if !ok {
			text := atomizeItem(it).String()
			if prevAtomic {
				text = " " + text
			}
			b.addText(text)
			prevAtomic = true
			continue
		}
		prevAtomic = false
		if err := b.addNode(n); err != nil {
			return err
		}
	}
	return nil
}

func (b *contentBuilder) addNode(n Node) error {
	switch n.Kind() {
	case DocumentNode:
		for _, ch := range n.Children() {
			if err := b.addNode(ch); err != nil {
				return err
			}
		}
	case AttributeNode:
		return b.addAttr(n.Prefix(), n.NamespaceURI(), n.LocalName(), n.StringValue())
	case TextNode:
		b.addText(n.StringValue())
	case CommentNode:
		b.el.AddChild(etree.NewComment(n.StringValue()))
	case PINode:
		b.el.AddChild(etree.NewProcInst(n.LocalName(), n.StringValue()))
	case ElementNode:
		c := etree.NewElement(n.LocalName())
		c.Space = n.Prefix()
		b.el.AddChild(c)
		fillElement(c, n)
	}
	return nil
}

// fillElement deep-copies element n into el, which is already in its
// place: n's in-scope namespaces are declared where el's differ
// (copy-namespaces preserve, inherit).
func fillElement(el *etree.Element, n Node) {
	for _, p := range n.InScopePrefixes() {
		if p == "xml" {
			continue
		}
		u, _ := n.LookupNamespace(p)
		declareNS(el, p, u)
	}
	declareNS(el, el.Space, n.NamespaceURI())
	for _, a := range n.Attributes() {
		p, u := a.Prefix(), a.NamespaceURI()
		if u != "" {
			declareNS(el, p, u)
		}
		el.Attr = append(el.Attr, etree.Attr{Space: p, Key: a.LocalName(), Value: a.StringValue()})
	}
	for _, ch := range n.Children() {
		switch ch.Kind() {
		case ElementNode:
			c := etree.NewElement(ch.LocalName())
			c.Space = ch.Prefix()
			el.AddChild(c)
			fillElement(c, ch)
		case TextNode:
			el.AddChild(etree.NewText(ch.StringValue()))
		case CommentNode:
			el.AddChild(etree.NewComment(ch.StringValue()))
		case PINode:
			el.AddChild(etree.NewProcInst(ch.LocalName(), ch.StringValue()))
		}
	}
}

// orphanAttr is a constructed attribute node: it has no parent.
type orphanAttr struct{ etreeNode }

// Parent implements Node: a constructed attribute has none.
func (orphanAttr) Parent() Node { return nil }

// Same implements Node.
func (n orphanAttr) Same(o Node) bool {
	m, ok := o.(orphanAttr)
	return ok && m == n
}

// EtreeToken returns the etree token behind a node built by the
// evaluator (a constructed node, or one of NewDocument or WrapElement)
// and, for an attribute, its index in the element's Attr (else -1); ok is
// false for other Node implementations. A constructed attribute belongs
// to a holder element made for it alone.
func EtreeToken(n Node) (tok etree.Token, attr int, ok bool) {
	switch t := n.(type) {
	case etreeNode:
		return t.tok, t.attr, true
	case orphanAttr:
		return t.tok, t.attr, true
	}
	return nil, -1, false
}
