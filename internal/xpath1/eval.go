package xpath1

import (
	"fmt"
	"math"

	"github.com/beevik/etree"
)

// Context is the evaluation context (section 1): the context node, the
// context position and size, the tree, and the caller's data, which
// variables and extension functions read (orchd's instance tree).
type Context struct {
	Node           Node
	Position, Size int
	Tree           Tree
	Data           any
}

// Eval evaluates x with context node n of tree t (Plain{} for ordinary
// documents), context position and size 1. data is passed to variables
// and extension functions. A dynamic error (an operand that must be a
// node-set and is not, an extension's error) is an *Error.
func (x *Compiled) Eval(t Tree, n Node, data any) (Value, error) {
	c := &Context{Node: n, Position: 1, Size: 1, Tree: t, Data: data}
	v, err := eval(x.root, c)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Src == "" {
			e.Src = x.src
		}
		return nil, err
	}
	return v, nil
}

func eval(x Expr, c *Context) (Value, error) {
	switch x := x.(type) {
	case *NumLit:
		return x.Val, nil
	case *Literal:
		return x.Val, nil
	case *Neg:
		f, err := evalNumber(x.X, c)
		return -f, err
	case *Binary:
		return evalBinary(x, c)
	case *VarRef:
		if x.v == nil {
			return nil, &Error{Pos: x.At, Msg: "unbound variable $" + x.Local}
		}
		return x.v.Value(c)
	case *Call:
		return evalCall(x, c)
	case *Filter:
		v, err := eval(x.Primary, c)
		if err != nil {
			return nil, err
		}
		set, ok := v.(NodeSet)
		if !ok {
			return nil, &Error{Pos: x.At, Msg: fmt.Sprintf("a predicate applies to a node-set, not a %s", typeName(v))}
		}
		for _, p := range x.Preds {
			if set, err = filter(set, p, c); err != nil {
				return nil, err
			}
		}
		return set, nil
	case *Path:
		return evalPath(x, c)
	}
	return nil, &Error{Pos: x.Pos(), Msg: fmt.Sprintf("unknown expression %T", x)}
}

func typeName(v Value) string {
	switch v.(type) {
	case float64:
		return "number"
	case string:
		return "string"
	case bool:
		return "boolean"
	case NodeSet:
		return "node-set"
	}
	return fmt.Sprintf("%T", v)
}

func evalNumber(x Expr, c *Context) (float64, error) {
	if n, ok := x.(*NumLit); ok {
		return n.Val, nil
	}
	v, err := eval(x, c)
	if err != nil {
		return math.NaN(), err
	}
	return Num(v), nil
}

func evalString(x Expr, c *Context) (string, error) {
	v, err := eval(x, c)
	if err != nil {
		return "", err
	}
	return String(v), nil
}

func evalBool(x Expr, c *Context) (bool, error) {
	v, err := eval(x, c)
	if err != nil {
		return false, err
	}
	return Bool(v), nil
}

func evalNodes(x Expr, c *Context, what string) (NodeSet, error) {
	v, err := eval(x, c)
	if err != nil {
		return nil, err
	}
	set, ok := v.(NodeSet)
	if !ok {
		return nil, &Error{Pos: x.Pos(), Msg: fmt.Sprintf("%s must be a node-set, not a %s", what, typeName(v))}
	}
	return set, nil
}

