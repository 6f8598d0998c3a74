package expr

import (
	"slices"

	"github.com/beevik/etree"
)

// Undo logs changes to variable trees so that they can be taken back:
// an <assign> is atomic (WS-BPEL 2.0 8.4), so when one of its copies
// faults, the copies before it are undone. Each Record method is called
// before the change it names; Rollback takes the changes back, newest
// first. Recording keeps references, not copies, where it can: an
// element's content is cloned (its child and attribute lists) only when
// it has more than one child or has attributes. Its zero value is
// ready; Reset empties it for the next assign and keeps its room. Its
// first records live in the Undo itself (an instance's, so logging
// allocates nothing for the few copies an assign has): it must not be
// copied once used.
type Undo struct {
	recs  []undoRec
	first [undoRoom]undoRec
}

type undoKind uint8

const (
	undoAdded   undoKind = iota // tok was added under el: remove it
	undoContent                 // el's children and attributes are to be replaced: put kids and attrs back
	undoText                    // cd's data is to be set: put text back
	undoAttr                    // el.Attr[i]'s value is to be set: put text back
	undoChild                   // el's child at i (tok) is to be replaced: put tok back there
	undoFunc                    // call fn
)

// undoRec is one change; kept small, as an assign makes one per copy.
type undoRec struct {
	kind undoKind
	i    int32
	el   *etree.Element
	tok  etree.Token
	text string
	more *undoMore
}

// undoMore is what the rarer records keep.
type undoMore struct {
	kids  []etree.Token
	attrs []etree.Attr
	fn    func()
}

// undoRoom is the records an Undo holds before it allocates.
const undoRoom = 8

func (u *Undo) add(r undoRec) {
	if u.recs == nil {
		u.recs = u.first[:0]
	}
	u.recs = append(u.recs, r)
}

// Reset forgets what was recorded.
func (u *Undo) Reset() {
	clear(u.recs)
	u.recs = u.recs[:0]
}

// Len is the number of changes recorded.
func (u *Undo) Len() int { return len(u.recs) }

// Added records that tok is about to be added under parent (or was
// just: Rollback removes it).
func (u *Undo) Added(parent *etree.Element, tok etree.Token) {
	u.add(undoRec{kind: undoAdded, el: parent, tok: tok})
}

// Content records el's children and attributes before they are
// replaced or changed in place (ReplaceContent, SetText, a child added).
func (u *Undo) Content(el *etree.Element) {
	r := undoRec{kind: undoContent, el: el}
	switch {
	case len(el.Attr) == 0 && len(el.Child) == 0:
	case len(el.Attr) == 0 && len(el.Child) == 1:
		r.tok = el.Child[0]
		if cd, ok := r.tok.(*etree.CharData); ok {
			r.text = cd.Data
		}
	default:
		r.more = &undoMore{kids: slices.Clone(el.Child), attrs: slices.Clone(el.Attr)}
		for _, k := range el.Child {
			if cd, ok := k.(*etree.CharData); ok {
				// Text children can be changed in place: keep their data
				// as records of their own, undone after this one.
				u.add(undoRec{kind: undoText, tok: cd, text: cd.Data})
			}
		}
	}
	u.add(r)
}

// Text records cd's data before it is set.
func (u *Undo) Text(cd *etree.CharData) {
	u.add(undoRec{kind: undoText, tok: cd, text: cd.Data})
}

// Attr records the value of el's i-th attribute before it is set.
func (u *Undo) Attr(el *etree.Element, i int) {
	u.add(undoRec{kind: undoAttr, el: el, i: int32(i), text: el.Attr[i].Value})
}

// Child records el's child at i before it is replaced by another.
func (u *Undo) Child(el *etree.Element, i int) {
	u.add(undoRec{kind: undoChild, el: el, i: int32(i), tok: el.Child[i]})
}

// Func records fn, which puts back what a change outside the trees
// changed (an endpoint reference).
func (u *Undo) Func(fn func()) {
	u.add(undoRec{kind: undoFunc, more: &undoMore{fn: fn}})
}

// Rollback takes back every change recorded, newest first, and empties
// the log.
func (u *Undo) Rollback() {
	for i := len(u.recs) - 1; i >= 0; i-- {
		r := &u.recs[i]
		switch r.kind {
		case undoAdded:
			r.el.RemoveChild(r.tok)
		case undoContent:
			ClearChildren(r.el)
			switch {
			case r.more != nil:
				for _, k := range r.more.kids {
					r.el.AddChild(k)
				}
				r.el.Attr = r.more.attrs
			case r.tok != nil:
				r.el.AddChild(r.tok)
				if cd, ok := r.tok.(*etree.CharData); ok {
					cd.SetData(r.text)
				}
				r.el.Attr = nil
			default:
				r.el.Attr = nil
			}
		case undoText:
			r.tok.(*etree.CharData).SetData(r.text)
		case undoAttr:
			if int(r.i) < len(r.el.Attr) {
				r.el.Attr[r.i].Value = r.text
			}
		case undoChild:
			if int(r.i) < len(r.el.Child) {
				r.el.RemoveChildAt(int(r.i))
			}
			r.el.InsertChildAt(int(r.i), r.tok)
		case undoFunc:
			r.more.fn()
		}
	}
	u.Reset()
}
