package deploy

import (
	"strconv"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

// parseByteBound reads orchd:maxVariableBytes or orchd:maxRunBytes c into
// p: a positive number of bytes.
func parseByteBound(doc *xmldoc.Document, c *etree.Element, errs *xmldoc.Errors, p *Process) {
	text := strings.TrimSpace(c.Text())
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n < 1 {
		errs.Add(doc.Pos(c), "orchd:"+c.Tag, "want a positive number of bytes, not %q", text)
		return
	}
	if c.Tag == "maxRunBytes" {
		p.MaxRunBytes = n
	} else {
		p.MaxVariableBytes = n
	}
}
