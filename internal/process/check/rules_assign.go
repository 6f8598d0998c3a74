package check

import (
	"strings"

	"github.com/orchd/orchd/internal/process/ast"
)

// spec is the form of a from-spec or to-spec (section 8.4).
type spec struct {
	el      *ast.Element
	attrs   map[string]bool // unqualified attributes
	literal *ast.Element
	query   *ast.Element
	text    string // the expression, when not another variant
}

func readSpec(e *ast.Element) spec {
	s := spec{el: e, attrs: map[string]bool{}, literal: child(e, "literal"), query: child(e, "query")}
	for _, a := range e.Attrs {
		if a.Space == "" && a.Key != "xmlns" {
			s.attrs[a.Key] = true
		}
	}
	s.text = expression(e)
	return s
}

// copies are the from and to specs of every <copy> of an <assign>.
func (p *pass) copies(f func(cp *ast.Element, from, to spec)) {
	p.each(func(cp *ast.Element) {
		fe, te := child(cp, "from"), child(cp, "to")
		if fe == nil || te == nil {
			return
		}
		f(cp, readSpec(fe), readSpec(te))
	}, "copy")
}

// variant names what is wrong with the form of s, "" when it is one of
// the spec's variants.
func (s spec) variant(isTo bool) string {
	a := s.attrs
	for _, at := range s.el.Attrs {
		if at.Space == "" && at.Key != "xmlns" && !in(at.Key, "variable", "part", "property", "partnerLink", "endpointReference", "expressionLanguage") {
			return "attribute " + at.Key + " belongs to no variant"
		}
	}
	seen := map[string]bool{}
	for _, c := range s.el.Children() {
		if !c.IsBPEL() || c.Tag == "documentation" {
			continue
		}
		if !in(c.Tag, "literal", "query") {
			return "<" + c.Tag + "> belongs to no variant"
		}
		if seen[c.Tag] {
			return "it has more than one <" + c.Tag + ">"
		}
		seen[c.Tag] = true
	}
	switch {
	case s.literal != nil && s.text != "":
		return "a <literal> cannot be combined with an expression"
	case a["endpointReference"] && !in(attr(s.el, "endpointReference"), "myRole", "partnerRole"):
		return "endpointReference is \"myRole\" or \"partnerRole\""
	case a["expressionLanguage"] && s.text == "" && s.literal == nil && s.query == nil && len(a) == 1:
		return "expressionLanguage is set but the expression is empty"
	case s.literal != nil && isTo:
		return "a <to> cannot hold a <literal>"
	case s.literal != nil && (len(a) > 0 || s.query != nil):
		return "a <from> with a <literal> takes no attributes or <query>"
	case a["endpointReference"] && isTo:
		return "endpointReference belongs to a <from partnerLink>"
	case a["partnerLink"] && (a["variable"] || a["part"] || a["property"] || s.query != nil):
		return "partnerLink cannot be combined with variable, part, property or <query>"
	case a["partnerLink"] && !isTo && !a["endpointReference"]:
		return "a <from partnerLink> needs endpointReference=\"myRole\" or \"partnerRole\""
	case a["endpointReference"] && !a["partnerLink"]:
		return "endpointReference needs partnerLink"
	case a["property"] && (!a["variable"] || a["part"] || s.query != nil):
		return "property needs variable and takes no part or <query>"
	case (a["part"] || s.query != nil) && !a["variable"]:
		return "part and <query> need variable"
	case (a["variable"] || a["partnerLink"]) && s.text != "":
		return "an expression cannot be combined with variable or partnerLink"
	case a["expressionLanguage"] && (a["variable"] || a["partnerLink"]):
		return "expressionLanguage belongs to the expression variant"
	case len(a) == 0 && s.literal == nil && s.query == nil && s.text == "":
		return "it is empty"
	}
	return ""
}

func checkCopyVariants(p *pass) {
	p.copies(func(_ *ast.Element, from, to spec) {
		if why := from.variant(false); why != "" {
			p.report(from.el, "this <from> is none of the from-spec variants: %s; use one of variable[/part][query], partnerLink+endpointReference, variable+property, an expression or a literal", why)
		}
		if why := to.variant(true); why != "" {
			p.report(to.el, "this <to> is none of the to-spec variants: %s; use one of variable[/part][query], partnerLink, variable+property or an expression", why)
		}
	})
}

