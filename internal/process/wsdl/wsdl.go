package wsdl

import (
	"encoding/xml"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/beevik/etree"
	"github.com/hooklift/gowsdl"

	"github.com/orchd/orchd/internal/bundlefs"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xsd"
)

// qname is a qualified XML name.
type qname = exchange.QName

// PortType is a WSDL portType.
type PortType struct {
	Name qname
	Ops  map[string]*exchange.Operation // binding-independent (no action/style)
	// Pos is where the portType is declared. Overloaded names the
	// operations declared more than once (Ops keeps the last), OutputFirst
	// those whose output comes before their input or that have only an
	// output (solicit-response and notification operations): static
	// analysis refuses both (SA00002, SA00001).
	Pos         xmldoc.Pos
	Overloaded  []string
	OutputFirst []string
	// defaultIn names the operations whose input has no explicit
	// WS-Addressing action (wsdl_wsa.go): a binding's soapAction is
	// their action then.
	defaultIn map[string]bool
}

// Set is every WSDL and XSD document a bundle's processes import,
// resolved into the parts the compiler needs.
type Set struct {
	dir       string
	Shared    []string          // sibling folders of the deploy root it may read (LoadOptions.SharedFolders)
	Limits    bundlefs.Limits   // bounds of a file read (LoadOptions.Bundle)
	docs      map[string][]byte // bundle-relative name -> content
	Messages  map[qname]*exchange.MessageDesc
	PortTypes map[qname]*PortType
	bindings  map[qname]*etree.Element
	bindDocs  map[*etree.Element]*xmldoc.Document
	services  map[qname]map[string]*servicePort
	Plinks    map[qname]map[string]qname // partnerLinkType -> role -> portType
	Props     map[qname]bool
	Aliases   map[AliasKey]*propertyAlias
	loaded    map[string]bool
	// TargetNS is the targetNamespace of each WSDL file loaded (by its
	// clean bundle-relative name), for static analysis (SA00011).
	TargetNS map[string]string
	// Decls are the vprop:property and vprop:propertyAlias elements
	// loaded, as written, for static analysis (SA00019, SA00020, SA00022).
	Decls   []Decl
	errs    *xmldoc.Errors
	pending []pendingMsg
	// extra holds the bundle's WSDLs that no import reached (see
	// loadUnimported), or nil.
	extra *Set
	// XsdImports are the schema locations the processes import; xsd is
	// the bundle's schemas, loaded only when a process validates (see
	// schemas).
	XsdImports []string
	xsd        *xsd.Set
}

type servicePort struct {
	service qname
	port    string
	binding qname
	address string
	docName string
	pos     xmldoc.Pos
}

// Decl is a vprop:property or vprop:propertyAlias as written: Attrs
// holds its attributes, QNames resolved ("propertyName", "messageType",
// "type", "element"; "part" as written).
type Decl struct {
	Tag   string // "property" or "propertyAlias"
	Name  qname  // the property's (its own, or propertyName)
	Attrs map[string]qname
	Pos   xmldoc.Pos
}

type AliasKey struct {
	Prop        qname
	MessageType qname
	Element     qname
}

type propertyAlias struct {
	Part  string
	Query string
	Ns    map[string]string
	Pos   xmldoc.Pos
}

// NewSet returns an empty set for the bundle in dir, reporting to errs.
func NewSet(dir string, errs *xmldoc.Errors) *Set {
	return &Set{
		dir:       dir,
		docs:      map[string][]byte{},
		Messages:  map[qname]*exchange.MessageDesc{},
		PortTypes: map[qname]*PortType{},
		bindings:  map[qname]*etree.Element{},
		bindDocs:  map[*etree.Element]*xmldoc.Document{},
		services:  map[qname]map[string]*servicePort{},
		Plinks:    map[qname]map[string]qname{},
		Props:     map[qname]bool{},
		Aliases:   map[AliasKey]*propertyAlias{},
		loaded:    map[string]bool{},
		TargetNS:  map[string]string{},
		errs:      errs,
	}
}

