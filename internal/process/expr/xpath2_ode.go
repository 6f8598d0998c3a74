package expr

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xmlparse"
	"github.com/orchd/orchd/internal/xpath1"
	"github.com/orchd/orchd/internal/xpath2"
)

// The function library of a process's XPath 2.0 expressions: the fn:
// functions, bpel:getLinkStatus, and Apache ODE's extension functions
// (namespace nsODEFunctions) as ODE 1.3 implemented them. ODE's functions
// that change a tree (delete, insert-*, rename) change a copy: they return
// a copy of the parent of what they change, to be assigned back.
// bpel:getVariableProperty is compiled apart (compileXPath2);
// bpel:doXslTransform runs the stylesheets compiled at deploy (xslt.go).
// ODE ran XQuery with Saxon, so saxon:parse is there too.

// odeErr is a dynamic error of an ODE function (a FOER0000 error naming
// the function, which the runtime raises as subLanguageExecutionFault).
func odeErr(fn, format string, args ...any) error {
	return &xpath2.Error{Code: "FOER0000", Msg: "ode:" + fn + ": " + fmt.Sprintf(format, args...)}
}

// getLinkStatus is bpel:getLinkStatus('link'): the status of a link the
// join condition's activity is the target of.
func GetLinkStatus(c xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
	name := seqString(args[0])
	if dc := c.Dynamic(); dc.Variables != nil {
		if v, ok := dc.Variables(NsXP2Link, name); ok {
			return v, nil
		}
	}
	return nil, &xpath2.Error{Code: "FOER0000", Msg: fmt.Sprintf("bpel:getLinkStatus: no link %q targets this activity", name)}
}

// seqString is the string value of a sequence's first item ("" for the
// empty sequence).
func seqString(s xpath2.Sequence) string {
	if len(s) == 0 {
		return ""
	}
	return xpath2.Atomize(s[0]).String()
}

// argElement is the one element a function argument must hold.
func argElement(fn string, s xpath2.Sequence) (*etree.Element, error) {
	if len(s) != 1 {
		return nil, odeErr(fn, "want one element, got %d items", len(s))
	}
	return itemElement(fn, s[0])
}

func itemElement(fn string, it xpath2.Item) (*etree.Element, error) {
	n, ok := it.(XNode)
	if ok {
		if e, ok := n.elem(); ok {
			return e, nil
		}
		if n.Doc == xpath1.DocAbove {
			return n.Tok.(*etree.Element), nil
		}
	}
	return nil, odeErr(fn, "want an element")
}

// detached returns a copy of a node to be placed under dst, declaring the
// namespaces it uses that dst's scope does not bind the same way.
func detached(it xpath2.Item, dst *etree.Element) (etree.Token, error) {
	n, ok := it.(XNode)
	if !ok || n.Attr >= 0 || n.Doc != xpath1.NotDoc {
		if a, ok := it.(xpath2.Atomic); ok {
			return etree.NewText(a.String()), nil
		}
		return nil, fmt.Errorf("cannot insert a %T", it)
	}
	switch t := n.Tok.(type) {
	case *etree.Element:
		cp := t.Copy()
		FixNamespaces(cp, t, dst)
		return cp, nil
	case *etree.CharData:
		return etree.NewText(t.Data), nil
	case *etree.Comment:
		return etree.NewComment(t.Data), nil
	}
	return nil, fmt.Errorf("cannot insert a %T", n.Tok)
}

// cloneElem copies e, with the namespaces it uses, outside any tree.
func cloneElem(e *etree.Element) *etree.Element {
	cp := e.Copy()
	FixNamespaces(cp, e, nil)
	return cp
}

// odeResult wraps a tree an ODE function built.
func odeResult(e *etree.Element) xpath2.Sequence {
	return xpath2.Sequence{XNode{Tok: e, Attr: -1}}
}

// insertAt inserts copies of items into e before its child index i (all
// children, len(e.Child) appends).
func insertAt(fn string, e *etree.Element, i int, items xpath2.Sequence) error {
	for _, it := range items {
		tok, err := detached(it, e)
		if err != nil {
			return odeErr(fn, "%v", err)
		}
		e.InsertChildAt(i, tok)
		i++
	}
	return nil
}