func checkPartOnNonMessage(p *pass) {
	p.copies(func(_ *ast.Element, from, to spec) {
		for _, s := range []spec{from, to} {
			if !s.attrs["part"] || !s.attrs["variable"] {
				continue
			}
			if v := lookupVar(s.el, attr(s.el, "variable")); v != nil && v.msg.IsZero() && (!v.element.IsZero() || !v.xsType.IsZero()) {
				p.report(s.el, "variable %q is not of a message type, so it has no parts; remove part (use a <query> for a path in it)", v.name)
			}
		}
	})
}

// checkRole reports a partnerLink spec whose partner link lacks the role
// it needs.
func (p *pass) checkRole(s spec, role string) {
	pl := lookupDecl(s.el, "partnerLinks", "partnerLink", attr(s.el, "partnerLink"))
	if pl != nil && attr(pl, role) == "" {
		p.report(s.el, "partnerLink %q has no %s, so this %s cannot use its endpoint; add the role to the partnerLink or use another", attr(pl, "name"), role, "<"+s.el.Tag+">")
	}
}

func checkFromMyRole(p *pass) {
	p.copies(func(_ *ast.Element, from, _ spec) {
		if from.attrs["partnerLink"] && attr(from.el, "endpointReference") == "myRole" {
			p.checkRole(from, "myRole")
		}
	})
}

func checkFromPartnerRole(p *pass) {
	p.copies(func(_ *ast.Element, from, _ spec) {
		if from.attrs["partnerLink"] && attr(from.el, "endpointReference") == "partnerRole" {
			p.checkRole(from, "partnerRole")
		}
	})
}

func checkToPartnerLink(p *pass) {
	p.copies(func(_ *ast.Element, _, to spec) {
		if to.attrs["partnerLink"] {
			p.checkRole(to, "partnerRole")
		}
	})
}

func checkLiteral(p *pass) {
	p.each(func(e *ast.Element) {
		l, ok := e.Node().(*ast.Literal)
		if !ok {
			return
		}
		elems, text := l.Elements, l.HasText
		if elems > 1 || (elems == 1 && text) {
			p.report(e, "a <literal> must hold one element or only text; it holds %d elements%s, wrap them in one element", elems, map[bool]string{true: " and text", false: ""}[text])
		}
	}, "literal")
}

// wholeMessage reports whether s selects a whole variable of a WSDL
// message type, and its type; known is false when s is an expression the
// scanner cannot tell about.
func wholeMessage(s spec) (msg qname, whole, known bool) {
	a := s.attrs
	if a["variable"] && !a["part"] && !a["property"] && s.query == nil {
		if v := lookupVar(s.el, attr(s.el, "variable")); v != nil {
			if v.msg.IsZero() && v.element.IsZero() && v.xsType.IsZero() {
				return qname{}, false, false // implicit, untyped
			}
			return v.msg, !v.msg.IsZero(), true
		}
		return qname{}, false, false
	}
	if s.text != "" && len(a) <= 1 && s.literal == nil {
		if strings.HasPrefix(s.text, "$") && isNCName(s.text[1:]) {
			if v := lookupVar(s.el, s.text[1:]); v != nil && !v.msg.IsZero() {
				return v.msg, true, true
			}
		}
		return qname{}, false, false
	}
	return qname{}, false, true
}

func checkCopyMessageTypes(p *pass) {
	p.copies(func(cp *ast.Element, from, to spec) {
		fm, fw, fk := wholeMessage(from)
		tm, tw, tk := wholeMessage(to)
		switch {
		case !fk || !tk:
		case fw && tw && fm != tm:
			from, to := compared(fm, tm)
			p.report(cp, "this <copy> assigns a %s message to a %s message variable; message variables are copied only to variables of the same message type", from, to)
		case fw != tw:
			p.report(cp, "this <copy> assigns between a whole message variable and something that is not one; copy part by part (part=\"...\") instead")
		}
	})
}

func checkKeepSrcElementName(p *pass) {
	p.copies(func(cp *ast.Element, from, to spec) {
		if !hasAttr(cp, "keepSrcElementName") {
			return
		}
		notEII := func(s spec) bool {
			if _, whole, _ := wholeMessage(s); whole {
				return true
			}
			if s.attrs["property"] {
				return true
			}
			return s.literal != nil && len(s.literal.Children()) == 0
		}
		if notEII(from) || notEII(to) || to.attrs["partnerLink"] {
			p.report(cp, "keepSrcElementName applies only when both <from> and <to> select an element; remove the attribute")
		}
	})
}
