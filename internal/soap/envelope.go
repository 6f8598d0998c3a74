package soap

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/xmlparse"
)

// Envelope namespaces.
const (
	// NS11 is the SOAP 1.1 envelope namespace.
	NS11 = "http://schemas.xmlsoap.org/soap/envelope/"
	// NS12 is the SOAP 1.2 envelope namespace.
	NS12 = "http://www.w3.org/2003/05/soap-envelope"
)

// Media types of SOAP messages.
const (
	contentType11 = "text/xml; charset=utf-8"
	contentType12 = "application/soap+xml; charset=utf-8"
)

// Envelope is a decoded SOAP envelope. Its header and body elements are
// detached from the parsed document and self-contained.
type Envelope struct {
	// Version is the SOAP version given by the envelope namespace.
	Version exchange.SOAPVersion
	// Headers are the child elements of the Header, if any.
	Headers []*etree.Element
	// Body are the child elements of the Body.
	Body []*etree.Element
}

// envNS returns the envelope namespace of version v.
func envNS(v exchange.SOAPVersion) string {
	if v == exchange.SOAP12 {
		return NS12
	}
	return NS11
}

// envPrefix returns the prefix the encoder uses for the envelope namespace.
func envPrefix(v exchange.SOAPVersion) string {
	if v == exchange.SOAP12 {
		return "env"
	}
	return "soapenv"
}

// contentType returns the HTTP media type of version v (without action).
func contentType(v exchange.SOAPVersion) string {
	if v == exchange.SOAP12 {
		return contentType12
	}
	return contentType11
}

// DecodeEnvelope reads a whole SOAP 1.1 or 1.2 envelope from r, within
// the default Limits. Errors wrap ErrMalformed (with the parser's line),
// ErrLimit, ErrNotEnvelope, ErrVersionMismatch or ErrNoBody, or the
// reader's error.
func DecodeEnvelope(r io.Reader) (*Envelope, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("soap: read envelope: %w", err)
	}
	return decodeEnvelopeBytes(data, Limits{})
}

// decodeEnvelopeBytes parses data as an envelope within lim. The result
// does not reference data.
func decodeEnvelopeBytes(data []byte, lim Limits) (*Envelope, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: empty document", ErrMalformed)
	}
	doc, err := parseTree(data, lim)
	if err != nil {
		return nil, parseError(err)
	}
	var root *etree.Element
	for _, c := range doc.Child {
		switch t := c.(type) {
		case *etree.Element:
			if root != nil {
				return nil, fmt.Errorf("%w: more than one document element", ErrMalformed)
			}
			root = t
		case *etree.CharData:
			if !t.IsWhitespace() {
				return nil, fmt.Errorf("%w: text outside the document element", ErrMalformed)
			}
		}
	}
	if root == nil {
		return nil, fmt.Errorf("%w: no document element", ErrMalformed)
	}
	if root.Tag != "Envelope" {
		return nil, fmt.Errorf("%w: document element is {%s}%s", ErrNotEnvelope, root.NamespaceURI(), root.Tag)
	}
	env := &Envelope{}
	ns := root.NamespaceURI()
	switch ns {
	case NS11:
		env.Version = exchange.SOAP11
	case NS12:
		env.Version = exchange.SOAP12
	default:
		return nil, fmt.Errorf("%w: envelope namespace %q", ErrVersionMismatch, ns)
	}
	header, body, err := envelopeParts(root, ns)
	if err != nil {
		return nil, err
	}
	if header != nil {
		env.Headers = detachChildren(header)
	}
	env.Body = detachChildren(body)
	return env, nil
}

// envelopeParts returns the Header (nil: none) and the Body of
// envelope root: an optional Header, then the Body, and no other
// element (SOAP 1.2 part 1 section 5.1; WS-I Basic Profile R1011 for
// SOAP 1.1, which the 1.1 note left open to elements after the Body). A
// second Body, or anything before or after it, would make which Body a
// message means a matter of which parser reads it.
func envelopeParts(root *etree.Element, ns string) (header, body *etree.Element, err error) {
	for i, c := range root.ChildElements() {
		name := c.Tag
		if c.NamespaceURI() != ns {
			name = "{" + c.NamespaceURI() + "}" + c.Tag
		}
		switch {
		case c.NamespaceURI() == ns && c.Tag == "Header" && i == 0:
			header = c
		case c.NamespaceURI() == ns && c.Tag == "Body" && body == nil:
			body = c
		case body != nil:
			return nil, nil, fmt.Errorf("%w: Envelope child %d <%s> after the Body (an Envelope holds an optional Header, then one Body, and nothing else)", ErrMalformed, i+1, name)
		default:
			return nil, nil, fmt.Errorf("%w: Envelope child %d <%s> before the Body (an Envelope holds an optional Header, then one Body, and nothing else)", ErrMalformed, i+1, name)
		}
	}
	if body == nil {
		return nil, nil, ErrNoBody
	}
	return header, body, nil
}

