package diagram

import (
	"unicode/utf8"

	"github.com/orchd/orchd/internal/process/plan"
)

// Role says what a box stands for.
type Role string

// The roles of boxes.
const (
	// RoleActivity is an activity of the plan (ID is its id).
	RoleActivity Role = "activity"
	// RoleBranch is a branch of an if or a pick, labelled with its
	// condition or its onMessage or onAlarm.
	RoleBranch Role = "branch"
	// RoleHandler is a scope's handler compartment (catch, catchAll,
	// onEvent, onAlarm, compensationHandler, terminationHandler), or the
	// handlers the compiler put around an invoke with inline catches.
	RoleHandler Role = "handler"
)

// Box is one placed box. Coordinates are pixels from the top left of
// the picture; a child lies inside its parent and siblings do not
// overlap.
type Box struct {
	// ID is the plan's activity id of an activity box (and of the
	// construct of a handler group), -1 for branches and compartments.
	ID   int
	Role Role
	// Kind is the activity's element ("invoke", "sequence"; "process"
	// for the root) and Name its name attribute.
	Kind, Name string
	// Label is a branch's or compartment's caption, or a loop's
	// condition.
	Label string
	// Detail is a leaf's second line: the partner link and operation of
	// an invoke, receive or reply, a wait's deadline, a throw's fault.
	Detail string
	// Pos is where the activity is in its BPEL file (file:line).
	Pos string
	// Loop marks a while, repeatUntil or forEach.
	Loop bool
	// Leaf is an activity with no children drawn.
	Leaf bool
	// Parent is the index of the enclosing box in Layout.Boxes, -1 for
	// the root.
	Parent     int
	X, Y, W, H int
}

// Arrow is a flow link drawn from its source activity's box to its
// target's.
type Arrow struct {
	Link           string
	From, To       int // indexes in Layout.Boxes
	X1, Y1, X2, Y2 int
}

// Layout is a process version laid out: boxes parents first, arrows,
// and the picture's size.
type Layout struct {
	// Title names the process.
	Title  string
	Boxes  []Box
	Arrows []Arrow
	W, H   int
	// kids are the indexes of each box's children (side compartments
	// last), seqs the boxes whose children are joined by arrows.
	kids [][]int
	seqs []bool
}

// Sizes, in pixels.
const (
	charW    = 7   // an estimated character of the 12px font
	maxChars = 34  // longer text is cut with an ellipsis
	leafMinW = 130 // a leaf's least width
	leafH    = 54  // a leaf: kind and name, detail, overlay note
	headH    = 22  // a container's header line
	pad      = 8   // inside a container
	gap      = 14  // between siblings
	margin   = 10  // around the picture
)

// New lays out plan p.
func New(p *plan.Plan) *Layout {
	root := (&builder{}).process(p)
	measure(root)
	place(root, margin, margin)
	l := &Layout{Title: p.Name.Local, W: root.box.W + 2*margin, H: root.box.H + 2*margin}
	index := map[*node]int{}
	l.flatten(root, -1, index)
	l.links(root, index)
	return l
}

// textW is the estimated width of s, cut at maxChars.
func textW(s string) int {
	return min(utf8.RuneCountInString(s), maxChars) * charW
}

// headerW is the width of a container's header line as SVG draws it:
// a caption, or a loop mark, kind, name and label, each cut.
func (n *node) headerW() int {
	if n.box.Role != RoleActivity {
		return textW(n.box.Label)
	}
	w := textW(n.box.Kind) + charW + textW(n.box.Name)
	if n.box.Loop {
		w += 2 * charW
	}
	if n.box.Label != "" {
		w += charW + textW(n.box.Label)
	}
	return w
}

