package soap

import (
	"net/url"
	"path"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// Namespaces whose import elements ?wsdl rewrites.
const (
	nsWSDL = "http://schemas.xmlsoap.org/wsdl/"
	nsXSD  = "http://www.w3.org/2001/XMLSchema"
)

// rewriteWSDL returns the documents of docs as served at epPath: every
// wsdl:import location and xsd:import/include/redefine schemaLocation that
// names a document of docs (relative to the importing document) is rewritten
// to epPath?wsdl=<name>. Documents that do not parse, or import nothing
// served, are returned unchanged.
func rewriteWSDL(epPath string, docs *exchange.WSDLDocs) map[string][]byte {
	if docs == nil {
		return nil
	}
	out := make(map[string][]byte, len(docs.Docs))
	for name, data := range docs.Docs {
		out[name] = data
		doc := etree.NewDocument()
		if err := doc.ReadFromBytes(data); err != nil {
			continue
		}
		changed := false
		var walk func(el *etree.Element)
		walk = func(el *etree.Element) {
			attr := ""
			switch ns := el.NamespaceURI(); {
			case ns == nsWSDL && el.Tag == "import":
				attr = "location"
			case ns == nsXSD && (el.Tag == "import" || el.Tag == "include" || el.Tag == "redefine"):
				attr = "schemaLocation"
			}
			if attr != "" {
				if a := el.SelectAttr(attr); a != nil {
					if target, ok := docName(docs, name, a.Value); ok {
						a.Value = epPath + "?wsdl=" + url.QueryEscape(target)
						changed = true
					}
				}
			}
			for _, c := range el.ChildElements() {
				walk(c)
			}
		}
		if root := doc.Root(); root != nil {
			walk(root)
		}
		if !changed {
			continue
		}
		if b, err := doc.WriteToBytes(); err == nil {
			out[name] = b
		}
	}
	return out
}

// docName resolves location, found in document from, to the name of a
// document of docs.
func docName(docs *exchange.WSDLDocs, from, location string) (string, bool) {
	u, err := url.Parse(location)
	if err != nil || u.IsAbs() || u.Host != "" || u.Path == "" {
		return "", false
	}
	if _, ok := docs.Docs[location]; ok {
		return location, true
	}
	name := path.Clean(path.Join(path.Dir(from), u.Path))
	if _, ok := docs.Docs[name]; ok {
		return name, true
	}
	return "", false
}
