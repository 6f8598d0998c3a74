package soap

import (
	"bytes"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/xmlparse"
)

// Namespaces whose import elements ?wsdl rewrites.
const (
	nsWSDL     = "http://schemas.xmlsoap.org/wsdl/"
	nsXSD      = "http://www.w3.org/2001/XMLSchema"
	nsWSDLSOAP = "http://schemas.xmlsoap.org/wsdl/soap/"
	nsWSDLS12  = "http://schemas.xmlsoap.org/wsdl/soap12/"
)

// servedDoc is a WSDL or XSD document as ?wsdl serves it: its text with a
// hole before each of parts[1:] for the address of a service port, which
// depends on the request (the base URL it reached).
type servedDoc struct {
	parts [][]byte   // len(slots)+1 pieces of text
	slots []addrSlot // the soap:address locations between them
}

// addrSlot is the soap:address of one service port.
type addrSlot struct {
	service exchange.QName
	port    string
	orig    string // the bundle's location, credentials taken out, XML-escaped
}

// render writes d with every port this server serves (own, or found by
// lookup) addressed at base + its path, and the others as in the bundle.
func (d *servedDoc) render(base string, own *exchange.Endpoint, lookup func(exchange.QName, string) (string, bool)) []byte {
	if len(d.slots) == 0 {
		return d.parts[0]
	}
	var b bytes.Buffer
	for i, s := range d.slots {
		b.Write(d.parts[i])
		p, ok := "", false
		if s.service == own.Service && s.port == own.Port {
			p, ok = own.Path, true
		} else if lookup != nil {
			p, ok = lookup(s.service, s.port)
		}
		if ok {
			b.WriteString(xmlAttrEscaper.Replace(base + (&url.URL{Path: p}).EscapedPath()))
		} else {
			b.WriteString(s.orig)
		}
	}
	b.Write(d.parts[len(d.parts)-1])
	return b.Bytes()
}

var xmlAttrEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

// rewriteWSDL returns the documents of docs as served at epPath: every
// wsdl:import location and xsd:import/include/redefine schemaLocation that
// names a document of docs (relative to the importing document) becomes
// the relative reference <last segment of epPath>?wsdl=<name>, which
// resolves against <epPath>?wsdl[=...] (where every document is served)
// to epPath?wsdl=<name>; every soap:address (SOAP 1.1 or 1.2) of a
// wsdl:service port becomes a slot that render fills per request; and
// the credentials of an address (user:password@) are taken out. Documents
// that do not parse are returned with the credentials of their URLs
// taken out as text.
func rewriteWSDL(epPath string, docs *exchange.WSDLDocs) map[string]*servedDoc {
	if docs == nil {
		return nil
	}
	marker := slotMarker(docs)
	ref := relativeRef(epPath)
	out := make(map[string]*servedDoc, len(docs.Docs))
	for name, data := range docs.Docs {
		out[name] = &servedDoc{parts: [][]byte{data}}
		doc := xmlparse.NewDocument()
		if err := doc.ReadFromBytes(data); err != nil {
			out[name].parts[0] = []byte(RedactText(string(data)))
			continue
		}
		tns := ""
		if root := doc.Root(); root != nil {
			tns = root.SelectAttrValue("targetNamespace", "")
		}
		var (
			changed bool
			slots   []addrSlot
			walk    func(el *etree.Element)
		)
		walk = func(el *etree.Element) {
			attr := ""
			switch ns := el.NamespaceURI(); {
			case ns == nsWSDL && el.Tag == "import":
				attr = "location"
			case ns == nsXSD && (el.Tag == "import" || el.Tag == "include" || el.Tag == "redefine"):
				attr = "schemaLocation"
			case (ns == nsWSDLSOAP || ns == nsWSDLS12) && el.Tag == "address":
				a := el.SelectAttr("location")
				if a == nil {
					break
				}
				if a.Value != Redact(a.Value) {
					a.Value = Redact(a.Value)
					changed = true
				}
				port := el.Parent()
				if port == nil || port.Tag != "port" || port.NamespaceURI() != nsWSDL {
					break
				}
				svc := port.Parent()
				if svc == nil || svc.Tag != "service" || svc.NamespaceURI() != nsWSDL {
					break
				}
				slots = append(slots, addrSlot{
					service: exchange.QName{Space: tns, Local: svc.SelectAttrValue("name", "")},
					port:    port.SelectAttrValue("name", ""),
					orig:    xmlAttrEscaper.Replace(a.Value),
				})
				a.Value = marker + strconv.Itoa(len(slots)-1) + "."
				changed = true
			}
			if attr != "" {
				if a := el.SelectAttr(attr); a != nil {
					if target, ok := docName(docs, name, a.Value); ok {
						a.Value = ref + url.QueryEscape(target)
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
		b, err := doc.WriteToBytes()
		if err != nil {
			continue
		}
		sd := &servedDoc{slots: slots}
		for i := range slots {
			before, after, ok := bytes.Cut(b, []byte(marker+strconv.Itoa(i)+"."))
			if !ok { // cannot happen: the marker is in no document
				sd = nil
				break
			}
			sd.parts = append(sd.parts, before)
			b = after
		}
		if sd == nil {
			out[name].parts[0] = []byte(RedactText(string(data)))
			continue
		}
		sd.parts = append(sd.parts, b)
		out[name] = sd
	}
	return out
}

// relativeRef is the relative reference, up to the document name, that
// resolves against epPath to epPath?wsdl=: the path's last segment (after
// "./" should it hold a colon, which would read as a scheme), or "./"
// when the path ends with a slash.
func relativeRef(epPath string) string {
	last := epPath[strings.LastIndexByte(epPath, '/')+1:]
	seg := (&url.URL{Path: last}).EscapedPath()
	if last == "" || strings.Contains(last, ":") {
		seg = "./" + seg
	}
	return seg + "?wsdl="
}

// slotMarker returns a string that occurs in none of docs' documents, to
// mark the address slots in a written document.
func slotMarker(docs *exchange.WSDLDocs) string {
	marker := "urn:orchd:address-slot:"
	for again := true; again; {
		again = false
		for _, data := range docs.Docs {
			if bytes.Contains(data, []byte(marker)) {
				marker += "x:"
				again = true
				break
			}
		}
	}
	return marker
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