// parseError turns a parse failure into an error wrapping ErrMalformed
// (with the line) or ErrLimit (naming the limit and its value).
func parseError(err error) error {
	var le *xmlparse.LimitError
	if errors.As(err, &le) {
		return fmt.Errorf("%w: %w", ErrLimit, err)
	}
	return fmt.Errorf("%w: %w", ErrMalformed, err)
}

// detachChildren detaches the child elements of parent and makes each one
// self-contained. Other child tokens (whitespace, comments) stay behind.
func detachChildren(parent *etree.Element) []*etree.Element {
	kids := parent.ChildElements()
	if len(kids) == 0 {
		return nil
	}
	scope := inScopeDecls(parent)
	for _, k := range kids {
		addDecls(k, scope)
	}
	// Remove from the end: each removal reindexes the following tokens.
	for i := len(parent.Child) - 1; i >= 0; i-- {
		if _, ok := parent.Child[i].(*etree.Element); ok {
			parent.RemoveChildAt(i)
		}
	}
	return kids
}

// copyChildren returns self-contained copies of the child elements of
// parent.
func copyChildren(parent *etree.Element) []*etree.Element {
	kids := parent.ChildElements()
	if len(kids) == 0 {
		return nil
	}
	scope := inScopeDecls(parent)
	out := make([]*etree.Element, len(kids))
	for i, k := range kids {
		out[i] = k.Copy()
		addDecls(out[i], scope)
	}
	return out
}

// detach removes el from its parent after making it self-contained.
func detach(el *etree.Element) *etree.Element {
	p := el.Parent()
	if p == nil {
		return el
	}
	addDecls(el, inScopeDecls(p))
	p.RemoveChild(el)
	return el
}

// inScopeDecls returns the namespace declarations in scope at el (its own
// and its ancestors'), nearest first, one per prefix ("" for the default
// namespace).
func inScopeDecls(el *etree.Element) []etree.Attr {
	var decls []etree.Attr
	var seen map[string]bool // once there are more than a few
	for e := el; e != nil; e = e.Parent() {
		for _, a := range e.Attr {
			prefix, ok := declPrefix(a)
			if !ok {
				continue
			}
			switch {
			case seen != nil:
				if seen[prefix] {
					continue
				}
				seen[prefix] = true
			case hasDecl(decls, prefix):
				continue
			case len(decls) == smallDecls:
				seen = make(map[string]bool, 2*smallDecls)
				for _, d := range decls {
					p, _ := declPrefix(d)
					seen[p] = true
				}
				seen[prefix] = true
			}
			decls = append(decls, a)
		}
	}
	return decls
}

// smallDecls is the number of declarations up to which inScopeDecls and
// addDecls compare prefixes pairwise; above it they use a set.
const smallDecls = 8

// addDecls copies onto el each declaration of decls for a prefix el does not
// declare itself.
func addDecls(el *etree.Element, decls []etree.Attr) {
	if len(decls) == 0 {
		return
	}
	own := len(el.Attr)
	if len(decls) > 1 {
		el.Attr = slices.Grow(el.Attr, len(decls))
	}
	var declared map[string]bool
	if own > smallDecls && len(decls) > 1 {
		declared = make(map[string]bool)
		for _, a := range el.Attr {
			if p, ok := declPrefix(a); ok {
				declared[p] = true
			}
		}
	}
	for _, d := range decls {
		prefix, _ := declPrefix(d)
		if declared != nil {
			if declared[prefix] {
				continue
			}
		} else if hasDecl(el.Attr[:own], prefix) {
			continue
		}
		el.Attr = append(el.Attr, etree.Attr{Space: d.Space, Key: d.Key, Value: d.Value})
	}
}

// declPrefix reports whether a is a namespace declaration and for which
// prefix.
func declPrefix(a etree.Attr) (string, bool) {
	switch {
	case a.Space == "xmlns":
		return a.Key, true
	case a.Space == "" && a.Key == "xmlns":
		return "", true
	}
	return "", false
}

