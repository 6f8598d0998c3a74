package xslt

import (
	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/xpath2"
)

// lookupOut resolves a prefix in the result tree being built.
func lookupOut(e *etree.Element, prefix string) (string, bool) {
	if prefix == "xml" {
		return "http://www.w3.org/XML/1998/namespace", true
	}
	for x := e; x != nil; x = x.Parent() {
		if u, ok := localDecl(x, prefix); ok {
			return u, true
		}
	}
	return "", prefix == ""
}

// declare makes prefix bind uri at e unless it already does there.
func declare(e *etree.Element, prefix, uri string) {
	if prefix == "xml" || e.Tag == "" {
		return
	}
	if u, ok := lookupOut(e, prefix); ok && u == uri {
		return
	}
	if prefix == "" {
		e.CreateAttr("xmlns", uri)
	} else {
		e.CreateAttr("xmlns:"+prefix, uri)
	}
}

// addElement appends an element named {uri}prefix:local to parent,
// declaring its namespace where needed.
func addElement(parent *etree.Element, prefix, local, uri string) *etree.Element {
	el := parent.CreateElement(local)
	el.Space = prefix
	declare(el, prefix, uri)
	return el
}

// setAttr sets an attribute of e (an attribute after children, or on no
// element, is ignored, as XSLT 1.0 allows).
func setAttr(e *etree.Element, prefix, local, uri, v string) {
	if e.Tag == "" || len(e.Child) > 0 && hasNonAttr(e) {
		return
	}
	if prefix != "" && uri != "" {
		if u, ok := lookupOut(e, prefix); !ok || u != uri {
			declare(e, prefix, uri)
		}
	}
	if prefix != "" && uri == "" {
		prefix = ""
	}
	e.CreateAttr(qn(prefix, local), v)
}

func hasNonAttr(e *etree.Element) bool {
	for _, c := range e.Child {
		if _, ok := c.(*etree.CharData); ok {
			return true
		}
		if _, ok := c.(*etree.Element); ok {
			return true
		}
	}
	return false
}

func qn(prefix, local string) string {
	if prefix == "" {
		return local
	}
	return prefix + ":" + local
}

// addText appends text to e, merging with a text node before it.
func addText(e *etree.Element, s string) {
	if s == "" {
		return
	}
	if n := len(e.Child); n > 0 {
		if cd, ok := e.Child[n-1].(*etree.CharData); ok && !cd.IsCData() {
			cd.Data += s
			return
		}
	}
	e.CreateText(s)
}

// copyNode copies n to out; deep copies descendants too. It returns the
// element made for an element node.
func copyNode(out *etree.Element, n xpath2.Node, deep bool) *etree.Element {
	switch n.Kind() {
	case xpath2.DocumentNode:
		if deep {
			for _, k := range n.Children() {
				copyNode(out, k, true)
			}
		}
	case xpath2.ElementNode:
		el := addElement(out, n.Prefix(), n.LocalName(), n.NamespaceURI())
		if deep {
			for _, p := range n.InScopePrefixes() {
				if p == "xml" {
					continue
				}
				if u, ok := n.LookupNamespace(p); ok {
					declare(el, p, u)
				}
			}
		}
		for _, a := range n.Attributes() {
			if deep {
				setAttr(el, a.Prefix(), a.LocalName(), a.NamespaceURI(), a.StringValue())
			}
		}
		if deep {
			for _, k := range n.Children() {
				copyNode(el, k, true)
			}
		}
		return el
	case xpath2.AttributeNode:
		setAttr(out, n.Prefix(), n.LocalName(), n.NamespaceURI(), n.StringValue())
	case xpath2.TextNode:
		addText(out, n.StringValue())
	case xpath2.CommentNode:
		out.CreateComment(n.StringValue())
	case xpath2.PINode:
		out.CreateProcInst(n.LocalName(), n.StringValue())
	}
	return nil
}