// processProperty is ode:process-property('dd:name'): a deploy.xml
// <property> of the process; its element content (the first child
// element) or else its text. The prefix resolves against the process
// element's namespaces.
func ProcessProperty(props map[exchange.QName]*etree.Element, ns map[string]string, arg xpath2.Sequence) (xpath2.Sequence, error) {
	var q exchange.QName
	if a, ok := xpath2.SingleAtomic(arg); ok {
		if qn, ok := a.(xpath2.QName); ok {
			q = exchange.QName{Space: qn.NS, Local: qn.Local}
		}
	}
	if q.Local == "" {
		name := strings.TrimSpace(seqString(arg))
		prefix, local, ok := strings.Cut(name, ":")
		if !ok {
			prefix, local = "", name
		}
		q = exchange.QName{Space: xmldoc.NSDD, Local: local}
		if prefix != "" {
			u, ok := ns[prefix]
			if !ok {
				return nil, odeErr("process-property", "undeclared prefix %q in %q", prefix, name)
			}
			q.Space = u
		}
	}
	p, ok := props[q]
	if !ok && q.Space == xmldoc.NSDD {
		p, ok = props[exchange.QName{Space: xmldoc.NSDDLegacy, Local: q.Local}]
	}
	if !ok {
		return nil, nil
	}
	if el := FirstElement(p); el != nil {
		return odeResult(cloneElem(el)), nil
	}
	holder := etree.NewElement("property")
	text := holder.CreateText(p.Text())
	return xpath2.Sequence{XNode{Tok: text, Attr: -1}}, nil
}

// odeCombineURL is ode:combineUrl(base, relative): relative resolved
// against base (RFC 3986).
func OdeCombineURL(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
	base, err := url.Parse(strings.TrimSpace(seqString(args[0])))
	if err != nil || !base.IsAbs() {
		return nil, odeErr("combineUrl", "base %q is no absolute URL", seqString(args[0]))
	}
	rel, err := url.Parse(strings.TrimSpace(seqString(args[1])))
	if err != nil {
		return nil, odeErr("combineUrl", "%v", err)
	}
	return xpath2.Sequence{xpath2.Str(base.ResolveReference(rel).String())}, nil
}

var uriTemplateVar = regexp.MustCompile(`\{([^{}=]+)(?:=([^{}]*))?\}`)

// odeComposeURL is ode:composeUrl(template, name, value, ...) or
// ode:composeUrl(template, <pairs><name>value</name>...</pairs>): the
// template's {name} (or {name=default}) replaced by the values. A name
// with no value takes its default, else is dropped (composeUrl) or kept
// as written (expandTemplate, lazy).
func OdeComposeURL(args []xpath2.Sequence, lazy bool) (xpath2.Sequence, error) {
	fn := "composeUrl"
	if lazy {
		fn = "expandTemplate"
	}
	vals := map[string]string{}
	switch {
	case len(args) == 2:
		if len(args[1]) > 0 {
			e, err := argElement(fn, args[1])
			if err != nil {
				return nil, err
			}
			for _, c := range e.ChildElements() {
				vals[c.Tag] = c.Text()
			}
		}
	case len(args)%2 == 1:
		for i := 1; i < len(args); i += 2 {
			if n := seqString(args[i]); n != "" {
				vals[n] = seqString(args[i+1])
			}
		}
	default:
		return nil, odeErr(fn, "want a template and name/value pairs or one element of pairs")
	}
	tmpl := seqString(args[0])
	out := uriTemplateVar.ReplaceAllStringFunc(tmpl, func(m string) string {
		sub := uriTemplateVar.FindStringSubmatch(m)
		if v, ok := vals[strings.TrimSpace(sub[1])]; ok {
			return url.PathEscape(v)
		}
		if strings.Contains(m, "=") {
			return sub[2]
		}
		if lazy {
			return m
		}
		return ""
	})
	return xpath2.Sequence{xpath2.Str(out)}, nil
}

