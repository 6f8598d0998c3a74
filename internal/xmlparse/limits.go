package xmlparse

import "fmt"

// Default limits, used for the zero fields of Limits.
const (
	DefaultMaxDepth       = 1000
	DefaultMaxAttrs       = 1000
	DefaultMaxNSDecls     = 100
	DefaultMaxElements    = 100_000
	DefaultMaxValueBytes  = 1 << 20
	DefaultMaxNameBytes   = 1024
	DefaultMaxHeaderBytes = 64 << 10
)

// Limits bound what one document may cost. A zero field means its default;
// a negative one means no limit.
type Limits struct {
	// MaxDepth bounds element nesting (the document element is at depth
	// 1). Default DefaultMaxDepth.
	MaxDepth int
	// MaxAttrs bounds the attributes of one element, not counting
	// namespace declarations. Default DefaultMaxAttrs.
	MaxAttrs int
	// MaxNSDecls bounds the namespace declarations (xmlns, xmlns:p) of one
	// element. Default DefaultMaxNSDecls.
	MaxNSDecls int
	// MaxElements bounds the elements of a document. Default
	// DefaultMaxElements.
	MaxElements int
	// MaxValueBytes bounds the length of one text run (between two tags),
	// CDATA section, comment, processing instruction or attribute value,
	// in bytes as written (a reference counts its own length).
	// Default DefaultMaxValueBytes.
	MaxValueBytes int
	// MaxNameBytes bounds the length of an element or attribute name
	// (prefix included) and of a processing instruction target. Default
	// DefaultMaxNameBytes.
	MaxNameBytes int
	// MaxHeaderBytes bounds the size of a SOAP Header, from its start tag
	// to its end tag. The parser does not apply it (it knows no SOAP); the
	// envelope decoder does. Default DefaultMaxHeaderBytes.
	MaxHeaderBytes int
}

// Names of the limits, as LimitError.Limit holds them.
const (
	LimitDepth       = "depth"
	LimitAttrs       = "attributes per element"
	LimitNSDecls     = "namespace declarations per element"
	LimitElements    = "elements per document"
	LimitValueBytes  = "text and attribute value length"
	LimitNameBytes   = "name length"
	LimitHeaderBytes = "header size"
)

// WithDefaults returns l with each zero field set to its default and each
// negative one to the largest int.
func (l Limits) WithDefaults() Limits {
	fix := func(v *int, def int) {
		switch {
		case *v == 0:
			*v = def
		case *v < 0:
			*v = int(^uint(0) >> 1)
		}
	}
	fix(&l.MaxDepth, DefaultMaxDepth)
	fix(&l.MaxAttrs, DefaultMaxAttrs)
	fix(&l.MaxNSDecls, DefaultMaxNSDecls)
	fix(&l.MaxElements, DefaultMaxElements)
	fix(&l.MaxValueBytes, DefaultMaxValueBytes)
	fix(&l.MaxNameBytes, DefaultMaxNameBytes)
	fix(&l.MaxHeaderBytes, DefaultMaxHeaderBytes)
	return l
}

// LimitError is returned for a document over one of the Limits.
type LimitError struct {
	// Limit names the limit (one of the Limit constants).
	Limit string
	// Max is the limit's value.
	Max int
	// Line is the line where the limit was exceeded (1-based).
	Line int
}

// Error says which limit was exceeded, its value and where.
func (e *LimitError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("over the %s limit of %d", e.Limit, e.Max)
	}
	return fmt.Sprintf("line %d: over the %s limit of %d", e.Line, e.Limit, e.Max)
}

// SyntaxError is returned for input that is not well-formed.
type SyntaxError struct {
	// Line is the line of the error (1-based).
	Line int
	// Msg says what is wrong.
	Msg string
}

// Error returns the line and the message.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}
