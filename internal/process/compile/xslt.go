package compile

import (
	"path"

	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xslt"
)

// prepareXSL compiles the stylesheets the doXslTransform calls of text
// name; it reports errors in the compiler's style and returns false.
func (c *compiler) prepareXSL(e *ast.Element, text string, ns map[string]string) bool {
	ok := true
	for _, m := range expr.XslCallRE.FindAllStringSubmatch(text, -1) {
		if u := ns[m[1]]; m[1] == "" || (u != xmldoc.NSBPEL && u != xmldoc.NSBPEL2004) {
			c.errorf(e, "doXslTransform must be called with a prefix bound to the WS-BPEL namespace in %q", text)
			ok = false
			continue
		}
		name := m[2] + m[3]
		if m[2] == "" && m[3] == "" {
			c.errorf(e, "bpel:doXslTransform: the stylesheet must be a string literal in %q", text)
			ok = false
			continue
		}
		xsl := c.stylesheets()
		if _, done := xsl[name]; done {
			continue
		}
		file := path.Join(path.Dir(c.doc.File), name)
		data, err := c.w.ReadBundleFile(file)
		if err != nil {
			// A standard fault at run time (WS-BPEL 8.4), not a refusal:
			// the process deploys, the call raises it, and the operator
			// hears of it now.
			c.warnf(e, "bpel:doXslTransform: stylesheet %q is not in the bundle (%v): the call raises bpel:xsltStylesheetNotFound", name, err)
			continue
		}
		s, err := xslt.Compile(file, data)
		if err != nil {
			c.errorf(e, "bpel:doXslTransform: invalid stylesheet %q: %v", name, err)
			ok = false
			continue
		}
		xsl[name] = s
	}
	return ok
}

// stylesheets is the compiler's map of compiled stylesheets, made on
// first use; the function closes over the map, not the compiler.
func (c *compiler) stylesheets() map[string]*xslt.Stylesheet {
	if c.xsl == nil {
		c.xsl = map[string]*xslt.Stylesheet{}
	}
	return c.xsl
}