// odeSplit is ode:splitToElements(string, separator, localName[, ns]):
// a <wrapper> element holding one element per piece (trimmed), which a
// copy takes as its children's source.
func OdeSplit(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
	sep := seqString(args[1])
	re, err := regexp.Compile(sep)
	if err != nil {
		return nil, odeErr("splitToElements", "separator %q: %v", sep, err)
	}
	local := seqString(args[2])
	if !ValidNCName(local) {
		return nil, odeErr("splitToElements", "%q is no element name", local)
	}
	w := etree.NewElement("wrapper")
	space := ""
	if len(args) == 4 {
		space = seqString(args[3])
	}
	for _, piece := range re.Split(seqString(args[0]), -1) {
		e := w.CreateElement(local)
		if space != "" {
			e.CreateAttr("xmlns", space)
		}
		e.SetText(strings.TrimSpace(piece))
	}
	return odeResult(w), nil
}

// odeDomToString is ode:dom-to-string(element): its XML text.
func OdeDomToString(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
	e, err := argElement("dom-to-string", args[0])
	if err != nil {
		return nil, err
	}
	doc := xmlparse.NewDocument()
	doc.SetRoot(cloneElem(e))
	s, err := doc.WriteToString()
	if err != nil {
		return nil, odeErr("dom-to-string", "%v", err)
	}
	return xpath2.Sequence{xpath2.Str(s)}, nil
}

// odeStringToDom is ode:string-to-dom(string), the inverse of
// dom-to-string: the document element its XML text parses to. Text that
// is not well-formed XML is a dynamic error naming the function.
func OdeStringToDom(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
	doc := xmlparse.NewDocument()
	if err := doc.ReadFromString(seqString(args[0])); err != nil {
		return nil, odeErr("string-to-dom", "not well-formed XML: %v", err)
	}
	root := doc.Root()
	if root == nil {
		return nil, odeErr("string-to-dom", "no element in %q", seqString(args[0]))
	}
	doc.RemoveChild(root)
	return odeResult(root), nil
}

// childIndex is the position of n among its parent's children.
func childIndex(fn string, it xpath2.Item) (*etree.Element, int, error) {
	n, ok := it.(XNode)
	if !ok || n.Attr >= 0 || n.Doc != xpath1.NotDoc {
		return nil, 0, odeErr(fn, "want a node with a parent element")
	}
	p := n.Tok.Parent()
	if p == nil {
		return nil, 0, odeErr(fn, "the node has no parent")
	}
	return p, n.Tok.Index(), nil
}

// odeDelete is ode:delete([context,] nodes): a copy of the nodes' parent
// without them. They must share the parent.
func OdeDelete(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
	del := args[len(args)-1]
	if len(del) == 0 {
		return nil, odeErr("delete", "nothing to delete")
	}
	var parent *etree.Element
	var drop []int
	for _, it := range del {
		p, i, err := childIndex("delete", it)
		if err != nil {
			return nil, err
		}
		if parent != nil && p != parent {
			return nil, odeErr("delete", "the nodes must have the same parent")
		}
		parent = p
		drop = append(drop, i)
	}
	cp := cloneElem(parent)
	gone := map[int]bool{}
	for _, i := range drop {
		gone[i] = true
	}
	for i := len(cp.Child) - 1; i >= 0; i-- {
		if gone[i] {
			cp.RemoveChildAt(i)
		}
	}
	return odeResult(cp), nil
}

// odeInsertBefore is ode:insert-before([context,] target, nodes): a copy
// of target's parent with the nodes before target.
func OdeInsertBefore(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
	return insertNear("insert-before", args, false)
}

// odeInsertAfter is ode:insert-after([context,] target, nodes): a copy of
// target's parent with the nodes after target (the last of the targets).
func OdeInsertAfter(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
	return insertNear("insert-after", args, true)
}

func insertNear(fn string, args []xpath2.Sequence, after bool) (xpath2.Sequence, error) {
	target, nodes := args[len(args)-2], args[len(args)-1]
	if len(target) == 0 {
		return nil, odeErr(fn, "no target node")
	}
	ref := target[0]
	if after {
		ref = target[len(target)-1]
	}
	p, i, err := childIndex(fn, ref)
	if err != nil {
		return nil, err
	}
	cp := cloneElem(p)
	if after {
		i++
	}
	if err := insertAt(fn, cp, i, nodes); err != nil {
		return nil, err
	}
	return odeResult(cp), nil
}

