package check

import (
	"bytes"
	"encoding/xml"
	"path"
	"sort"
	"strings"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/wsdl"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

func checkSolicitResponse(p *pass) {
	reported := map[qname]bool{}
	p.each(func(pl *ast.Element) {
		plt, ok := qattr(pl, "partnerLinkType")
		if !ok {
			return
		}
		roles := p.w.Plinks[plt]
		for _, r := range []string{attr(pl, "myRole"), attr(pl, "partnerRole")} {
			pt := p.w.PortTypes[roles[r]]
			if r == "" || pt == nil || len(pt.OutputFirst) == 0 {
				continue
			}
			reported[pt.Name] = true
			p.report(pl, "role %q's portType %s has solicit-response or notification operation %q, which WS-BPEL cannot use; declare the operation with its input first", r, pt.Name.Local, pt.OutputFirst[0])
		}
	}, "partnerLink")
	// The other portTypes the process's imports hold, in file order.
	var rest []*wsdl.PortType
	for _, pt := range p.w.PortTypes {
		if len(pt.OutputFirst) > 0 && !reported[pt.Name] {
			rest = append(rest, pt)
		}
	}
	sort.Slice(rest, func(i, j int) bool {
		a, b := rest[i].Pos, rest[j].Pos
		return a.File < b.File || a.File == b.File && a.Line < b.Line
	})
	for _, pt := range rest {
		p.reportAt(pt.Pos, "portType name=\""+pt.Name.Local+"\"", "portType %s, imported by the process, has solicit-response or notification operation %q, which WS-BPEL refuses; declare the operation with its input first, or leave it out of the WSDLs the process imports", pt.Name.Local, pt.OutputFirst[0])
	}
}

func checkOverloaded(p *pass) {
	for _, pt := range p.w.PortTypes {
		for _, op := range pt.Overloaded {
			p.reportAt(pt.Pos, "portType name=\""+pt.Name.Local+"\"", "portType %s declares operation %q more than once; WS-BPEL refuses overloaded operations, rename one", pt.Name.Local, op)
		}
	}
}

func (p *pass) knownMessage(e *ast.Element, attrName string) {
	if q, ok := qattr(e, attrName); ok && p.w.Messages[q] == nil {
		p.report(e, "%s %s is not defined in any WSDL the process imports; import its definition or fix the name", attrName, q)
	}
}

// knownSchema reports e's attribute attrName when it names a schema
// component of kind ("xsd:element", "xsd:type") that no imported
// document defines.
func (p *pass) knownSchema(e *ast.Element, attrName, kind string) {
	if q, ok := qattr(e, attrName); ok && !p.importedDefinitions().defines(kind, q) {
		p.report(e, "%s %s is not defined in any WSDL or XML Schema the process imports; import its definition or fix the name", attrName, q)
	}
}

func checkImported(p *pass) {
	p.each(func(v *ast.Element) { p.knownMessage(v, "messageType") }, "variable", "onEvent")
	p.each(func(v *ast.Element) {
		p.knownSchema(v, "element", "xsd:element")
		p.knownSchema(v, "type", "xsd:type")
	}, "variable", "onEvent")
	p.each(func(c *ast.Element) { p.knownSchema(c, "faultElement", "xsd:element") }, "catch")
	p.each(func(s *ast.Element) {
		if s.Parent() == nil || s.Parent().Tag != "copy" {
			return
		}
		if q, ok := qattr(s, "property"); ok && !p.w.Props[q] {
			p.report(s, "property %s is not defined in any WSDL the process imports; import its definition or fix the name", q)
		}
	}, "from", "to")
	p.each(func(c *ast.Element) { p.knownMessage(c, "faultMessageType") }, "catch")
	p.each(func(pl *ast.Element) {
		if q, ok := qattr(pl, "partnerLinkType"); ok && p.w.Plinks[q] == nil {
			p.report(pl, "partnerLinkType %s is not defined in any WSDL the process imports; import its definition or fix the name", q)
		}
	}, "partnerLink")
	p.each(func(cs *ast.Element) {
		for _, prop := range strings.Fields(attr(cs, "properties")) {
			sp, local, err := cs.ResolveQName(prop, true)
			if err == nil && !p.w.Props[qname{Space: sp, Local: local}] {
				p.report(cs, "property %s is not defined in any WSDL the process imports; import its definition or fix the name", prop)
			}
		}
	}, "correlationSet")
}

// importedNamespace is the targetNamespace of the document an <import>
// names ("" when it has none), and whether it could be read.
func (p *pass) importedNamespace(imp *ast.Element) (string, bool) {
	loc := attr(imp, "location")
	if loc == "" {
		return "", false
	}
	if ns, ok := p.w.TargetNS[path.Clean(loc)]; ok {
		return ns, true
	}
	if c, ok := p.tns[loc]; ok {
		return c.ns, c.ok
	}
	ns, ok := p.readNamespace(loc)
	p.tns[loc] = importedNS{ns, ok}
	return ns, ok
}

type importedNS struct {
	ns string
	ok bool
}

// readNamespace reads the targetNamespace of the root of bundle file loc.
func (p *pass) readNamespace(loc string) (string, bool) {
	data, err := p.w.ReadBundleFile(path.Clean(loc))
	if err != nil {
		return "", false
	}
	dec := xml.NewDecoder(bytes.NewReader(xmldoc.TrimBOM(data)))
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		if se, ok := tok.(xml.StartElement); ok {
			for _, a := range se.Attr {
				if a.Name.Space == "" && a.Name.Local == "targetNamespace" {
					return a.Value, true
				}
			}
			return "", true
		}
	}
}

