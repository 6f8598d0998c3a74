package xmldoc

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotSupported marks a construct orchd does not run yet. Deploy rejects
// it rather than ignoring it.
var ErrNotSupported = errors.New("not supported yet")

// CompileError is one problem in a bundle, with where it is.
type CompileError struct {
	Pos     Pos
	Element string
	Err     error
}

func (e *CompileError) Error() string {
	if e.Element == "" {
		return fmt.Sprintf("%s: %v", e.Pos, e.Err)
	}
	return fmt.Sprintf("%s: <%s>: %v", e.Pos, e.Element, e.Err)
}

func (e *CompileError) Unwrap() error { return e.Err }

// Errors collects every problem found in a bundle, so one deploy reports
// them all.
type Errors struct {
	List []error
}

func (e *Errors) Add(pos Pos, element, format string, args ...any) {
	e.List = append(e.List, &CompileError{Pos: pos, Element: element, Err: fmt.Errorf(format, args...)})
}

func (e *Errors) Unsupported(pos Pos, element, what string) {
	if what == "" {
		what = "<" + element + ">"
	}
	e.List = append(e.List, &CompileError{Pos: pos, Element: element, Err: fmt.Errorf("%w: %s at %s", ErrNotSupported, what, pos)})
}

func (e *Errors) AddErr(err error) {
	if err != nil {
		e.List = append(e.List, err)
	}
}

func (e *Errors) Err() error {
	if len(e.List) == 0 {
		return nil
	}
	// A WSDL two processes import is read for each: report its problems
	// once.
	seen := make(map[string]bool, len(e.List))
	kept := e.List[:0]
	for _, x := range e.List {
		if m := x.Error(); !seen[m] {
			seen[m] = true
			kept = append(kept, x)
		}
	}
	e.List = kept
	return e
}

func (e *Errors) Error() string {
	msgs := make([]string, len(e.List))
	for i, err := range e.List {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap returns every collected error, for errors.Is and errors.As.
func (e *Errors) Unwrap() []error { return e.List }