// odeInsertAsFirstInto is ode:insert-as-first-into(parent, nodes): a copy
// of parent with the nodes as its first children.
func OdeInsertAsFirstInto(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
	e, err := argElement("insert-as-first-into", args[0])
	if err != nil {
		return nil, err
	}
	cp := cloneElem(e)
	if err := insertAt("insert-as-first-into", cp, 0, args[1]); err != nil {
		return nil, err
	}
	return odeResult(cp), nil
}

// odeInsertAsLastInto is ode:insert-as-last-into(parent, nodes): a copy
// of parent with the nodes as its last children.
func OdeInsertAsLastInto(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
	e, err := argElement("insert-as-last-into", args[0])
	if err != nil {
		return nil, err
	}
	cp := cloneElem(e)
	if err := insertAt("insert-as-last-into", cp, len(cp.Child), args[1]); err != nil {
		return nil, err
	}
	return odeResult(cp), nil
}

// odeRename is ode:rename(element, name[, type]): a copy of the element's
// parent in which the element has the new name (a QName, an element whose
// name it takes, or a "prefix:local" string resolved on the element), and
// with a type, xsi:type.
func OdeRename(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
	if len(args[0]) != 1 {
		return nil, odeErr("rename", "want one element, got %d items", len(args[0]))
	}
	p, i, err := childIndex("rename", args[0][0])
	if err != nil {
		return nil, err
	}
	orig, ok := p.Child[i].(*etree.Element)
	if !ok {
		return nil, odeErr("rename", "want an element")
	}
	name, err := renameArg(orig, args[1])
	if err != nil {
		return nil, err
	}
	cp := cloneElem(p)
	el := cp.Child[i].(*etree.Element)
	if uri, ok := LookupNS(el, name.prefix); !ok || uri != name.space {
		if name.prefix == "" {
			el.CreateAttr("xmlns", name.space)
		} else {
			el.CreateAttr("xmlns:"+name.prefix, name.space)
		}
	}
	el.Space, el.Tag = name.prefix, name.local
	if len(args) == 3 {
		tn, err := renameArg(orig, args[2])
		if err != nil {
			return nil, err
		}
		if uri, ok := LookupNS(el, tn.prefix); tn.prefix != "" && (!ok || uri != tn.space) {
			el.CreateAttr("xmlns:"+tn.prefix, tn.space)
		}
		if _, ok := LookupNS(el, "xsi"); !ok {
			el.CreateAttr("xmlns:xsi", "http://www.w3.org/2001/XMLSchema-instance")
		}
		typ := tn.local
		if tn.prefix != "" {
			typ = tn.prefix + ":" + typ
		}
		el.CreateAttr("xsi:type", typ)
	}
	return odeResult(cp), nil
}

type prefixedName struct{ prefix, local, space string }

func renameArg(orig *etree.Element, arg xpath2.Sequence) (prefixedName, error) {
	if len(arg) != 1 {
		return prefixedName{}, odeErr("rename", "want one name, got %d items", len(arg))
	}
	switch v := arg[0].(type) {
	case xpath2.QName:
		return prefixedName{v.Prefix, v.Local, v.NS}, nil
	case XNode:
		if e, ok := v.elem(); ok {
			return prefixedName{e.Space, e.Tag, e.NamespaceURI()}, nil
		}
	}
	s := strings.TrimSpace(seqString(arg))
	prefix, local, ok := strings.Cut(s, ":")
	if !ok {
		prefix, local = "", s
	}
	uri, _ := LookupNS(orig, prefix)
	if !ValidNCName(local) {
		return prefixedName{}, odeErr("rename", "%q is no element name", s)
	}
	return prefixedName{prefix, local, uri}, nil
}

// nsSaxon is the namespace of Saxon's extension functions.
const NsSaxon = "http://saxon.sf.net/"

// saxonParse is saxon:parse($xml as xs:string): the document the string
// holds (FODC0006 when it is not well-formed XML).
func SaxonParse(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
	if len(args[0]) != 1 {
		return nil, &xpath2.Error{Code: "XPTY0004", Msg: fmt.Sprintf("saxon:parse takes one string, not %d items", len(args[0]))}
	}
	doc := xmlparse.NewDocument()
	if err := doc.ReadFromString(xpath2.Atomize(args[0][0]).String()); err != nil {
		return nil, &xpath2.Error{Code: "FODC0006", Msg: "saxon:parse", Err: err}
	}
	return xpath2.Sequence{xpath2.NewDocument(doc)}, nil
}
