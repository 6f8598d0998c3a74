package expr

import (
	"fmt"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// variable is a declared variable, resolved to a slot of the instance tree.
type Var struct {
	Name string
	Slot int // 1-based position of the variable's element in the tree
	Msg  *exchange.MessageDesc
	Elem exchange.QName
	Typ  exchange.QName
	// Simple is the typed value ("number", "string", "boolean") of a
	// simple-typed variable used as a value, or "" (see typedValue).
	Simple string
	Pos    xmldoc.Pos
}

// Path is the absolute XPath, over the instance tree, of the variable or
// one of its parts.
func (v *Var) Path(part string) (string, error) {
	base := "/" + v.SlotName()
	if part == "" {
		if v.Msg == nil && !v.Elem.IsZero() {
			return base + "/*", nil
		}
		return base, nil
	}
	i := v.PartIndex(part)
	if i < 0 {
		return "", fmt.Errorf("variable %s has no part %q", v.Name, part)
	}
	if v.Msg.Parts[i].Element.IsZero() {
		return base + "/" + part, nil
	}
	return base + "/" + part + "/*", nil
}

// SlotName is the tag of the variable's slot element: unique, so a name
// test finds it without positional predicates.
func (v *Var) SlotName() string { return fmt.Sprintf("v%d", v.Slot) }

func (v *Var) PartIndex(part string) int {
	if v.Msg == nil {
		return -1
	}
	for i, p := range v.Msg.Parts {
		if p.Name == part {
			return i
		}
	}
	return -1
}

// NewSlots builds the variable tree of a new instance: a root element
// holding every variable's empty slot, in slot order. The slot of an
// element variable and the wrapper of an element part have room for the
// one element they will hold (copyTree keeps it).
func NewSlots(vars []*Var) *etree.Element {
	root := etree.NewElement("")
	for _, v := range vars {
		s := v.NewSlot()
		switch {
		case v.Msg != nil:
			for i, p := range v.Msg.Parts {
				if !p.Element.IsZero() {
					s.Child[i].(*etree.Element).Child = make([]etree.Token, 0, 1)
				}
			}
		case !v.Elem.IsZero():
			s.Child = make([]etree.Token, 0, 1)
		}
		root.AddChild(s)
	}
	return root
}

// NewSlot builds the empty slot element of the variable for a new instance.
func (v *Var) NewSlot() *etree.Element {
	s := etree.NewElement(v.SlotName())
	if v.Msg != nil {
		for _, p := range v.Msg.Parts {
			s.CreateElement(p.Name)
		}
	}
	return s
}

// OfType reports a variable declared with a type (not a messageType or
// an element).
func (v *Var) OfType() bool { return v.Msg == nil && v.Elem.IsZero() }
