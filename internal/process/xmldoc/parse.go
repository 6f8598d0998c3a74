package xmldoc

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/xmlparse"
)

// Pos is a position in a bundle file.
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// Document is a parsed XML file with element positions.
type Document struct {
	File  string
	Doc   *etree.Document
	Root  *etree.Element
	lines map[*etree.Element]int
}

// SyntaxError is a malformed XML document.
type SyntaxError struct {
	Pos Pos
	Err error
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s: malformed XML: %v", e.Pos, e.Err) }
func (e *SyntaxError) Unwrap() error { return e.Err }

// ErrEmpty is returned for a document with no root element.
var ErrEmpty = errors.New("no root element")

// utf8BOM is the UTF-8 byte order mark. Some editors write it at the
// start of a file; ODE's parsers skipped it, and so does Parse.
const utf8BOM = "\xEF\xBB\xBF"

// TrimBOM returns data without a leading UTF-8 byte order mark.
func TrimBOM(data []byte) []byte { return bytes.TrimPrefix(data, []byte(utf8BOM)) }

// Deploy-time limits on the XML files of a bundle (BPEL, WSDL, XSD,
// deploy.xml, XSLT). etree, which builds the tree orchd works on, checks
// each attribute of an element against those before it: an element with n
// attributes costs n² (100,000 took minutes). Parse refuses a file over a
// limit before etree reads it, with a LimitError naming the file, the
// limit and the line, so a deploy costs time linear in its files. The
// values are those of inbound messages (internal/xmlparse).
const (
	MaxAttrs   = xmlparse.DefaultMaxAttrs   // attributes of one element, namespace declarations not counted
	MaxNSDecls = xmlparse.DefaultMaxNSDecls // namespace declarations of one element
	MaxDepth   = xmlparse.DefaultMaxDepth   // element nesting
)

// LimitError is a bundle file over one of the deploy-time limits.
type LimitError struct {
	Pos Pos
	// Limit names the limit (xmlparse's names: "attributes per element",
	// ...); Max is its value.
	Limit string
	Max   int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: over the deploy-time limit of %d %s", e.Pos, e.Max, e.Limit)
}

// Parse reads data (the content of file) into a Document. A leading UTF-8
// byte order mark is skipped. A file over a deploy-time limit (MaxAttrs,
// MaxNSDecls, MaxDepth) is refused with a *LimitError.
func Parse(file string, data []byte) (*Document, error) {
	data = TrimBOM(data)
	// First pass: the standard decoder gives line numbers and strict
	// well-formedness; record the line of each start element in order.
	dec := xml.NewDecoder(bytes.NewReader(data))
	var lines []int
	depth, roots := 0, 0
	for {
		line, _ := dec.InputPos()
		tok, err := dec.Token()
		if err == io.EOF {
			if roots == 0 {
				return nil, &SyntaxError{Pos: Pos{File: file}, Err: ErrEmpty}
			}
			break
		}
		if err != nil {
			l, _ := dec.InputPos()
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				l = se.Line
				err = errors.New(se.Msg)
			}
			return nil, &SyntaxError{Pos: Pos{File: file, Line: l}, Err: err}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				if roots > 1 {
					return nil, &SyntaxError{Pos: Pos{File: file, Line: line}, Err: fmt.Errorf("second root element <%s>", t.Name.Local)}
				}
			}
			depth++
			if err := checkLimits(file, line, depth, t.Attr); err != nil {
				return nil, err
			}
			// Whitespace before a tag is its own CharData token, so the
			// position before the token is where '<' starts.
			lines = append(lines, line)
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 && len(bytes.TrimSpace(t)) > 0 {
				lead := t[:len(t)-len(bytes.TrimLeft(t, " \t\r\n"))]
				return nil, &SyntaxError{Pos: Pos{File: file, Line: line + bytes.Count(lead, []byte("\n"))}, Err: errors.New("text outside the root element")}
			}
		}
	}
	// Second pass: etree builds the tree we work on.
	doc := xmlparse.NewDocument()
	doc.ReadSettings.Permissive = false
	if err := doc.ReadFromBytes(data); err != nil {
		return nil, &SyntaxError{Pos: Pos{File: file}, Err: err}
	}
	root := doc.Root()
	if root == nil {
		return nil, &SyntaxError{Pos: Pos{File: file}, Err: ErrEmpty}
	}
	d := &Document{File: file, Doc: doc, Root: root, lines: make(map[*etree.Element]int, len(lines))}
	i := 0
	var walk func(e *etree.Element)
	walk = func(e *etree.Element) {
		if i < len(lines) {
			d.lines[e] = lines[i]
		}
		i++
		for _, c := range e.ChildElements() {
			walk(c)
		}
	}
	walk(root)
	return d, nil
}

