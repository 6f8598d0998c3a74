package xmlparse

import (
	"errors"

	"github.com/beevik/etree"
)

// Stored parses an element orchd stored itself (a variable slot, an
// outbox message part, a compensation frame's variable, an endpoint's
// reference parameters) and detaches it from its document. It takes no
// limits (what was stored was bounded when it came in) and keeps all
// whitespace, so the value reads back as it was written.
func Stored[T []byte | string](data T) (*etree.Element, error) {
	doc, err := Parse([]byte(data), Options{Limits: NoLimits(), KeepWhitespace: true})
	if err != nil {
		return nil, err
	}
	el := doc.Root()
	if el == nil {
		return nil, errors.New("no element")
	}
	doc.RemoveChild(el)
	return el, nil
}