// ReadBundleFile reads name (relative to the bundle dir, slash-separated),
// refusing paths that leave the bundle's folder once cleaned (a sibling
// bundle's files are not this bundle's to import or serve), except into
// the sibling folders LoadOptions.SharedFolders names. The file is read
// through bundlefs: a regular file reached without a link, under
// w.Limits.
func (w *Set) ReadBundleFile(name string) ([]byte, error) {
	clean := path.Clean(name)
	if path.IsAbs(clean) || strings.Contains(clean, "://") {
		return nil, fmt.Errorf("import location %q must be relative to the bundle", name)
	}
	if !filepath.IsLocal(filepath.FromSlash(clean)) && !sharedFolder(w.Shared, clean) {
		return nil, fmt.Errorf("import location %q leaves the bundle's folder", name)
	}
	if rest, ok := strings.CutPrefix(clean, "../"); ok {
		return bundlefs.ReadFile(filepath.Dir(w.dir), rest, w.Limits)
	}
	return bundlefs.ReadFile(w.dir, clean, w.Limits)
}

// sharedFolder reports whether the clean relative path p is inside one
// of the sibling folders shared names.
func sharedFolder(shared []string, p string) bool {
	for _, f := range shared {
		if rest, ok := strings.CutPrefix(p, "../"+f+"/"); ok && filepath.IsLocal(filepath.FromSlash(rest)) {
			return true
		}
	}
	return false
}