// measure sets the size of n and of everything in it.
func measure(n *node) {
	if len(n.kids) == 0 && len(n.side) == 0 && n.box.Role == RoleActivity {
		n.box.Leaf = true
		w := max(textW(n.box.Kind+" "+n.box.Name), textW(n.box.Detail), textW("×000000 · 000 ms · p99 000 ms"))
		n.box.W, n.box.H = max(leafMinW, w+2*pad), leafH
		return
	}
	cw, ch := 0, 0 // the children's extent
	for i, k := range n.kids {
		measure(k)
		if n.vertical {
			cw = max(cw, k.box.W)
			ch += k.box.H
			if i > 0 {
				ch += gap
			}
		} else {
			cw += k.box.W
			ch = max(ch, k.box.H)
			if i > 0 {
				cw += gap
			}
		}
	}
	sw, sh := 0, 0 // the side compartments' extent
	for i, s := range n.side {
		measure(s)
		sw = max(sw, s.box.W)
		sh += s.box.H
		if i > 0 {
			sh += gap
		}
	}
	w := cw
	if sw > 0 {
		if w > 0 {
			w += gap
		}
		w += sw
	}
	n.box.W = max(w+2*pad, n.headerW()+2*pad, 60)
	n.box.H = headH + max(ch, sh, 8) + pad
}

// place puts n's top left corner at x, y and its contents inside it.
func place(n *node, x, y int) {
	n.box.X, n.box.Y = x, y
	if n.box.Leaf {
		return
	}
	cw := 0
	for i, k := range n.kids {
		if n.vertical {
			cw = max(cw, k.box.W)
		} else {
			cw += k.box.W
			if i > 0 {
				cw += gap
			}
		}
	}
	cx, cy := x+pad, y+headH
	for _, k := range n.kids {
		if n.vertical {
			place(k, cx+(cw-k.box.W)/2, cy)
			cy += k.box.H + gap
		} else {
			place(k, cx, cy)
			cx += k.box.W + gap
		}
	}
	sx, sy := x+pad+cw, y+headH
	if cw > 0 {
		sx += gap
	}
	for _, s := range n.side {
		place(s, sx, sy)
		sy += s.box.H + gap
	}
}

// flatten appends n and what it holds to l.Boxes, parents first.
func (l *Layout) flatten(n *node, parent int, index map[*node]int) {
	i := len(l.Boxes)
	index[n] = i
	b := n.box
	b.Parent = parent
	l.Boxes = append(l.Boxes, b)
	l.kids = append(l.kids, nil)
	l.seqs = append(l.seqs, n.seq)
	for _, k := range append(append([]*node(nil), n.kids...), n.side...) {
		l.kids[i] = append(l.kids[i], len(l.Boxes))
		l.flatten(k, i, index)
	}
}

// links adds an arrow per flow link whose source and target are drawn.
func (l *Layout) links(root *node, index map[*node]int) {
	from := map[*plan.Link]int{}
	var to []struct {
		link *plan.Link
		box  int
	}
	var walk func(n *node)
	walk = func(n *node) {
		for _, s := range n.sources {
			from[s] = index[n]
		}
		for _, t := range n.targets {
			to = append(to, struct {
				link *plan.Link
				box  int
			}{t, index[n]})
		}
		for _, k := range n.kids {
			walk(k)
		}
		for _, k := range n.side {
			walk(k)
		}
	}
	walk(root)
	for _, t := range to {
		f, ok := from[t.link]
		if !ok {
			continue
		}
		a, b := l.Boxes[f], l.Boxes[t.box]
		ar := Arrow{Link: t.link.Name, From: f, To: t.box}
		switch {
		case b.Y >= a.Y+a.H: // below: bottom to top
			ar.X1, ar.Y1, ar.X2, ar.Y2 = a.X+a.W/2, a.Y+a.H, b.X+b.W/2, b.Y
		case b.Y+b.H <= a.Y: // above
			ar.X1, ar.Y1, ar.X2, ar.Y2 = a.X+a.W/2, a.Y, b.X+b.W/2, b.Y+b.H
		case b.X >= a.X+a.W: // right
			ar.X1, ar.Y1, ar.X2, ar.Y2 = a.X+a.W, a.Y+a.H/2, b.X, b.Y+b.H/2
		default: // left
			ar.X1, ar.Y1, ar.X2, ar.Y2 = a.X, a.Y+a.H/2, b.X+b.W, b.Y+b.H/2
		}
		l.Arrows = append(l.Arrows, ar)
	}
}

// Find returns the index of the box of activity id, -1 when none.
func (l *Layout) Find(id int) int {
	for i, b := range l.Boxes {
		if b.ID == id && b.Role == RoleActivity {
			return i
		}
	}
	return -1
}
