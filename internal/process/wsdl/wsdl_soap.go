package wsdl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// soapParts reads where the binding's input or output element io (of
// operation opName) carries the parts of desc: the soap:body parts
// attribute and the soap:header elements. It returns nil when every part
// travels in the body in the message's order, the common case, so the
// envelope codec takes its plain path. A binding orchd cannot honour is an
// error naming the file, line and element.
func soapParts(doc *xmldoc.Document, io *etree.Element, desc *exchange.MessageDesc, opName string) (*exchange.SOAPParts, error) {
	if desc == nil {
		return nil, nil
	}
	fail := func(at *etree.Element, format string, args ...any) error {
		return &xmldoc.CompileError{Pos: doc.Pos(at), Element: at.FullTag(), Err: fmt.Errorf(format, args...)}
	}
	has := func(name string) bool {
		return slices.ContainsFunc(desc.Parts, func(p exchange.PartDesc) bool { return p.Name == name })
	}
	var (
		bodyEl    *etree.Element
		bodyNames []string // the parts attribute, when given
		sp        exchange.SOAPParts
	)
	for _, c := range io.ChildElements() {
		if ns := c.NamespaceURI(); ns != xmldoc.NSSOAP11 && ns != xmldoc.NSSOAP12 {
			continue
		}
		switch c.Tag {
		case "body":
			if a := c.SelectAttr("parts"); a != nil {
				bodyEl = c
				bodyNames = strings.Fields(a.Value)
				if bodyNames == nil {
					bodyNames = []string{}
				}
				for i, n := range bodyNames {
					if !has(n) {
						return nil, fail(c, "parts names %q, which message %s of operation %s %s does not have", n, desc.Name, opName, io.Tag)
					}
					if slices.Contains(bodyNames[:i], n) {
						return nil, fail(c, "parts names %q twice", n)
					}
				}
			}
		case "header":
			hp, err := headerPart(doc, c, desc, opName, io.Tag)
			if err != nil {
				return nil, err
			}
			if slices.ContainsFunc(sp.Headers, func(h exchange.HeaderPart) bool { return h.Name == hp.Name }) {
				return nil, fail(c, "part %q of message %s is bound to a header twice", hp.Name, desc.Name)
			}
			sp.Headers = append(sp.Headers, hp)
		}
	}
	inHeader := func(name string) bool {
		return slices.ContainsFunc(sp.Headers, func(h exchange.HeaderPart) bool { return h.Name == name })
	}
	for _, p := range desc.Parts {
		switch {
		case bodyNames == nil && !inHeader(p.Name):
			sp.Body = append(sp.Body, p)
		case bodyNames == nil:
		case slices.Contains(bodyNames, p.Name) && inHeader(p.Name):
			return nil, fail(bodyEl, "part %q of message %s is in soap:body parts and in a soap:header", p.Name, desc.Name)
		case slices.Contains(bodyNames, p.Name):
			sp.Body = append(sp.Body, p)
		case !inHeader(p.Name):
			return nil, fail(bodyEl, "part %q of message %s of operation %s %s is in neither soap:body parts nor a soap:header", p.Name, desc.Name, opName, io.Tag)
		}
	}
	if len(sp.Headers) == 0 && len(sp.Body) == len(desc.Parts) {
		return nil, nil
	}
	return &sp, nil
}

// headerPart reads a soap:header element of a binding's input or output
// (which, "input" or "output") carrying desc.
func headerPart(doc *xmldoc.Document, h *etree.Element, desc *exchange.MessageDesc, opName, which string) (exchange.HeaderPart, error) {
	fail := func(err error) (exchange.HeaderPart, error) {
		return exchange.HeaderPart{}, &xmldoc.CompileError{Pos: doc.Pos(h), Element: h.FullTag(), Err: err}
	}
	msg, err := resolveAttr(h, "message")
	if err != nil {
		return fail(fmt.Errorf("attribute message: %w", err))
	}
	part := h.SelectAttrValue("part", "")
	if part == "" {
		return fail(fmt.Errorf("missing attribute part"))
	}
	if use := h.SelectAttrValue("use", "literal"); use != "literal" {
		return fail(fmt.Errorf("%w: use=%q (SOAP encoding) at %s", xmldoc.ErrNotSupported, use, doc.Pos(h)))
	}
	if msg != desc.Name {
		return fail(fmt.Errorf("%w: a header part of message %s, not of operation %s's %s message %s, at %s",
			xmldoc.ErrNotSupported, msg, opName, which, desc.Name, doc.Pos(h)))
	}
	i := slices.IndexFunc(desc.Parts, func(p exchange.PartDesc) bool { return p.Name == part })
	if i < 0 {
		return fail(fmt.Errorf("message %s has no part %q", desc.Name, part))
	}
	hp := exchange.HeaderPart{PartDesc: desc.Parts[i]}
	for _, a := range h.Attr {
		if a.Key == "required" && a.NamespaceURI() == xmldoc.NSWSDL {
			hp.Optional = strings.TrimSpace(a.Value) == "false"
		}
	}
	return hp, nil
}