func evalBinary(x *Binary, c *Context) (Value, error) {
	switch x.Op {
	case OpOr, OpAnd:
		l, err := evalBool(x.L, c)
		if err != nil || l == (x.Op == OpOr) {
			return l, err
		}
		return evalBool(x.R, c)
	case OpUnion:
		l, err := evalNodes(x.L, c, "an operand of '|'")
		if err != nil {
			return nil, err
		}
		r, err := evalNodes(x.R, c, "an operand of '|'")
		if err != nil {
			return nil, err
		}
		if len(l) == 0 {
			return r, nil
		}
		if len(r) == 0 {
			return l, nil
		}
		u := make(NodeSet, 0, len(l)+len(r))
		return NodeSet(sortNodes(append(append(u, l...), r...))), nil
	case OpAdd, OpSub, OpMul, OpDiv, OpMod:
		l, err := evalNumber(x.L, c)
		if err != nil {
			return nil, err
		}
		r, err := evalNumber(x.R, c)
		if err != nil {
			return nil, err
		}
		switch x.Op {
		case OpAdd:
			return l + r, nil
		case OpSub:
			return l - r, nil
		case OpMul:
			return l * r, nil
		case OpDiv:
			return l / r, nil
		}
		return math.Mod(l, r), nil
	}
	l, err := eval(x.L, c)
	if err != nil {
		return nil, err
	}
	r, err := eval(x.R, c)
	if err != nil {
		return nil, err
	}
	return Compare(x.Op, l, r), nil
}

// filter keeps the nodes of set (in the order positions count in) for
// which predicate p holds: a number is compared with the position,
// anything else is taken as a boolean (section 2.4).
func filter(set NodeSet, p Expr, c *Context) (NodeSet, error) {
	if len(set) == 0 {
		return set, nil
	}
	out := set[:0:0]
	pc := *c
	pc.Size = len(set)
	for i, n := range set {
		pc.Node, pc.Position = n, i+1
		v, err := eval(p, &pc)
		if err != nil {
			return nil, err
		}
		keep := false
		if f, ok := v.(float64); ok {
			keep = f == float64(i+1)
		} else {
			keep = Bool(v)
		}
		if keep {
			out = append(out, n)
		}
	}
	return out, nil
}

func evalPath(x *Path, c *Context) (Value, error) {
	var cur NodeSet
	switch {
	case x.Start != nil:
		s, err := evalNodes(x.Start, c, "an expression before '/'")
		if err != nil {
			return nil, err
		}
		cur = s
	case x.Abs:
		cur = NodeSet{c.Tree.Root(c.Node)}
	default:
		cur = NodeSet{c.Node}
	}
	// flat: no node of cur is an ancestor of another, so that the child,
	// attribute, namespace and self steps from cur, in turn, are in
	// document order without duplicates, and need no sort.
	flat := len(cur) <= 1
	var buf []Node
	for _, st := range x.Steps {
		var out NodeSet
		for _, n := range cur {
			buf = axis(c.Tree, st, n, buf[:0])
			sel := NodeSet(buf)
			for _, p := range st.Preds {
				var err error
				if sel, err = filter(sel, p, c); err != nil {
					return nil, err
				}
			}
			if st.Axis.reverse() {
				for i := len(sel) - 1; i >= 0; i-- {
					out = append(out, sel[i])
				}
			} else {
				out = append(out, sel...)
			}
		}
		switch st.Axis {
		case AxisChild, AxisAttribute, AxisNamespace, AxisSelf:
			if !flat {
				out = sortNodes(out)
				flat = len(out) <= 1
			}
		default:
			if len(cur) > 1 {
				out = sortNodes(out)
			}
			flat = len(out) <= 1
		}
		cur = out
		if len(cur) == 0 {
			break
		}
	}
	return cur, nil
}