func hasDecl(attrs []etree.Attr, prefix string) bool {
	for _, a := range attrs {
		if p, ok := declPrefix(a); ok && p == prefix {
			return true
		}
	}
	return false
}

// lookupPrefix resolves prefix in the scope of el.
func lookupPrefix(el *etree.Element, prefix string) (string, bool) {
	if prefix == "xml" {
		return "http://www.w3.org/XML/1998/namespace", true
	}
	for e := el; e != nil; e = e.Parent() {
		for _, a := range e.Attr {
			if p, ok := declPrefix(a); ok && p == prefix {
				return a.Value, true
			}
		}
	}
	return "", false
}

// qnameOf returns the expanded name of el.
func qnameOf(el *etree.Element) exchange.QName {
	return exchange.QName{Space: el.NamespaceURI(), Local: el.Tag}
}

// writeSettings are the settings used to serialize elements (writeElement
// writes the same bytes). It is never modified.
var writeSettings = xmlparse.WriteSettings()

// EncodeEnvelope writes a SOAP envelope of version v holding the header
// elements (no Header is written when there are none) and the body
// elements. The elements are serialized as they are, so they must be
// self-contained; they are not modified.
func EncodeEnvelope(w io.Writer, v exchange.SOAPVersion, headers, body []*etree.Element) error {
	return writeEnvelope(w, v, headers, func(xw etree.Writer) {
		for _, b := range body {
			writeElement(xw, b)
		}
	})
}

// writeEnvelope writes an envelope whose body content is produced by
// writeBody.
func writeEnvelope(w io.Writer, v exchange.SOAPVersion, headers []*etree.Element, writeBody func(etree.Writer)) error {
	xw, ok := w.(etree.Writer)
	var bw *bufio.Writer
	if !ok {
		bw = bufio.NewWriter(w)
		xw = bw
	}
	p := envPrefix(v)
	xw.WriteString("<")
	xw.WriteString(p)
	xw.WriteString(":Envelope xmlns:")
	xw.WriteString(p)
	xw.WriteString(`="`)
	xw.WriteString(envNS(v))
	xw.WriteString(`">`)
	if len(headers) > 0 {
		writeTag(xw, p, "Header", false)
		for _, h := range headers {
			writeElement(xw, h)
		}
		writeTag(xw, p, "Header", true)
	}
	writeTag(xw, p, "Body", false)
	writeBody(xw)
	writeTag(xw, p, "Body", true)
	writeTag(xw, p, "Envelope", true)
	if bw != nil {
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("soap: write envelope: %w", err)
		}
	}
	return nil
}

// writeTag writes <prefix:local> or </prefix:local>.
func writeTag(w etree.Writer, prefix, local string, end bool) {
	if end {
		w.WriteString("</")
	} else {
		w.WriteString("<")
	}
	if prefix != "" {
		w.WriteString(prefix)
		w.WriteString(":")
	}
	w.WriteString(local)
	w.WriteString(">")
}

// writeText writes s escaped as character data or as a double-quoted
// attribute value.
func writeText(w etree.Writer, s string) {
	// xml.EscapeText only fails when w does.
	_ = xml.EscapeText(w, []byte(s))
}

// FaultCode is the class of a SOAP fault. Its wire form depends on the SOAP
// version.
type FaultCode int

const (
	// FaultServer is Server (SOAP 1.1) or Receiver (SOAP 1.2).
	FaultServer FaultCode = iota
	// FaultClient is Client (SOAP 1.1) or Sender (SOAP 1.2).
	FaultClient
	// FaultVersionMismatch is VersionMismatch.
	FaultVersionMismatch
	// FaultMustUnderstand is MustUnderstand: a header block marked
	// mustUnderstand was not understood.
	FaultMustUnderstand
)

// local returns the local name of the fault code in version v.
func (c FaultCode) local(v exchange.SOAPVersion) string {
	switch c {
	case FaultClient:
		if v == exchange.SOAP12 {
			return "Sender"
		}
		return "Client"
	case FaultVersionMismatch:
		return "VersionMismatch"
	case FaultMustUnderstand:
		return "MustUnderstand"
	default:
		if v == exchange.SOAP12 {
			return "Receiver"
		}
		return "Server"
	}
}

// String returns the SOAP 1.1 name of the code.
func (c FaultCode) String() string { return c.local(exchange.SOAP11) }

