package soap

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"

	"github.com/beevik/etree"
)

// stdMaxDepth bounds element nesting as the previous parser did.
const stdMaxDepth = 1000

// errMaxDepth is returned for a document nested deeper than stdMaxDepth.
var errMaxDepth = errors.New("elements nested too deeply")

// parseTreeStd is the parser the envelope decoder used before
// internal/xmlparse: encoding/xml's RawToken building an etree document.
// It is kept as the reference of FuzzParseDifferential and of the
// equivalence tests, and for the benchmarks that compare the two.
func parseTreeStd(data []byte) (*etree.Document, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	doc := etree.NewDocument()
	stack := make([]*etree.Element, 1, 16)
	stack[0] = &doc.Element
	// ws holds whitespace-only text not yet known to be content: kept if
	// the element turns out to have text or no child elements.
	var ws []byte
	flushWS := func(e *etree.Element) {
		if len(ws) > 0 {
			e.CreateText(string(ws))
			ws = ws[:0]
		}
	}
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
			if len(stack) > stdMaxDepth {
				return nil, errMaxDepth
			}
			e := etree.NewElement(t.Name.Local)
			e.Space = t.Name.Space
			if len(t.Attr) > 0 {
				// CreateAttr links each attribute to e, which
				// Attr.NamespaceURI needs.
				e.Attr = make([]etree.Attr, 0, len(t.Attr))
				for _, a := range t.Attr {
					e.CreateAttr(fullName(a.Name), a.Value)
				}
			}
			ws = ws[:0] // indentation before a child element
			top.AddChild(e)
			stack = append(stack, e)
		case xml.EndElement:
			if len(stack) == 1 || top.Tag != t.Name.Local || top.Space != t.Name.Space {
				line, _ := dec.InputPos()
				return nil, &xml.SyntaxError{Msg: fmt.Sprintf("element <%s> closed by </%s>", top.FullTag(), fullName(t.Name)), Line: line}
			}
			if len(top.Child) == 0 {
				flushWS(top) // <a> </a> keeps its space
			}
			ws = ws[:0]
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(bytes.TrimSpace(t)) == 0 {
				if len(stack) > 1 {
					ws = append(ws, t...)
				}
				continue
			}
			if len(ws) > 0 {
				ws = append(ws, t...)
				top.CreateText(string(ws))
				ws = ws[:0]
				continue
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

// fullName is a raw (unresolved) name as written: prefix:local.
func fullName(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}
