package process

import (
	"fmt"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/bpel"
)

// variable is a declared variable, resolved to a slot of the instance tree.
type variable struct {
	name string
	slot int // 1-based position of the variable's element in the tree
	msg  *exchange.MessageDesc
	elem exchange.QName
	typ  exchange.QName
	// simple is the typed value ("number", "string", "boolean") of a
	// simple-typed variable used as a value, or "" (see typedValue).
	simple string
	pos    bpel.Pos
}

// path is the absolute XPath, over the instance tree, of the variable or
// one of its parts.
func (v *variable) path(part string) (string, error) {
	base := "/" + v.slotName()
	if part == "" {
		if v.msg == nil && !v.elem.IsZero() {
			return base + "/*", nil
		}
		return base, nil
	}
	i := v.partIndex(part)
	if i < 0 {
		return "", fmt.Errorf("variable %s has no part %q", v.name, part)
	}
	if v.msg.Parts[i].Element.IsZero() {
		return base + "/" + part, nil
	}
	return base + "/" + part + "/*", nil
}

// slotName is the tag of the variable's slot element: unique, so a name
// test finds it without positional predicates.
func (v *variable) slotName() string { return fmt.Sprintf("v%d", v.slot) }

func (v *variable) partIndex(part string) int {
	if v.msg == nil {
		return -1
	}
	for i, p := range v.msg.Parts {
		if p.Name == part {
			return i
		}
	}
	return -1
}

// newSlots builds the variable tree of a new instance: a root element
// holding every variable's empty slot, in slot order. The slot of an
// element variable and the wrapper of an element part have room for the
// one element they will hold (copyTree keeps it).
func newSlots(vars []*variable) *etree.Element {
	root := etree.NewElement("")
	for _, v := range vars {
		s := v.newSlot()
		switch {
		case v.msg != nil:
			for i, p := range v.msg.Parts {
				if !p.Element.IsZero() {
					s.Child[i].(*etree.Element).Child = make([]etree.Token, 0, 1)
				}
			}
		case !v.elem.IsZero():
			s.Child = make([]etree.Token, 0, 1)
		}
		root.AddChild(s)
	}
	return root
}

// newSlot builds the empty slot element of the variable for a new instance.
func (v *variable) newSlot() *etree.Element {
	s := etree.NewElement(v.slotName())
	if v.msg != nil {
		for _, p := range v.msg.Parts {
			s.CreateElement(p.Name)
		}
	}
	return s
}