// Fault is a SOAP fault as found in a response body.
type Fault struct {
	// Code is the fault class (FaultServer when unrecognized).
	Code FaultCode
	// CodeValue is the fault code as written (faultcode or Code/Value text).
	CodeValue string
	// CodeName is the fault code resolved to a QName; its Space is empty
	// when the prefix is not declared.
	CodeName exchange.QName
	// Reason is the faultstring or the first Reason/Text.
	Reason string
	// Detail holds the child elements of detail (Detail), self-contained.
	Detail []*etree.Element
}

// Error describes the fault.
func (f *Fault) Error() string {
	return "SOAP fault " + f.CodeValue + ": " + f.Reason
}

// EncodeFault writes a SOAP fault envelope of version v with the given code,
// reason and detail elements (none: no detail is written). The detail
// elements must be self-contained; they are not modified.
func EncodeFault(w io.Writer, v exchange.SOAPVersion, code FaultCode, reason string, detail []*etree.Element) error {
	return encodeFault(w, v, nil, code, reason, detail)
}

// encodeFault is EncodeFault with header blocks (a SOAP 1.2
// MustUnderstand fault's NotUnderstood blocks).
func encodeFault(w io.Writer, v exchange.SOAPVersion, headers []*etree.Element, code FaultCode, reason string, detail []*etree.Element) error {
	return writeEnvelope(w, v, headers, func(xw etree.Writer) {
		p := envPrefix(v)
		writeTag(xw, p, "Fault", false)
		if v == exchange.SOAP12 {
			writeTag(xw, p, "Code", false)
			writeTag(xw, p, "Value", false)
			xw.WriteString(p + ":" + code.local(v))
			writeTag(xw, p, "Value", true)
			writeTag(xw, p, "Code", true)
			writeTag(xw, p, "Reason", false)
			xw.WriteString("<" + p + `:Text xml:lang="en">`)
			writeText(xw, reason)
			writeTag(xw, p, "Text", true)
			writeTag(xw, p, "Reason", true)
			if len(detail) > 0 {
				writeTag(xw, p, "Detail", false)
				for _, d := range detail {
					writeElement(xw, d)
				}
				writeTag(xw, p, "Detail", true)
			}
		} else {
			xw.WriteString("<faultcode>" + p + ":" + code.local(v) + "</faultcode><faultstring>")
			writeText(xw, reason)
			xw.WriteString("</faultstring>")
			if len(detail) > 0 {
				xw.WriteString("<detail>")
				for _, d := range detail {
					writeElement(xw, d)
				}
				xw.WriteString("</detail>")
			}
		}
		writeTag(xw, p, "Fault", true)
	})
}

// Fault returns the fault the envelope carries, or nil when its body is not
// a single Fault element. The detail elements are self-contained copies;
// the envelope is not changed.
func (e *Envelope) Fault() *Fault {
	if len(e.Body) != 1 {
		return nil
	}
	fe := e.Body[0]
	ns := envNS(e.Version)
	if fe.Tag != "Fault" || fe.NamespaceURI() != ns {
		return nil
	}
	f := &Fault{}
	var codeEl *etree.Element
	if e.Version == exchange.SOAP12 {
		codeEl = fe.FindElement("./Code/Value")
		if r := fe.FindElement("./Reason/Text"); r != nil {
			f.Reason = r.Text()
		}
		if d := fe.SelectElement("Detail"); d != nil {
			f.Detail = copyChildren(d)
		}
	} else {
		codeEl = fe.SelectElement("faultcode")
		if r := fe.SelectElement("faultstring"); r != nil {
			f.Reason = r.Text()
		}
		if d := fe.SelectElement("detail"); d != nil {
			f.Detail = copyChildren(d)
		}
	}
	if codeEl != nil {
		f.CodeValue = strings.TrimSpace(codeEl.Text())
		prefix, local, ok := strings.Cut(f.CodeValue, ":")
		if !ok {
			local, prefix = prefix, ""
		}
		uri, _ := lookupPrefix(codeEl, prefix)
		f.CodeName = exchange.QName{Space: uri, Local: local}
		if uri == ns || uri == "" {
			local, _, _ = strings.Cut(local, ".") // SOAP 1.1 Client.Auth and the like
			switch local {
			case "Client", "Sender":
				f.Code = FaultClient
			case "VersionMismatch":
				f.Code = FaultVersionMismatch
			case "MustUnderstand":
				f.Code = FaultMustUnderstand
			}
		}
	}
	return f
}