func (p *pass) imports() []*ast.Element { return children(p.root, "import") }

func checkImportNamespace(p *pass) {
	for _, imp := range p.imports() {
		ns, ok := p.importedNamespace(imp)
		if ok && hasAttr(imp, "namespace") && ns != attr(imp, "namespace") {
			p.report(imp, "the imported document's targetNamespace is %q, not the import's namespace %q; make them the same", ns, attr(imp, "namespace"))
		}
	}
}

func checkImportNoNamespace(p *pass) {
	for _, imp := range p.imports() {
		ns, ok := p.importedNamespace(imp)
		if ok && !hasAttr(imp, "namespace") && ns != "" {
			p.report(imp, "the import has no namespace but the imported document's targetNamespace is %q; add namespace=%q", ns, ns)
		}
	}
}

func checkImportType(p *pass) {
	for _, imp := range p.imports() {
		if t := attr(imp, "importType"); t != xmldoc.ImportWSDL && t != xmldoc.ImportXSD {
			p.report(imp, "importType %q is neither %s (WSDL 1.1) nor %s (XML Schema); use one of them", t, xmldoc.ImportWSDL, xmldoc.ImportXSD)
		}
	}
}

func checkStartActivity(p *pass) {
	found := false
	p.each(func(e *ast.Element) {
		if yes(e, "createInstance") {
			found = true
		}
	}, "receive", "pick")
	if found {
		return
	}
	at := p.root
	if acts := activityChildren(p.root); len(acts) > 0 {
		at = acts[0]
	}
	p.report(at, "the process has no start activity; give a <receive> or <pick> createInstance=\"yes\"")
}

func checkPartnerLinkRoles(p *pass) {
	p.each(func(pl *ast.Element) {
		if attr(pl, "myRole") == "" && attr(pl, "partnerRole") == "" {
			p.report(pl, "a partnerLink needs myRole, partnerRole or both; add the role the process plays or its partner's")
		}
	}, "partnerLink")
}

func checkInitializePartnerRole(p *pass) {
	p.each(func(pl *ast.Element) {
		if hasAttr(pl, "initializePartnerRole") && attr(pl, "partnerRole") == "" {
			p.report(pl, "initializePartnerRole is set but the partnerLink has no partnerRole; remove the attribute or add the role")
		}
	}, "partnerLink")
}

// checkUnique reports the second of two tag declarations of one name in
// one wrapper of a scope.
func checkUnique(p *pass, wrapper, tag, what string) {
	p.each(func(s *ast.Element) {
		seen := map[string]bool{}
		for _, d := range grandchildren(s, wrapper, tag) {
			n := attr(d, "name")
			if seen[n] {
				p.report(d, "%s already declares a %s named %q; rename one", scopeLabel(s), what, n)
			}
			seen[n] = true
		}
	}, "process", "scope")
}

