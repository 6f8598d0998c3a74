package xsd

import "strings"

// Field is an element declaration as a form shows it: its name, how
// often it occurs, and either its simple value (Kind, Enum) or the
// elements of its complex content (Children), in document order.
// Outline builds it; it describes, it does not validate (Validate does).
type Field struct {
	Name QName
	// Min and Max are the occurrences (Max -1: unbounded) where its
	// parent's content model puts it (1, 1 for the root).
	Min, Max int
	// Kind is the simple content's built-in base: "string", "boolean",
	// "decimal", "integer", "float", "double", "date", "dateTime", "time",
	// or another primitive's name; "" for complex content.
	Kind string
	// Enum are the simple content's enumerated values, if restricted to
	// some.
	Enum []string
	// Children are complex content's elements (a choice's alternatives
	// each with Min 0, wildcards left out).
	Children []*Field
	// Choice says Children are alternatives (one of them is given).
	Choice bool
	// Truncated says that content deeper than Outline's depth was left
	// out (a recursive type).
	Truncated bool
}

// maxOutlineDepth bounds Outline on recursive types.
const maxOutlineDepth = 8

// Outline describes element declaration d (from Element) for a form.
func (s *Set) Outline(d *Element) *Field {
	return outlineElem(d, 1, 1, 0)
}

func outlineElem(d *Element, min, max, depth int) *Field {
	f := &Field{Name: d.Name, Min: min, Max: max}
	t := d.typ
	if t == nil {
		f.Kind = "string"
		return f
	}
	if t.simple != nil {
		f.Kind, f.Enum = simpleKind(t.simple)
		return f
	}
	if t.content == nil {
		return f
	}
	if depth >= maxOutlineDepth {
		f.Truncated = true
		return f
	}
	outlineParticle(f, t.content, 1, 1, false, depth+1)
	return f
}

// outlineParticle adds p's elements to f's children, with the
// occurrences of the particles around them folded in.
func outlineParticle(f *Field, p *particle, min, max int, inChoice bool, depth int) {
	mn, mx := min*p.min, mulMax(max, p.max)
	if inChoice {
		mn = 0
	}
	switch p.kind {
	case pElem:
		f.Children = append(f.Children, outlineElem(p.elem, mn, mx, depth))
	case pSeq, pAll:
		for _, k := range p.kids {
			outlineParticle(f, k, mn, mx, inChoice, depth)
		}
	case pChoice:
		if !inChoice {
			f.Choice = len(p.kids) > 1
		}
		for _, k := range p.kids {
			outlineParticle(f, k, mn, mx, len(p.kids) > 1 || inChoice, depth)
		}
	}
}

func mulMax(a, b int) int {
	if a < 0 || b < 0 {
		return -1
	}
	return a * b
}

// simpleKind is st's built-in base kind and enumeration.
func simpleKind(st *simpleType) (string, []string) {
	var enum []string
	kind := ""
	for x := st; x != nil; x = x.base {
		if enum == nil && x.f != nil && len(x.f.enum) > 0 {
			enum = x.f.enum
		}
		if kind == "" && x.name.Space == NS {
			switch n := x.name.Local; {
			case strings.HasSuffix(n, "nteger") || n == "long" || n == "int" || n == "short" || n == "byte" || strings.HasPrefix(n, "unsigned"):
				kind = "integer"
			case n != "anySimpleType":
				kind = n
			}
		}
	}
	if kind == "" {
		kind = st.prim
	}
	if st.variety != atomic {
		kind = "string"
	}
	return kind, enum
}
