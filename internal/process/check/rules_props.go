package check

import "fmt"

// The property rules read the vprop:property and vprop:propertyAlias
// declarations of the WSDLs the process imports (wsdl.Set.Decls), and
// report in the WSDL file.

func checkPropertyType(p *pass) {
	for _, d := range p.w.Decls {
		_, t := d.Attrs["type"]
		_, e := d.Attrs["element"]
		if d.Tag == "property" && t == e {
			p.reportAt(d.Pos, fmt.Sprintf("vprop:property name=%q", d.Name.Local), "property %s needs exactly one of type and element; keep the one that types its value", d.Name.Local)
		}
	}
}

func checkAliasAttrs(p *pass) {
	for _, d := range p.w.Decls {
		if d.Tag != "propertyAlias" {
			continue
		}
		n := 0
		for _, a := range []string{"messageType", "type", "element"} {
			if _, ok := d.Attrs[a]; ok {
				n++
			}
		}
		_, mt := d.Attrs["messageType"]
		_, part := d.Attrs["part"]
		if n != 1 || mt != part {
			p.reportAt(d.Pos, fmt.Sprintf("vprop:propertyAlias propertyName=%q", d.Name.Local), "a propertyAlias uses messageType with part, or type, or element; fix the attributes of this alias for %s", d.Name.Local)
		}
	}
}

func checkAliasUnique(p *pass) {
	seen := map[string]bool{}
	for _, d := range p.w.Decls {
		if d.Tag != "propertyAlias" {
			continue
		}
		k := fmt.Sprint(d.Name, d.Attrs["messageType"], d.Attrs["type"], d.Attrs["element"])
		if seen[k] {
			p.reportAt(d.Pos, fmt.Sprintf("vprop:propertyAlias propertyName=%q", d.Name.Local), "a propertyAlias for %s and this variable type is already defined; remove one", d.Name.Local)
		}
		seen[k] = true
	}
}

func checkPropertySimple(p *pass) {
	d := p.importedDefinitions()
	for _, dc := range p.w.Decls {
		if dc.Tag != "property" {
			continue
		}
		t, isType := dc.Attrs["type"]
		e, isElement := dc.Attrs["element"]
		if isType && d.complex(t, false) || isElement && d.complex(e, true) {
			p.reportAt(dc.Pos, fmt.Sprintf("vprop:property name=%q", dc.Name.Local), "property %s is of a complex type; a property's value is of an XML Schema simple type: type it with one", dc.Name.Local)
		}
	}
}