func checkPartnerLinkNames(p *pass) { checkUnique(p, "partnerLinks", "partnerLink", "partnerLink") }
func checkVariableNames(p *pass)    { checkUnique(p, "variables", "variable", "variable") }
func checkCorrelationSetNames(p *pass) {
	checkUnique(p, "correlationSets", "correlationSet", "correlationSet")
}

func checkVariableNCName(p *pass) {
	p.each(func(v *ast.Element) {
		if n := attr(v, "name"); !isNCName(n) || strings.Contains(n, ".") {
			p.report(v, "variable name %q is not an NCName without \".\"; rename it", n)
		}
	}, "variable")
}

func checkVariableType(p *pass) {
	p.each(func(v *ast.Element) {
		if v.Parent() == nil || v.Parent().Tag != "variables" {
			return
		}
		n := 0
		for _, a := range []string{"messageType", "type", "element"} {
			if hasAttr(v, a) {
				n++
			}
		}
		if n != 1 {
			p.report(v, "a variable needs exactly one of messageType, type and element (it has %d); keep the one that types it", n)
		}
	}, "variable")
}

// corrMessages are the messages a <correlation> of a messaging element
// applies to.
func corrMessages(x, act *ast.Element, in, out *exchange.MessageDesc) []*exchange.MessageDesc {
	switch act.Tag {
	case "reply":
		return []*exchange.MessageDesc{out}
	case "invoke":
		switch attr(x, "pattern") {
		case "response", "in":
			return []*exchange.MessageDesc{out}
		case "request-response", "out-in":
			return []*exchange.MessageDesc{in, out}
		}
		return []*exchange.MessageDesc{in}
	}
	return []*exchange.MessageDesc{in}
}

func checkCorrelationAliases(p *pass) {
	p.each(func(act *ast.Element) {
		op, _ := p.operation(act)
		if op == nil {
			return
		}
		for _, x := range grandchildren(act, "correlations", "correlation") {
			cs := lookupDecl(x, "correlationSets", "correlationSet", attr(x, "set"))
			if cs == nil {
				continue
			}
			for _, m := range corrMessages(x, act, op.Input, op.Output) {
				if m == nil {
					continue
				}
				for _, prop := range strings.Fields(attr(cs, "properties")) {
					sp, local, err := cs.ResolveQName(prop, true)
					if err != nil || !p.w.Props[qname{Space: sp, Local: local}] {
						continue // SA00010
					}
					if _, ok := p.w.Aliases[wsdl.AliasKey{Prop: qname{Space: sp, Local: local}, MessageType: m.Name}]; !ok {
						p.report(x, "correlation set %q uses property %s, but no propertyAlias maps it for message %s; add a vprop:propertyAlias for that message", attr(cs, "name"), prop, m.Name.Local)
					}
				}
			}
		}
	}, messaging...)
}

func checkCounterVariable(p *pass) {
	p.each(func(fe *ast.Element) {
		s := child(fe, "scope")
		if s == nil {
			return
		}
		for _, v := range grandchildren(s, "variables", "variable") {
			if attr(v, "name") == attr(fe, "counterName") {
				p.report(v, "the scope of this <forEach> declares its counter %q again; rename the variable", attr(v, "name"))
			}
		}
	}, "forEach")
}

func checkOnEventRedeclared(p *pass) {
	p.each(func(ev *ast.Element) {
		s := child(ev, "scope")
		if s == nil {
			return
		}
		implicit := map[string]bool{}
		if v := attr(ev, "variable"); v != "" {
			implicit[v] = true
		}
		for _, fp := range grandchildren(ev, "fromParts", "fromPart") {
			implicit[attr(fp, "toVariable")] = true
		}
		for _, v := range grandchildren(s, "variables", "variable") {
			if implicit[attr(v, "name")] {
				p.report(v, "variable %q is already declared by its <onEvent>; remove this declaration", attr(v, "name"))
			}
		}
	}, "onEvent")
}