// axis appends the nodes of st's axis from n that pass its node test to
// out, in axis order (reverse document order for a reverse axis).
func axis(t Tree, st *Step, n Node, out []Node) []Node {
	add := func(m Node) {
		if test(st, m) {
			out = append(out, m)
		}
	}
	switch st.Axis {
	case AxisSelf:
		add(n)
	case AxisChild:
		if e, ok := n.Tok.(*etree.Element); ok && st.Test == TestName && n.Attr < 0 && (n.Doc == NotDoc || n.Doc == DocOf) {
			// The common case, without building the children.
			for _, ch := range e.Child {
				if ce, ok := ch.(*etree.Element); ok && ce.Tag == st.Local && ce.NamespaceURI() == st.Space {
					out = append(out, NodeOf(ce))
				}
			}
			return out
		}
		for _, m := range children(n, nil) {
			add(m)
		}
	case AxisDescendant, AxisDescendantOrSelf:
		if st.Axis == AxisDescendantOrSelf {
			add(n)
		}
		descendants(n, add)
	case AxisParent:
		if p, ok := parent(t, n); ok {
			add(p)
		}
	case AxisAncestor, AxisAncestorOrSelf:
		if st.Axis == AxisAncestorOrSelf {
			add(n)
		}
		for p, ok := parent(t, n); ok; p, ok = parent(t, p) {
			add(p)
		}
	case AxisFollowingSibling, AxisPrecedingSibling:
		sib, i := siblings(t, n)
		if i < 0 {
			return out
		}
		if st.Axis == AxisFollowingSibling {
			for _, s := range sib[i+1:] {
				if navigable(s) {
					add(NodeOf(s))
				}
			}
			return out
		}
		for j := i - 1; j >= 0; j-- {
			if navigable(sib[j]) {
				add(NodeOf(sib[j]))
			}
		}
	case AxisFollowing:
		a := n
		if n.Attr >= 0 || n.Doc == NamespaceNode {
			a = NodeOf(n.Tok)
			descendants(a, add)
		}
		for ok := true; ok; a, ok = parent(t, a) {
			sib, i := siblings(t, a)
			if i < 0 {
				continue
			}
			for _, s := range sib[i+1:] {
				if navigable(s) {
					add(NodeOf(s))
					descendants(NodeOf(s), add)
				}
			}
		}
	case AxisPreceding:
		a := n
		if n.Attr >= 0 || n.Doc == NamespaceNode {
			a = NodeOf(n.Tok)
		}
		for ok := true; ok; a, ok = parent(t, a) {
			sib, i := siblings(t, a)
			for j := i - 1; j >= 0; j-- {
				if navigable(sib[j]) {
					s := NodeOf(sib[j])
					// reverse document order: the subtree backwards, then s
					var sub []Node
					descendants(s, func(m Node) { sub = append(sub, m) })
					for k := len(sub) - 1; k >= 0; k-- {
						add(sub[k])
					}
					add(s)
				}
			}
		}
	case AxisAttribute:
		e, ok := n.elem()
		if !ok {
			return out
		}
		for i, a := range e.Attr {
			if !IsNSDecl(a) {
				add(Node{Tok: e, Attr: int32(i)})
			}
		}
	case AxisNamespace:
		e, ok := n.elem()
		if !ok {
			return out
		}
		for i := range inScope(e) {
			add(Node{Tok: e, Attr: int32(i), Doc: NamespaceNode})
		}
	}
	return out
}

// descendants calls f with n's descendants in document order.
func descendants(n Node, f func(Node)) {
	if n.Attr >= 0 || n.Doc == DocEmpty || n.Doc == NamespaceNode {
		return
	}
	e, ok := n.Tok.(*etree.Element)
	if !ok {
		return
	}
	if n.Doc == DocAbove {
		f(NodeOf(e))
	}
	walkDescendants(e, f)
}

func walkDescendants(e *etree.Element, f func(Node)) {
	for _, c := range e.Child {
		if navigable(c) {
			f(NodeOf(c))
			if ce, ok := c.(*etree.Element); ok {
				walkDescendants(ce, f)
			}
		}
	}
}

// test reports whether n passes st's node test, on st's axis.
func test(st *Step, n Node) bool {
	k := n.Kind()
	switch st.Test {
	case TestNode:
		return true
	case TestText:
		return k == TextKind
	case TestComment:
		return k == CommentKind
	case TestPI:
		return k == PIKind && (st.Local == "" || n.LocalName() == st.Local)
	}
	// A name test: nodes of the axis's principal node type.
	switch st.Axis {
	case AxisAttribute:
		if k != AttributeKind {
			return false
		}
	case AxisNamespace:
		if k != NamespaceKind {
			return false
		}
	default:
		if k != ElementKind {
			return false
		}
	}
	switch st.Test {
	case TestAny:
		return true
	case TestSpace:
		return n.NamespaceURI() == st.Space
	}
	return n.LocalName() == st.Local && n.NamespaceURI() == st.Space
}
