package soap

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"

	"github.com/beevik/etree"
)

// maxDepth bounds element nesting in a request, against deeply nested
// documents built to exhaust the stack or memory.
const maxDepth = 1000

// errMaxDepth is returned for a document nested deeper than maxDepth.
var errMaxDepth = errors.New("elements nested too deeply")

// parseTree builds an etree document from data. It does what
// etree.Document.ReadFromBytes does with default settings, but reads
// through a bytes.Reader directly, so encoding/xml needs no bufio.Reader
// (4 KiB) per document, and it checks that end tags match.
func parseTree(data []byte) (*etree.Document, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	doc := etree.NewDocument()
	stack := make([]*etree.Element, 1, 16)
	stack[0] = &doc.Element
	for {
		tok, err := dec.RawToken()
		if err == io.EOF {
			if len(stack) > 1 {
				line, _ := dec.InputPos()
				return nil, &xml.SyntaxError{Msg: "unexpected EOF: <" + stack[len(stack)-1].FullTag() + "> is not closed", Line: line}
			}
			return doc, nil
		}
		if err != nil {
			return nil, err
		}
		top := stack[len(stack)-1]
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) > maxDepth {
				return nil, errMaxDepth
			}
			e := etree.NewElement(t.Name.Local)
			e.Space = t.Name.Space
			if len(t.Attr) > 0 {
				e.Attr = make([]etree.Attr, 0, len(t.Attr))
				for _, a := range t.Attr {
					e.Attr = append(e.Attr, etree.Attr{Space: a.Name.Space, Key: a.Name.Local, Value: a.Value})
				}
				fixAttrParents(e)
			}
			top.AddChild(e)
			stack = append(stack, e)
		case xml.EndElement:
			if len(stack) == 1 || top.Tag != t.Name.Local || top.Space != t.Name.Space {
				line, _ := dec.InputPos()
				return nil, &xml.SyntaxError{Msg: fmt.Sprintf("element <%s> closed by </%s>", top.FullTag(), fullName(t.Name)), Line: line}
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 1 && len(bytes.TrimSpace(t)) == 0 {
				continue // whitespace around the document element
			}
			top.CreateText(string(t))
		case xml.Comment:
			top.CreateComment(string(t))
		case xml.ProcInst:
			top.CreateProcInst(t.Target, string(t.Inst))
		case xml.Directive:
			top.CreateDirective(string(t))
		}
	}
}

func fullName(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// fixAttrParents sets the element of attributes appended directly, which
// etree's NamespaceURI on an attribute needs. CreateAttr does it, but
// checks for duplicates in quadratic time; rebuilding through it once is
// still linear for the attribute counts SOAP sees.
func fixAttrParents(e *etree.Element) {
	attrs := e.Attr
	e.Attr = e.Attr[:0:0]
	for _, a := range attrs {
		e.CreateAttr(a.FullKey(), a.Value)
	}
}
