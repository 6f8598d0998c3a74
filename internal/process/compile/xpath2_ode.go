package compile

import (
	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xpath2"
)

// xpath2Functions is the process's library, built once per compiler.
func (c *compiler) xpath2Functions() *xpath2.FunctionLibrary {
	if c.xp2lib != nil {
		return c.xp2lib
	}
	l := xpath2.NewFunctionLibrary()
	for _, ns := range []string{xmldoc.NSBPEL, xmldoc.NSBPEL2004} {
		l.Register(ns, "getLinkStatus", 1, 1, expr.GetLinkStatus)
		l.Register(ns, "doXslTransform", 2, -1, expr.DoXslTransform(c.stylesheets()))
	}
	var props map[exchange.QName]*etree.Element
	if c.dp != nil {
		props = c.dp.Properties
	}
	rootNS := xmldoc.Namespaces(c.doc.Root)
	reg := func(impl xpath2.FuncImpl, min, max int, names ...string) {
		for _, n := range names {
			l.Register(xmldoc.NSODEFunctions, n, min, max, impl)
		}
	}
	reg(func(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
		return expr.ProcessProperty(props, rootNS, args[0])
	}, 1, 1, "process-property")
	reg(expr.OdeCombineURL, 2, 2, "combine-url", "combineUrl")
	reg(func(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
		return expr.OdeComposeURL(args, false)
	}, 2, -1, "compose-url", "composeUrl")
	reg(func(_ xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
		return expr.OdeComposeURL(args, true)
	}, 2, -1, "expand-template", "expandTemplate")
	reg(expr.OdeSplit, 3, 4, "split-to-elements", "splitToElements")
	reg(expr.OdeDomToString, 1, 1, "dom-to-string", "domToString")
	reg(expr.OdeStringToDom, 1, 1, "string-to-dom", "stringToDom")
	reg(expr.OdeDelete, 1, 2, "delete")
	reg(expr.OdeInsertBefore, 2, 3, "insert-before")
	reg(expr.OdeInsertAfter, 2, 3, "insert-after")
	reg(expr.OdeInsertAsFirstInto, 2, 2, "insert-as-first-into")
	reg(expr.OdeInsertAsLastInto, 2, 2, "insert-as-last-into")
	reg(expr.OdeRename, 2, 3, "rename")
	l.Register(expr.NsSaxon, "parse", 1, 1, expr.SaxonParse)
	expr.RegisterActiveBPEL(l)
	c.xp2lib = l
	return l
}
