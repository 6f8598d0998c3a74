package check

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

// The imported documents of a process, read as plain XML trees for
// SA00014: which components each defines, under which name.

// xnode is an element of an imported document: its name, attributes,
// the namespaces in scope (prefix to URI, "" the default), its children
// and its line.
type xnode struct {
	name     xml.Name
	attrs    []xml.Attr
	ns       map[string]string
	children []*xnode
	text     string
	line     int
}

func (n *xnode) attr(local string) string {
	for _, a := range n.attrs {
		if a.Name.Space == "" && a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// readTree parses an imported document into xnodes; nil when it is not
// well-formed (the loader reports that).
func readTree(data []byte) *xnode {
	dec := xml.NewDecoder(bytes.NewReader(xmldoc.TrimBOM(data)))
	dec.Strict = true
	var stack []*xnode
	var root *xnode
	for {
		line, _ := dec.InputPos()
		tok, err := dec.Token()
		if err != nil {
			if root != nil && len(stack) == 0 {
				return root
			}
			return nil
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &xnode{name: t.Name, line: line, ns: map[string]string{}}
			if len(stack) > 0 {
				for k, v := range stack[len(stack)-1].ns {
					n.ns[k] = v
				}
			}
			for _, a := range t.Attr {
				switch {
				case a.Name.Space == "xmlns":
					n.ns[a.Name.Local] = a.Value
				case a.Name.Space == "" && a.Name.Local == "xmlns":
					n.ns[""] = a.Value
				default:
					n.attrs = append(n.attrs, a)
				}
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(t)
			}
		}
	}
}

// canonical is n's content with the names of QName-valued attributes
// resolved, attributes sorted, whitespace trimmed and documentation left
// out: two definitions that say the same compare equal.
func (n *xnode) canonical(b *strings.Builder) {
	if n.name.Local == "documentation" || n.name.Local == "annotation" {
		return
	}
	fmt.Fprintf(b, "<{%s}%s", n.name.Space, n.name.Local)
	attrs := make([]string, 0, len(n.attrs))
	for _, a := range n.attrs {
		v := a.Value
		if pre, local, ok := strings.Cut(v, ":"); ok && !strings.Contains(v, "/") {
			if uri, bound := n.ns[pre]; bound {
				v = "{" + uri + "}" + local
			}
		}
		attrs = append(attrs, fmt.Sprintf(" {%s}%s=%q", a.Name.Space, a.Name.Local, v))
	}
	sort.Strings(attrs)
	b.WriteString(strings.Join(attrs, ""))
	b.WriteString(">")
	b.WriteString(strings.TrimSpace(n.text))
	for _, c := range n.children {
		c.canonical(b)
	}
	b.WriteString("</>")
}

// definition is a named top-level component of an imported document.
type definition struct {
	kind string // "message", "xsd:type", ...; one symbol space each
	name qname
	pos  xmldoc.Pos
	tag  string // as the finding names it: `message name="m"`
	body string // canonical content; "" for a redefinition
	// complex is set for a complexType, and for an element with an
	// anonymous one; typeRef is an element's type attribute.
	complex bool
	typeRef qname
}

// definitions collects the components of the documents a process
// imports and of what they import in turn, in import order.
type definitions struct {
	p    *pass
	seen map[string]bool
	out  []definition
	// partial are the namespaces some of whose documents were not read
	// (an import without a location the bundle has, or unreadable);
	// schemaNS those of the schemas read.
	partial, schemaNS map[string]bool
}

// wsdlKinds are WSDL 1.1's top-level components and those of the
// WS-BPEL extensions a WSDL holds (propertyAliases are SA00022's).
var wsdlKinds = map[string]string{
	"{" + xmldoc.NSWSDL + "}message":             "message",
	"{" + xmldoc.NSWSDL + "}portType":            "portType",
	"{" + xmldoc.NSWSDL + "}binding":             "binding",
	"{" + xmldoc.NSWSDL + "}service":             "service",
	"{" + xmldoc.NSPlnk + "}partnerLinkType":     "partnerLinkType",
	"{" + xmldoc.NSPlnk2004 + "}partnerLinkType": "partnerLinkType",
	"{" + xmldoc.NSVprop + "}property":           "property",
	"{" + xmldoc.NSBPEL2004 + "}property":        "property",
}

// xsdKinds are XML Schema's named top-level components, by symbol
// space (simple and complex types share one).
var xsdKinds = map[string]string{
	"element":        "element",
	"attribute":      "attribute",
	"complexType":    "type",
	"simpleType":     "type",
	"group":          "group",
	"attributeGroup": "attributeGroup",
	"notation":       "notation",
}

// load reads document loc the first time (fresh); nil when it cannot
// be read or is not well-formed.
func (d *definitions) load(loc string) (root *xnode, fresh bool) {
	loc = path.Clean(loc)
	if d.seen[loc] {
		return nil, false
	}
	d.seen[loc] = true
	data, err := d.p.w.ReadBundleFile(loc)
	if err != nil {
		return nil, true
	}
	return readTree(data), true
}

// wsdl collects the definitions of WSDL document loc.
func (d *definitions) wsdl(loc string) {
	root, _ := d.load(loc)
	if root == nil || root.name.Space != xmldoc.NSWSDL || root.name.Local != "definitions" {
		return
	}
	tns := root.attr("targetNamespace")
	for _, c := range root.children {
		key := "{" + c.name.Space + "}" + c.name.Local
		switch {
		case key == "{"+xmldoc.NSWSDL+"}import":
			if l := c.attr("location"); l != "" && !strings.Contains(l, "://") {
				d.wsdl(path.Join(path.Dir(loc), l))
			}
		case key == "{"+xmldoc.NSWSDL+"}types":
			for _, s := range c.children {
				if s.name.Space == xmldoc.NSXSD && s.name.Local == "schema" {
					d.schema(loc, s, s.attr("targetNamespace"))
				}
			}
		case wsdlKinds[key] != "" && c.attr("name") != "":
			d.add(wsdlKinds[key], qname{Space: tns, Local: c.attr("name")}, loc, c, true)
		}
	}
}

// xsd collects the definitions of schema document loc; tns is the
// including schema's namespace, for a schema without one (an include).
func (d *definitions) xsd(loc, tns string) {
	root, fresh := d.load(loc)
	if !fresh {
		return
	}
	if root == nil || root.name.Space != xmldoc.NSXSD || root.name.Local != "schema" {
		d.partial[tns] = true
		return
	}
	if t := root.attr("targetNamespace"); t != "" {
		tns = t
	}
	d.schema(loc, root, tns)
}

// schema collects the definitions of schema s of document loc.
func (d *definitions) schema(loc string, s *xnode, tns string) {
	d.schemaNS[tns] = true
	for _, c := range s.children {
		if c.name.Space != xmldoc.NSXSD {
			continue
		}
		switch c.name.Local {
		case "import", "include", "redefine":
			l := c.attr("schemaLocation")
			next := tns
			if c.name.Local == "import" {
				next = c.attr("namespace")
			}
			if l == "" || strings.Contains(l, "://") {
				d.partial[next] = true
				break
			}
			d.xsd(path.Join(path.Dir(loc), l), next)
			if c.name.Local == "redefine" {
				for _, r := range c.children {
					if k := xsdKinds[r.name.Local]; k != "" && r.attr("name") != "" {
						d.add("xsd:"+k, qname{Space: tns, Local: r.attr("name")}, loc, r, false)
					}
				}
			}
		default:
			if k := xsdKinds[c.name.Local]; k != "" && c.attr("name") != "" {
				d.add("xsd:"+k, qname{Space: tns, Local: c.attr("name")}, loc, c, true)
			}
		}
	}
}

func (d *definitions) add(kind string, name qname, loc string, n *xnode, withBody bool) {
	def := definition{kind: kind, name: name, pos: xmldoc.Pos{File: loc, Line: n.line}, tag: fmt.Sprintf("%s name=%q", n.name.Local, name.Local)}
	switch n.name.Local {
	case "complexType":
		def.complex = true
	case "element":
		for _, c := range n.children {
			def.complex = def.complex || c.name.Space == xmldoc.NSXSD && c.name.Local == "complexType"
		}
		if pre, local, ok := strings.Cut(n.attr("type"), ":"); ok {
			def.typeRef = qname{Space: n.ns[pre], Local: local}
		} else if t := n.attr("type"); t != "" {
			def.typeRef = qname{Space: n.ns[""], Local: t}
		}
	}
	if withBody {
		var b strings.Builder
		n.canonical(&b)
		def.body = b.String()
	}
	d.out = append(d.out, def)
}

// importedDefinitions reads the documents the process imports, once.
func (p *pass) importedDefinitions() *definitions {
	if p.defs != nil {
		return p.defs
	}
	d := &definitions{p: p, seen: map[string]bool{}, partial: map[string]bool{}, schemaNS: map[string]bool{}}
	for _, imp := range p.imports() {
		loc := attr(imp, "location")
		if loc == "" || strings.Contains(loc, "://") {
			d.partial[attr(imp, "namespace")] = true
			continue
		}
		switch attr(imp, "importType") {
		case xmldoc.ImportWSDL:
			d.wsdl(loc)
		case xmldoc.ImportXSD:
			d.xsd(loc, attr(imp, "namespace"))
		}
	}
	p.defs = d
	return d
}

// defines reports whether the imported documents define schema
// component name of kind ("xsd:element", "xsd:type"), or may: its
// namespace is XML Schema's own, one whose documents were not all read,
// or one of no schema read (a WSDL's messages may name elements of a
// namespace without defining them: engines before static analysis took
// that, and so does the run time, which loads schemas only to validate).
func (d *definitions) defines(kind string, name qname) bool {
	if d.partial[name.Space] || !d.schemaNS[name.Space] || name.Space == xmldoc.NSXSD {
		return true
	}
	for _, def := range d.out {
		if def.kind == kind && def.name == name {
			return true
		}
	}
	return false
}

// complex reports whether the imported documents define name (a type,
// or with element set an element) as of complex type.
func (d *definitions) complex(name qname, element bool) bool {
	for _, def := range d.out {
		switch {
		case element && def.kind == "xsd:element" && def.name == name:
			return def.complex || !def.typeRef.IsZero() && d.complex(def.typeRef, false)
		case !element && def.kind == "xsd:type" && def.name == name:
			return def.complex
		}
	}
	return false
}

func checkImportConflicts(p *pass) {
	d := p.importedDefinitions()
	type key struct {
		kind string
		name qname
	}
	first := map[key]definition{}
	for _, def := range d.out {
		k := key{def.kind, def.name}
		prev, ok := first[k]
		switch {
		case def.body == "":
			p.reportAt(def.pos, def.tag, "<xsd:redefine> gives %s %s a second definition; an imported component must have one definition: define it once, under another name if need be", strings.TrimPrefix(def.kind, "xsd:"), def.name.Local)
		case !ok:
			first[k] = def
		case def.body != prev.body:
			p.reportAt(def.pos, def.tag, "%s %s of namespace %q is defined here and differently at %s; the process's imports must agree: keep one definition", strings.TrimPrefix(def.kind, "xsd:"), def.name.Local, def.name.Space, prev.pos)
		}
	}
}