// LoadWSDL loads a WSDL file and, recursively, what it imports. from is
// where the import was written, for error messages.
func (w *Set) LoadWSDL(name string, from xmldoc.Pos) {
	name = path.Clean(name)
	if w.loaded[name] {
		return
	}
	w.loaded[name] = true
	data, err := w.ReadBundleFile(name)
	if err != nil {
		w.errs.Add(from, "import", "cannot read WSDL %s: %v", name, err)
		return
	}
	data = xmldoc.TrimBOM(data)
	w.docs[name] = data
	doc, err := xmldoc.Parse(name, data)
	if err != nil {
		w.errs.AddErr(err)
		return
	}
	root := doc.Root
	if root.NamespaceURI() != xmldoc.NSWSDL || root.Tag != "definitions" {
		w.errs.Add(doc.Pos(root), root.Tag, "not a WSDL 1.1 document: root element is {%s}%s, want {%s}definitions", root.NamespaceURI(), root.Tag, xmldoc.NSWSDL)
		return
	}
	var model gowsdl.WSDL
	if err := xml.Unmarshal(data, &model); err != nil {
		w.errs.Add(doc.Pos(root), "definitions", "cannot read WSDL model: %v", err)
		return
	}
	tns := model.TargetNamespace
	w.TargetNS[name] = tns
	dirOf := path.Dir(name)
	for _, imp := range model.Imports {
		if imp.Location == "" {
			continue
		}
		w.LoadWSDL(path.Join(dirOf, imp.Location), doc.Pos(root))
	}
	// XSD imports and includes in types, for ?wsdl and to check they exist.
	for _, e := range root.FindElements("./types/schema") {
		w.loadSchemaRefs(doc, e, dirOf)
	}

	qn := func(e *etree.Element, attr string) (qname, bool) {
		v := e.SelectAttrValue(attr, "")
		if v == "" {
			return qname{}, false
		}
		sp, local, err := xmldoc.ResolveQName(e, v, true)
		if err != nil {
			w.errs.Add(doc.Pos(e), e.Tag, "attribute %s: %v", attr, err)
			return qname{}, false
		}
		return qname{Space: sp, Local: local}, true
	}

	for _, me := range root.SelectElements("message") {
		m := &exchange.MessageDesc{Name: qname{Space: tns, Local: me.SelectAttrValue("name", "")}}
		for _, pe := range me.SelectElements("part") {
			pd := exchange.PartDesc{Name: pe.SelectAttrValue("name", "")}
			pd.Element, _ = qn(pe, "element")
			pd.Type, _ = qn(pe, "type")
			if pd.Element.IsZero() && pd.Type.IsZero() {
				w.errs.Add(doc.Pos(pe), "part", "part %q of message %s has neither element nor type", pd.Name, m.Name.Local)
			}
			m.Parts = append(m.Parts, pd)
		}
		w.Messages[m.Name] = m
	}
	for _, pte := range root.SelectElements("portType") {
		pt := &PortType{Name: qname{Space: tns, Local: pte.SelectAttrValue("name", "")}, Ops: map[string]*exchange.Operation{}, Pos: doc.Pos(pte)}
		for _, oe := range pte.SelectElements("operation") {
			op := &exchange.Operation{Name: oe.SelectAttrValue("name", ""), PortType: pt.Name, Faults: map[string]*exchange.MessageDesc{}}
			if pt.Ops[op.Name] != nil {
				pt.Overloaded = append(pt.Overloaded, op.Name)
			}
			if first := oe.ChildElements(); len(first) > 0 && first[0].Tag == "output" || len(first) > 1 && first[0].Tag == "documentation" && first[1].Tag == "output" {
				pt.OutputFirst = append(pt.OutputFirst, op.Name)
			}
			if in := oe.SelectElement("input"); in != nil {
				if q, ok := qn(in, "message"); ok {
					op.Input = w.msgRef(q, doc, in)
				}
			}
			if out := oe.SelectElement("output"); out != nil {
				if q, ok := qn(out, "message"); ok {
					op.Output = w.msgRef(q, doc, out)
				}
			}
			for _, fe := range oe.SelectElements("fault") {
				if q, ok := qn(fe, "message"); ok {
					op.Faults[fe.SelectAttrValue("name", "")] = w.msgRef(q, doc, fe)
				}
			}
			if !wsaActions(op, oe, tns, pt.Name.Local) {
				if pt.defaultIn == nil {
					pt.defaultIn = map[string]bool{}
				}
				pt.defaultIn[op.Name] = true
			}
			pt.Ops[op.Name] = op
		}
		w.PortTypes[pt.Name] = pt
	}
	for _, be := range root.SelectElements("binding") {
		q := qname{Space: tns, Local: be.SelectAttrValue("name", "")}
		w.bindings[q] = be
		w.bindDocs[be] = doc
	}
	for _, se := range root.SelectElements("service") {
		sq := qname{Space: tns, Local: se.SelectAttrValue("name", "")}
		ports := w.services[sq]
		if ports == nil {
			ports = map[string]*servicePort{}
			w.services[sq] = ports
		}
		for _, pe := range se.SelectElements("port") {
			sp := &servicePort{service: sq, port: pe.SelectAttrValue("name", ""), docName: name, pos: doc.Pos(pe)}
			sp.binding, _ = qn(pe, "binding")
			for _, a := range pe.ChildElements() {
				if a.Tag == "address" {
					sp.address = a.SelectAttrValue("location", "")
				}
			}
			ports[sp.port] = sp
		}
	}
	for _, pl := range root.ChildElements() {
		switch {
		case pl.Tag == "partnerLinkType" && (pl.NamespaceURI() == xmldoc.NSPlnk || pl.NamespaceURI() == xmldoc.NSPlnk2004):
			q := qname{Space: tns, Local: pl.SelectAttrValue("name", "")}
			roles := map[string]qname{}
			for _, r := range pl.SelectElements("role") {
				pt, ok := qn(r, "portType")
				if !ok {
					if pte := r.SelectElement("portType"); pte != nil {
						pt, _ = qn(pte, "name")
					}
				}
				roles[r.SelectAttrValue("name", "")] = pt
			}
			w.Plinks[q] = roles
		case pl.Tag == "property" && isVprop(pl):
			w.Props[qname{Space: tns, Local: pl.SelectAttrValue("name", "")}] = true
			w.Decls = append(w.Decls, decl(pl, qname{Space: tns, Local: pl.SelectAttrValue("name", "")}, doc, qn))
		case pl.Tag == "propertyAlias" && isVprop(pl):
			prop, _ := qn(pl, "propertyName")
			w.Decls = append(w.Decls, decl(pl, prop, doc, qn))
			k := AliasKey{Prop: prop}
			k.MessageType, _ = qn(pl, "messageType")
			k.Element, _ = qn(pl, "element")
			a := &propertyAlias{Part: pl.SelectAttrValue("part", ""), Pos: doc.Pos(pl)}
			if qe := pl.SelectElement("query"); qe != nil {
				a.Query = strings.TrimSpace(qe.Text())
				a.Ns = xmldoc.Namespaces(qe)
			}
			w.Aliases[k] = a
		}
	}
}

// decl records property or alias element e of doc.
func decl(e *etree.Element, name qname, doc *xmldoc.Document, qn func(*etree.Element, string) (qname, bool)) Decl {
	d := Decl{Tag: e.Tag, Name: name, Attrs: map[string]qname{}, Pos: doc.Pos(e)}
	for _, a := range []string{"messageType", "type", "element"} {
		if q, ok := qn(e, a); ok {
			d.Attrs[a] = q
		}
	}
	if p := e.SelectAttrValue("part", ""); p != "" {
		d.Attrs["part"] = qname{Local: p}
	}
	return d
}