// checkLimits tests one start tag against the deploy-time limits.
func checkLimits(file string, line, depth int, attrs []xml.Attr) error {
	if depth > MaxDepth {
		return &LimitError{Pos: Pos{File: file, Line: line}, Limit: xmlparse.LimitDepth, Max: MaxDepth}
	}
	if len(attrs) <= MaxNSDecls {
		return nil // within both limits
	}
	decls := 0
	for _, a := range attrs {
		if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
			decls++
		}
	}
	if decls > MaxNSDecls {
		return &LimitError{Pos: Pos{File: file, Line: line}, Limit: xmlparse.LimitNSDecls, Max: MaxNSDecls}
	}
	if len(attrs)-decls > MaxAttrs {
		return &LimitError{Pos: Pos{File: file, Line: line}, Limit: xmlparse.LimitAttrs, Max: MaxAttrs}
	}
	return nil
}

// Pos returns the position of e, which must belong to d (else line 0).
func (d *Document) Pos(e *etree.Element) Pos {
	return Pos{File: d.File, Line: d.lines[e]}
}

// Namespaces returns the namespace declarations in scope at e, prefix to
// URI; the default namespace has key "".
func Namespaces(e *etree.Element) map[string]string {
	m := make(map[string]string)
	for p := e; p != nil; p = p.Parent() {
		for _, a := range p.Attr {
			var prefix string
			switch {
			case a.Space == "xmlns":
				prefix = a.Key
			case a.Space == "" && a.Key == "xmlns":
				prefix = ""
			default:
				continue
			}
			if _, seen := m[prefix]; !seen {
				m[prefix] = a.Value
			}
		}
	}
	if _, ok := m["xml"]; !ok {
		m["xml"] = "http://www.w3.org/XML/1998/namespace"
	}
	return m
}

// ResolveQName resolves a prefixed name ("p:local" or "local") in the scope
// of e. An unprefixed name takes the default namespace when useDefault.
func ResolveQName(e *etree.Element, qname string, useDefault bool) (space, local string, err error) {
	prefix, local := "", qname
	for i := 0; i < len(qname); i++ {
		if qname[i] == ':' {
			prefix, local = qname[:i], qname[i+1:]
			break
		}
	}
	if local == "" {
		return "", "", fmt.Errorf("empty name in %q", qname)
	}
	if prefix == "" && !useDefault {
		return "", local, nil
	}
	uri, ok := lookup(e, prefix)
	if !ok {
		if prefix == "" {
			return "", local, nil
		}
		return "", "", fmt.Errorf("undeclared namespace prefix %q in %q", prefix, qname)
	}
	return uri, local, nil
}

func lookup(e *etree.Element, prefix string) (string, bool) {
	for p := e; p != nil; p = p.Parent() {
		for _, a := range p.Attr {
			if (prefix == "" && a.Space == "" && a.Key == "xmlns") || (prefix != "" && a.Space == "xmlns" && a.Key == prefix) {
				return a.Value, true
			}
		}
	}
	return "", false
}
