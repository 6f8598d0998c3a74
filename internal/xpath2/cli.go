package xpath2

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/beevik/etree"
)

// This file is what "orchd xpath" runs: one expression evaluated with a
// context document, namespaces and variables read from files, the result
// printed one item a line as TYPE<TAB>VALUE. TestW3C evaluates the W3C
// cases and formats their results through the same Query and FormatItem.

// Input is a value read from a file for the command line: an XML document
// (Doc set) or plain text.
type Input struct {
	Doc  *etree.Document
	Text string
}

// ReadInput reads path. A file whose first character after blanks (and
// a byte order mark) is '<' must be well-formed XML and is a document;
// any other file is text, its one trailing newline dropped. An error is
// an *Error with code FODC0002 naming the file.
func ReadInput(path string) (Input, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Input{}, &Error{Code: "FODC0002", Msg: "reading " + path, Err: err}
	}
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '<' {
		s := strings.TrimSuffix(string(b), "\n")
		return Input{Text: strings.TrimSuffix(s, "\r")}, nil
	}
	doc, err := ParseDocument(b)
	if err != nil {
		return Input{}, &Error{Code: "FODC0002", Msg: path, Err: err}
	}
	return Input{Doc: doc}, nil
}

// ParseDocument parses XML text into a document.
func ParseDocument(b []byte) (*etree.Document, error) {
	doc := etree.NewDocument()
	doc.ReadSettings.Permissive = true
	if err := doc.ReadFromBytes(b); err != nil {
		return nil, fmt.Errorf("not well-formed XML: %w", err)
	}
	if doc.Root() == nil {
		return nil, errors.New("not well-formed XML: no document element")
	}
	// Blanks outside the document element are no text nodes (XML 1.0
	// section 2.10: they are not part of the document's content).
	for _, t := range append([]etree.Token(nil), doc.Child...) {
		if cd, ok := t.(*etree.CharData); ok && strings.TrimSpace(cd.Data) == "" {
			doc.RemoveChild(cd)
		}
	}
	return doc, nil
}

// Item is the value an input binds: a document node or an xs:string.
func (in Input) Item() Item {
	if in.Doc != nil {
		return NewDocument(in.Doc)
	}
	return Str(in.Text)
}

// Query is one XPath 2.0 evaluation as the command line describes it.
type Query struct {
	Expr string
	// Namespaces maps prefixes to URIs; the "" key is the default
	// element namespace.
	Namespaces map[string]string
	// Context is the context item; nil leaves it absent (XPDY0002 for
	// an expression that needs it).
	Context Item
	// Vars binds $name (no namespace) to a value.
	Vars map[string]Sequence
	// ImplicitTimezone in minutes east of UTC.
	ImplicitTimezone int
	// BaseURI is the static base URI ("" for none).
	BaseURI string
	// Functions is the function library; nil means the standard one.
	Functions *FunctionLibrary
	// MaxItems and MaxStringBytes are DynamicContext's bounds.
	MaxItems, MaxStringBytes int
}

// Evaluate compiles and runs the query.
func (q *Query) Evaluate() (Sequence, error) {
	sc := &StaticContext{Namespaces: map[string]string{}, BaseURI: q.BaseURI, Functions: q.Functions}
	for k, v := range q.Namespaces {
		if k == "" {
			sc.DefaultElementNS = v
		} else {
			sc.Namespaces[k] = v
		}
	}
	sc.Variables = func(ns, local string) bool { _, ok := q.Vars[local]; return ns == "" && ok }
	e, err := Compile(q.Expr, sc)
	if err != nil {
		return nil, err
	}
	return e.Evaluate(&DynamicContext{
		Item:             q.Context,
		ImplicitTimezone: q.ImplicitTimezone,
		MaxItems:         q.MaxItems,
		MaxStringBytes:   q.MaxStringBytes,
		Variables: func(ns, local string) (Sequence, bool) {
			v, ok := q.Vars[local]
			return v, ok && ns == ""
		},
	})
}

// TypeName is the XDM type name of an item: xs:integer, xs:string, ...
// for atomic values, element(), attribute(), text(), document-node(),
// comment() or processing-instruction() for nodes.
func TypeName(it Item) string {
	if n, ok := it.(Node); ok {
		switch n.Kind() {
		case DocumentNode:
			return "document-node()"
		case ElementNode:
			return "element()"
		case AttributeNode:
			return "attribute()"
		case TextNode:
			return "text()"
		case CommentNode:
			return "comment()"
		case PINode:
			return "processing-instruction()"
		}
		return "node()"
	}
	if a, ok := it.(Atomic); ok {
		return a.Type().String()
	}
	return "item()"
}

// FormatItem is an item's output line without its newline:
// TYPE<TAB>VALUE, VALUE the string value with backslashes, newlines,
// carriage returns and tabs escaped (\\, \n, \r, \t).
func FormatItem(it Item) string {
	var v string
	switch t := it.(type) {
	case Node:
		v = t.StringValue()
	case Atomic:
		v = t.String()
	}
	return TypeName(it) + "\t" + escapeLine(v)
}

// ErrorCode is the prefixed W3C code of an evaluation error (err:XPTY0004);
// an error that carries none is err:FOER0000.
func ErrorCode(err error) string {
	var xe *Error
	if errors.As(err, &xe) && xe.Code != "" {
		return "err:" + xe.Code
	}
	return "err:FOER0000"
}

// FormatError is the output line of an error: error<TAB>CODE<TAB>message.
func FormatError(err error) string {
	msg := err.Error()
	var xe *Error
	if errors.As(err, &xe) && xe.Code != "" {
		msg = strings.TrimPrefix(msg, xe.Code+": ")
	}
	return "error\t" + ErrorCode(err) + "\t" + escapeLine(msg)
}

// WriteResult prints a result, one line an item (nothing for the empty
// sequence), or err's line when err is not nil.
func WriteResult(w io.Writer, seq Sequence, err error) error {
	var b strings.Builder
	if err != nil {
		b.WriteString(FormatError(err))
		b.WriteByte('\n')
	} else {
		for _, it := range seq {
			b.WriteString(FormatItem(it))
			b.WriteByte('\n')
		}
	}
	_, werr := io.WriteString(w, b.String())
	return werr
}

var lineEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`, "\t", `\t`)

func escapeLine(s string) string {
	if !strings.ContainsAny(s, "\\\n\r\t") {
		return s
	}
	return lineEscaper.Replace(s)
}