func (w *Set) msgRef(q qname, doc *xmldoc.Document, at *etree.Element) *exchange.MessageDesc {
	// Messages may be declared later in the same file or in an import that
	// is not loaded yet; resolve lazily through a placeholder that is
	// filled in by resolveMessages.
	m := &exchange.MessageDesc{Name: q}
	w.pending = append(w.pending, pendingMsg{desc: m, pos: doc.Pos(at), tag: at.Tag})
	return m
}

type pendingMsg struct {
	desc *exchange.MessageDesc
	pos  xmldoc.Pos
	tag  string
}

// ResolveMessages fills the message placeholders of portType operations.
func (w *Set) ResolveMessages() {
	for _, p := range w.pending {
		m, ok := w.Messages[p.desc.Name]
		if !ok {
			w.errs.Add(p.pos, p.tag, "unknown message %s", p.desc.Name)
			continue
		}
		*p.desc = *m
	}
	w.pending = nil
}

func (w *Set) loadSchemaRefs(doc *xmldoc.Document, schema *etree.Element, dirOf string) {
	for _, e := range schema.ChildElements() {
		if e.NamespaceURI() != xmldoc.NSXSD || (e.Tag != "import" && e.Tag != "include") {
			continue
		}
		loc := e.SelectAttrValue("schemaLocation", "")
		if loc == "" {
			continue
		}
		name := path.Clean(path.Join(dirOf, loc))
		if w.loaded[name] {
			continue
		}
		w.loaded[name] = true
		data, err := w.ReadBundleFile(name)
		if err != nil {
			w.errs.Add(doc.Pos(e), "xsd:"+e.Tag, "cannot read schema %s: %v", loc, err)
			continue
		}
		w.docs[name] = data
		sd, err := xmldoc.Parse(name, data)
		if err != nil {
			w.errs.AddErr(err)
			continue
		}
		if sd.Root.NamespaceURI() == xmldoc.NSXSD && sd.Root.Tag == "schema" {
			w.loadSchemaRefs(sd, sd.Root, path.Dir(name))
		}
	}
}

