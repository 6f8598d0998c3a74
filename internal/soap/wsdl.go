package soap

import (
	"net/url"
	"path"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// Namespaces whose import elements ?wsdl rewrites.
const (
	nsWSDL     = "http://schemas.xmlsoap.org/wsdl/"
	nsXSD      = "http://www.w3.org/2001/XMLSchema"
	nsWSDLSOAP = "http://schemas.xmlsoap.org/wsdl/soap/"
	nsWSDLS12  = "http://schemas.xmlsoap.org/wsdl/soap12/"
)

// rewriteWSDL returns the documents of docs as served at epPath: every
// wsdl:import location and xsd:import/include/redefine schemaLocation that
// names a document of docs (relative to the importing document) is rewritten
// to epPath?wsdl=<name>, and the credentials of a soap:address location
// (user:password@) are taken out. Documents that do not parse are
// returned with the credentials of their URLs taken out as text; those
// that change in neither way, unchanged.
func rewriteWSDL(epPath string, docs *exchange.WSDLDocs) map[string][]byte {
	if docs == nil {
		return nil
	}
	out := make(map[string][]byte, len(docs.Docs))
	for name, data := range docs.Docs {
		out[name] = data
		doc := etree.NewDocument()
		if err := doc.ReadFromBytes(data); err != nil {
			out[name] = []byte(RedactText(string(data)))
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
			case (ns == nsWSDLSOAP || ns == nsWSDLS12) && el.Tag == "address":
				if a := el.SelectAttr("location"); a != nil && Redact(a.Value) != a.Value {
					a.Value = Redact(a.Value)
					changed = true
				}
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
