package soap

import (
	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/xmlparse"
)

// Limits bound what one inbound message (a request, or a partner's reply)
// may cost to parse: attributes and namespace declarations per element,
// elements per document, depth, text and attribute value length, name
// length and header size. A zero field means its default (see
// xmlparse.Limits); a message over a limit is refused with an error
// wrapping ErrLimit that names the limit and its value.
type Limits = xmlparse.Limits

// parseTree builds an etree document from data with xmlparse, checking
// lim, also the size of a Header (a depth-2 element named Header: whether
// it is the SOAP Header is checked afterwards, and a larger non-Header
// element there fails the envelope anyway).
func parseTree(data []byte, lim Limits) (*etree.Document, error) {
	lim = lim.WithDefaults()
	maxHeader := lim.MaxHeaderBytes
	return xmlparse.Parse(data, xmlparse.Options{
		Limits: lim,
		EndElement: func(e *etree.Element, depth, size int) error {
			if depth == 2 && size > maxHeader && e.Tag == "Header" {
				return &xmlparse.LimitError{Limit: xmlparse.LimitHeaderBytes, Max: maxHeader}
			}
			return nil
		},
	})
}