// endpoint builds the endpoint descriptor of a service port.
func (w *Set) endpoint(service qname, port string, at xmldoc.Pos) (*exchange.Endpoint, error) {
	ports, ok := w.services[service]
	if !ok && w.extra != nil && w.extra.services[service] != nil {
		return w.extra.endpoint(service, port, at)
	}
	if !ok {
		return nil, noService(at, service)
	}
	// ODE accepted prefixed port names ("tns:Port").
	if i := strings.IndexByte(port, ':'); i >= 0 {
		port = port[i+1:]
	}
	sp, ok := ports[port]
	if !ok {
		names := make([]string, 0, len(ports))
		for n := range ports {
			names = append(names, n)
		}
		return nil, fmt.Errorf("%s: service %s has no port %q (ports: %s)", at, service, port, strings.Join(names, ", "))
	}
	be, ok := w.bindings[sp.binding]
	if !ok {
		return nil, fmt.Errorf("%s: port %s %w: unknown binding %s", sp.pos, port, errNoBinding, sp.binding)
	}
	bdoc := w.bindDocs[be]
	ptName, err := resolveAttr(be, "type")
	if err != nil {
		return nil, fmt.Errorf("%s: binding %s: %w", bdoc.Pos(be), sp.binding.Local, err)
	}
	pt, ok := w.PortTypes[ptName]
	if !ok {
		return nil, fmt.Errorf("%s: binding %s refers to unknown portType %s", bdoc.Pos(be), sp.binding.Local, ptName)
	}
	ep := &exchange.Endpoint{Service: service, Port: port, Address: sp.address, Version: exchange.SOAP11}
	ep.Addressing = usesAddressing(be)
	style := "" // as declared; empty when the binding does not say
	for _, c := range be.ChildElements() {
		if c.Tag == "binding" && (c.NamespaceURI() == xmldoc.NSSOAP11 || c.NamespaceURI() == xmldoc.NSSOAP12) {
			if c.NamespaceURI() == xmldoc.NSSOAP12 {
				ep.Version = exchange.SOAP12
			}
			if s := c.SelectAttrValue("style", ""); s != "" {
				style = s
			}
		}
	}
	for _, oe := range be.SelectElements("operation") {
		name := oe.SelectAttrValue("name", "")
		base, ok := pt.Ops[name]
		if !ok {
			return nil, fmt.Errorf("%s: binding operation %q is not in portType %s", bdoc.Pos(oe), name, ptName)
		}
		op := *base
		opStyle := style
		for _, c := range oe.ChildElements() {
			if c.Tag == "operation" && (c.NamespaceURI() == xmldoc.NSSOAP11 || c.NamespaceURI() == xmldoc.NSSOAP12) {
				op.Action = c.SelectAttrValue("soapAction", c.SelectAttrValue("soapActionURI", ""))
				if op.Action != "" && pt.defaultIn[name] {
					op.InputAction = op.Action // WS-Addressing 1.0 Metadata 4.4.4: the soapAction before the default pattern
				}
				if s := c.SelectAttrValue("style", ""); s != "" {
					opStyle = s
				}
			}
		}
		if in := oe.SelectElement("input"); in != nil {
			for _, c := range in.ChildElements() {
				if c.Tag == "body" {
					op.Namespace = c.SelectAttrValue("namespace", "")
				}
			}
			if op.InputParts, err = soapParts(bdoc, in, op.Input, name); err != nil {
				return nil, err
			}
		}
		if out := oe.SelectElement("output"); out != nil {
			if op.OutputParts, err = soapParts(bdoc, out, op.Output, name); err != nil {
				return nil, err
			}
		}
		switch opStyle {
		case "rpc":
			op.Style = exchange.RPC
		case "":
			implyStyle(&op)
		}
		ep.Operations = append(ep.Operations, &op)
	}
	// The portType's operations the binding does not list (an empty
	// binding, common in test bundles, or a partial one, as in a WSO2
	// sample) are served too, in the style their messages imply: a
	// process is written against the portType (WS-BPEL 2.0 section 3:
	// bindings are out of its scope), and ODE served them so. WS-I BP
	// R2718 wants a binding to list them all; docs/bpel.md says so.
	ep.Operations = append(ep.Operations, unboundOps(pt, ep.Operations)...)
	ep.WSDL = &exchange.WSDLDocs{Main: sp.docName, Docs: w.docs}
	return ep, nil
}

// unboundOps are copies of pt's operations not among bound, by name, in
// the style their messages imply.
func unboundOps(pt *PortType, bound []*exchange.Operation) []*exchange.Operation {
	names := make([]string, 0, len(pt.Ops))
	for n := range pt.Ops {
		if !slices.ContainsFunc(bound, func(op *exchange.Operation) bool { return op.Name == n }) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	ops := make([]*exchange.Operation, 0, len(names))
	for _, n := range names {
		op := *pt.Ops[n]
		implyStyle(&op)
		ops = append(ops, &op)
	}
	return ops
}

// implyStyle sets the SOAP style of an operation whose binding declares
// none (no soap:binding or soap:operation style, or no binding at all):
// rpc when a part of its messages is type-typed, since a document/literal
// body carries only element-typed parts (WS-I BP R2204), else document.
// Operations with type-typed parts sharing one message are then told
// apart by their rpc wrapper (named after the operation, in the portType's
// namespace unless soap:body names one), as ODE's engine told them apart
// by operation.
func implyStyle(op *exchange.Operation) {
	for _, m := range []*exchange.MessageDesc{op.Input, op.Output} {
		if m == nil {
			continue
		}
		for _, pd := range m.Parts {
			if pd.Element.IsZero() {
				op.Style = exchange.RPC
				if op.Namespace == "" {
					op.Namespace = op.PortType.Space
				}
				return
			}
		}
	}
}

func resolveAttr(e *etree.Element, attr string) (qname, error) {
	v := e.SelectAttrValue(attr, "")
	if v == "" {
		return qname{}, fmt.Errorf("missing attribute %s", attr)
	}
	sp, local, err := xmldoc.ResolveQName(e, v, true)
	if err != nil {
		return qname{}, err
	}
	return qname{Space: sp, Local: local}, nil
}

// isVprop reports whether e is in WS-BPEL 2.0's varprop namespace or, as
// ODE also read them, the 2004/03 draft's process namespace.
func isVprop(e *etree.Element) bool {
	ns := e.NamespaceURI()
	return ns == xmldoc.NSVprop || ns == xmldoc.NSBPEL2004
}
