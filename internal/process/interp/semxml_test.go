package interp_test

import (
	"fmt"
	"sort"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// Namespaces a case's payloads and fault names may use without
// declaring them.
const (
	nsE2E  = "urn:e2e"
	nsBPEL = "http://docs.oasis-open.org/wsbpel/2.0/process/executable"
)

// semXML parses a case's XML payload. Its root declares, unless it
// declares them itself, urn:e2e as the default namespace and as prefix
// tns, so <req><id>1</id></req> is a tns:req.
func semXML(x string) (*etree.Element, error) {
	x = strings.TrimSpace(x)
	if !strings.HasPrefix(x, "<") {
		return nil, fmt.Errorf("payload %q is not XML", x)
	}
	end := strings.IndexAny(x, " />")
	if end < 0 {
		return nil, fmt.Errorf("payload %q is not XML", x)
	}
	var decl string
	head := x[:strings.Index(x, ">")+1]
	if !strings.Contains(head, `xmlns="`) {
		decl += ` xmlns="` + nsE2E + `"`
	}
	if !strings.Contains(head, `xmlns:tns="`) {
		decl += ` xmlns:tns="` + nsE2E + `"`
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromString(x[:end] + decl + x[end:]); err != nil {
		return nil, fmt.Errorf("payload %q: %v", x, err)
	}
	if doc.Root() == nil {
		return nil, fmt.Errorf("payload %q: no element", x)
	}
	return doc.Root(), nil
}

// semQName resolves a fault name written tns:local (urn:e2e),
// bpel:local (the WS-BPEL standard faults) or {uri}local.
func semQName(s string) (exchange.QName, error) {
	if strings.HasPrefix(s, "{") {
		uri, local, ok := strings.Cut(s[1:], "}")
		if ok && local != "" {
			return exchange.QName{Space: uri, Local: local}, nil
		}
	}
	prefix, local, ok := strings.Cut(s, ":")
	switch {
	case ok && prefix == "tns" && local != "":
		return exchange.QName{Space: nsE2E, Local: local}, nil
	case ok && prefix == "bpel" && local != "":
		return exchange.QName{Space: nsBPEL, Local: local}, nil
	}
	return exchange.QName{}, fmt.Errorf("fault name %q: want tns:local, bpel:local or {uri}local", s)
}

// canonXML renders e with resolved names, attributes sorted, without
// namespace declarations and whitespace-only text: two trees that say
// the same render the same, <{uri}local {uri}attr="v">children</>.
func canonXML(e *etree.Element) string {
	var b strings.Builder
	var walk func(e *etree.Element)
	walk = func(e *etree.Element) {
		fmt.Fprintf(&b, "<{%s}%s", e.NamespaceURI(), e.Tag)
		var attrs []string
		for _, a := range e.Attr {
			if a.Space == "xmlns" || (a.Space == "" && a.Key == "xmlns") {
				continue
			}
			sp := ""
			if a.Space != "" {
				sp = "{" + a.NamespaceURI() + "}"
			}
			attrs = append(attrs, fmt.Sprintf(" %s%s=%q", sp, a.Key, a.Value))
		}
		sort.Strings(attrs)
		b.WriteString(strings.Join(attrs, ""))
		b.WriteString(">")
		for _, c := range e.Child {
			switch t := c.(type) {
			case *etree.Element:
				walk(t)
			case *etree.CharData:
				if strings.TrimSpace(t.Data) != "" {
					b.WriteString(t.Data)
				}
			}
		}
		b.WriteString("</>")
	}
	if e == nil {
		return "<nil>"
	}
	walk(e)
	return b.String()
}
