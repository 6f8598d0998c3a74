package epr

import (
	"fmt"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/redact"
	"github.com/orchd/orchd/internal/xmlparse"
)

// paramsSep separates the address from its reference parameters in a
// checkpoint.
const paramsSep = "\x00"

// refParams returns self-contained copies of the reference parameters of
// the endpoint reference epr, nil when it has none.
func refParams(epr *etree.Element) []*etree.Element {
	ns := epr.NamespaceURI()
	var out []*etree.Element
	for _, c := range epr.ChildElements() {
		if c.NamespaceURI() != ns || (c.Tag != "ReferenceParameters" && c.Tag != "ReferenceProperties") {
			continue
		}
		for _, p := range c.ChildElements() {
			out = append(out, selfContained(p))
		}
	}
	return out
}

// selfContained returns a copy of el that declares every namespace
// prefix in scope at el that it does not declare itself.
func selfContained(el *etree.Element) *etree.Element {
	cp := el.Copy()
	declared := map[string]bool{}
	for _, a := range cp.Attr {
		if p, ok := nsDeclPrefix(a); ok {
			declared[p] = true
		}
	}
	for e := el.Parent(); e != nil; e = e.Parent() {
		for _, a := range e.Attr {
			if p, ok := nsDeclPrefix(a); ok && !declared[p] {
				declared[p] = true
				cp.Attr = append(cp.Attr, a)
			}
		}
	}
	return cp
}

// nsDeclPrefix returns the prefix a namespace declaration attribute
// declares ("" for the default namespace), and whether a is one.
func nsDeclPrefix(a etree.Attr) (string, bool) {
	switch {
	case a.Space == "xmlns":
		return a.Key, true
	case a.Space == "" && a.Key == "xmlns":
		return "", true
	}
	return "", false
}

// Encode is the checkpoint form of an assigned endpoint: its address,
// and its reference parameters after paramsSep when it has some.
func Encode(addr string, params []*etree.Element) string {
	if len(params) == 0 {
		return addr
	}
	var b strings.Builder
	b.WriteString(addr)
	b.WriteString(paramsSep)
	b.WriteString("<p>")
	ws := xmlparse.WriteSettings()
	for _, p := range params {
		p.WriteTo(&b, &ws)
	}
	b.WriteString("</p>")
	return b.String()
}

// Decode splits what Encode wrote into the address and the
// reference parameters.
func Decode(s string) (string, []*etree.Element, error) {
	addr, xml, ok := strings.Cut(s, paramsSep)
	if !ok {
		return s, nil, nil
	}
	w, err := xmlparse.Stored(xml)
	if err != nil {
		return "", nil, fmt.Errorf("reference parameters of %s: %w", redact.Address(addr), err)
	}
	kids := w.ChildElements()
	out := make([]*etree.Element, len(kids))
	for i, k := range kids {
		out[i] = selfContained(k)
	}
	return addr, out, nil
}

// withRefParams adds copies of params to the wsa:EndpointReference of the
// service-ref sr (serviceRefElement's) as its wsa:ReferenceParameters, and
// returns sr.
func WithParams(sr *etree.Element, params []*etree.Element) *etree.Element {
	if len(params) == 0 {
		return sr
	}
	epr := sr.ChildElements()[0]
	rp := epr.CreateElement("wsa:ReferenceParameters")
	for _, p := range params {
		rp.AddChild(p.Copy())
	}
	return sr
}
