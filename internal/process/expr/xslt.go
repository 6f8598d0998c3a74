package expr

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/xpath1"
	"github.com/orchd/orchd/internal/xpath2"
	"github.com/orchd/orchd/internal/xslt"
)

// bpel:doXslTransform('style.xsl', $node, 'param', value, ...) (WS-BPEL
// 2.0 section 8.4) runs a stylesheet of the bundle with internal/xslt.
// The first argument must be a string literal: the file is read relative
// to the BPEL file and compiled once, at deploy (a missing or invalid
// stylesheet refuses the deploy, naming the BPEL file and line). The
// call is an XPath 2.0 function; an XPath 1.0 expression that calls it is
// compiled as XPath 2.0 (its arguments are variable paths and literals,
// which mean the same in both). At run time a source that is not one
// element is bpel:xsltInvalidSource, as is a result that is not one
// element; any other error of the transformation is
// bpel:subLanguageExecutionFault.

// xslCallRE finds the calls and their first argument.
var XslCallRE = regexp.MustCompile(`(?:([A-Za-z_][\w.\-]*):)?doXslTransform\s*\(\s*(?:'([^']*)'|"([^"]*)")?`)

// doXslTransform implements the function over the stylesheets compiled
// at deploy (read-only once the process is compiled).
func DoXslTransform(xsl map[string]*xslt.Stylesheet) xpath2.FuncImpl {
	return func(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
		return runXSL(xsl, args)
	}
}

func runXSL(xsl map[string]*xslt.Stylesheet, args []xpath2.Sequence) (xpath2.Sequence, error) {
	name := seqString(args[0])
	s := xsl[name]
	if s == nil {
		return nil, &Fault{Name: "xsltStylesheetNotFound", Reason: fmt.Sprintf("bpel:doXslTransform: stylesheet %q was not compiled at deploy", name)}
	}
	if len(args[1]) != 1 {
		return nil, &Fault{Name: "xsltInvalidSource", Reason: fmt.Sprintf("bpel:doXslTransform: the source is %d items, want one element", len(args[1]))}
	}
	src := xslSource(args[1][0])
	if src == nil {
		return nil, &Fault{Name: "xsltInvalidSource", Reason: "bpel:doXslTransform: the source is not an element"}
	}
	if len(args)%2 != 0 {
		return nil, &Fault{Name: "subLanguageExecutionFault", Reason: "bpel:doXslTransform: parameters come in name, value pairs"}
	}
	var params map[string]xpath2.Sequence
	if len(args) > 2 {
		params = make(map[string]xpath2.Sequence, len(args)/2-1)
		for i := 2; i < len(args); i += 2 {
			params[seqString(args[i])] = args[i+1]
		}
	}
	res, err := s.TransformElement(src, &xslt.Options{Params: params})
	if err != nil {
		if errors.Is(err, xslt.ErrNotElement) {
			return nil, &Fault{Name: "xsltInvalidSource", Reason: fmt.Sprintf("bpel:doXslTransform %q: %v", name, err)}
		}
		return nil, &Fault{Name: "subLanguageExecutionFault", Reason: fmt.Sprintf("bpel:doXslTransform %q: %v", name, err)}
	}
	return xpath2.Sequence{XNode{Tok: res, Attr: -1}}, nil
}

// xslSource is the element a source item is, or nil: an element node,
// or a document (a variable or part) holding exactly one element.
func xslSource(it xpath2.Item) *etree.Element {
	n, ok := it.(XNode)
	if !ok || n.Attr >= 0 {
		return nil
	}
	e, ok := n.Tok.(*etree.Element)
	if !ok {
		return nil
	}
	switch n.Doc {
	case xpath1.NotDoc, xpath1.DocAbove:
		return e
	case xpath1.DocOf:
		var one *etree.Element
		for _, k := range e.ChildElements() {
			if one != nil {
				return nil
			}
			one = k
		}
		return one
	}
	return nil
}

// Fault is a WS-BPEL standard fault (Name is its local name in the
// WS-BPEL namespace) that a function of an expression raises, such as
// bpel:doXslTransform's xsltStylesheetNotFound; the runtime raises it at
// the activity evaluating the expression.
type Fault struct {
	Name   string
	Reason string
}

func (f *Fault) Error() string { return "bpel:" + f.Name + ": " + f.Reason }
