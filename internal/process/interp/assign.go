package interp

import (
	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xpath2"
)

// source is what a from-spec produced: a node, or a string value.
type source struct {
	node  expr.Node // node.tok is nil when the source is a string value
	text  string
	isNil bool // nothing selected
}

func applyCopyOp(c *plan.CopyOp, in *Instance) error {
	if c.Ext != nil {
		return in.runExtension(c.Pos, func(v *extVars) error { return c.Ext.Run(in.ctx, v) })
	}
	// Whole message variable to whole message variable.
	if c.From.V != nil && c.From.V.Msg != nil && c.From.Part < 0 && c.From.Query == nil &&
		c.To.V != nil && c.To.V.Msg != nil && c.To.Part < 0 && c.To.Query == nil {
		if c.From.V.Msg.Name != c.To.V.Msg.Name && !c.PartsByName {
			return in.faultf(c.Pos, "mismatchedAssignmentFailure", "copy from message variable %s to %s of another message type", c.From.V.Name, c.To.V.Name)
		}
		in.StoreMessage(c.To.V, CopyMessage(in.message(c.From.V)))
		return nil
	}
	src, err := evalFromCopyOp(c, in)
	if err != nil {
		return err
	}
	if src.isNil {
		if c.IgnoreMissingFromData {
			return nil
		}
		return in.faultf(c.Pos, "selectionFailure", "<from> selected nothing: %s", c.From.Describe())
	}
	if c.To.Epr != nil {
		return in.assignEPR(c.To.Epr.Pl, src, c.Pos)
	}
	dst, err := evalToCopyOp(c, in)
	if err != nil {
		return err
	}
	// Dirty for the checkpoint, not forgotten by the meter: chargeCopy
	// keeps the variable's size (measuring it whole at each copy would
	// walk a document per copy into it).
	if v := c.To.V; v != nil {
		in.dirtied(v)
	} else if v := in.slotOf(dst.Tok); v != nil {
		in.dirtied(v)
	}
	if err := in.chargeCopy(c, src, dst); err != nil {
		return err
	}
	if err := replaceCopyOp(c, in, src, dst); err != nil {
		return err
	}
	if c.To.V != nil && in.EvOn(events.DataHandling) {
		in.emitVariable(c.To.V)
	}
	return nil
}

func evalFromCopyOp(c *plan.CopyOp, in *Instance) (source, error) {
	f := &c.From
	switch {
	case f.Literal != nil:
		if f.LitElem != nil {
			return source{node: expr.Node{Tok: f.LitElem, Attr: -1}}, nil
		}
		return source{text: f.LitText}, nil
	case f.X != nil:
		v, err := in.Eval(f.X, in.root, c.Pos)
		if err != nil {
			return source{}, err
		}
		var buf [1]expr.Node
		if nodes, ok := expr.NodesIn(v, &buf); ok {
			return oneSourceCopyOp(c, in, nodes)
		}
		if seq, ok := v.(xpath2.Sequence); ok {
			return source{}, in.faultf(c.Pos, "selectionFailure", "<from> selected %d items, want one", len(seq))
		}
		return source{text: expr.XpathString(v)}, nil
	case f.V != nil:
		base := expr.BaseNode(in.root, f.V, f.Part)
		if base == nil {
			return source{isNil: true}, nil
		}
		if f.Query == nil {
			return source{node: expr.Node{Tok: base, Attr: -1}}, nil
		}
		v, err := in.Eval(f.Query, base, c.Pos)
		if err != nil {
			return source{}, err
		}
		var buf [1]expr.Node
		if nodes, ok := expr.NodesIn(v, &buf); ok {
			return oneSourceCopyOp(c, in, nodes)
		}
		if seq, ok := v.(xpath2.Sequence); ok {
			return source{}, in.faultf(c.Pos, "selectionFailure", "<from> query selected %d items, want one", len(seq))
		}
		return source{text: expr.XpathString(v)}, nil
	case f.Epr != nil:
		ref, err := in.endpointRef(f.Epr, c.Pos)
		if err != nil {
			return source{}, err
		}
		return source{node: expr.Node{Tok: ref, Attr: -1}}, nil
	}
	return source{isNil: true}, nil
}

func oneSourceCopyOp(c *plan.CopyOp, in *Instance, nodes []expr.Node) (source, error) {
	switch len(nodes) {
	case 0:
		return source{isNil: true}, nil
	case 1:
		return source{node: nodes[0]}, nil
	}
	return source{}, in.faultf(c.Pos, "selectionFailure", "<from> selected %d nodes, want one", len(nodes))
}

// target is where a copy writes: a node, or, for an uninitialized element
// variable or part (fresh), the slot or part wrapper the element goes in
// and the element's declared name.
type target struct {
	expr.Node
	fresh    bool
	parent   *etree.Element
	declared exchange.QName
}

func evalToCopyOp(c *plan.CopyOp, in *Instance) (target, error) {
	t := &c.To
	if t.X != nil {
		return evalToXPath2CopyOp(c, in)
	}
	base := expr.BaseNode(in.root, t.V, t.Part)
	if base == nil {
		// An element variable or part with no element yet.
		parent := in.Slot(t.V)
		declared := t.V.Elem
		if t.V.Msg != nil {
			parent = parent.Child[t.Part].(*etree.Element)
			declared = t.V.Msg.Parts[t.Part].Element
		}
		if t.Query == nil {
			return target{fresh: true, parent: parent, declared: declared}, nil
		}
		base = expr.NewQualified(parent, declared)
		if in.undoing {
			in.undo.Added(parent, base)
		}
	}
	if t.Query == nil {
		return target{Node: expr.Node{Tok: base, Attr: -1}}, nil
	}
	v, err := in.Eval(t.Query, base, c.Pos)
	if err != nil {
		return target{}, err
	}
	var buf [1]expr.Node
	nodes, ok := expr.NodesIn(v, &buf)
	if !ok || len(nodes) != 1 {
		if ok && len(nodes) == 0 && t.Insert != nil {
			return insertMissing(t.Insert, in, base, c.Pos)
		}
		n := 0
		if ok {
			n = len(nodes)
		}
		return target{}, in.faultf(c.Pos, "selectionFailure", "<to> selected %d nodes, want one", n)
	}
	return target{Node: nodes[0]}, nil
}

// Eval evaluates x with ctx as the context node (the tree's root for an
// expression, a variable's node for a query). antchfx reports some dynamic
// errors by panicking; they become bpel:subLanguageExecutionFault.
func (in *Instance) Eval(x *expr.Expr, ctx *etree.Element, at xmldoc.Pos) (v any, err error) {
	if x.X2 != nil && x.Fast == nil {
		seq, err := in.evalXPath2(x, ctx, at)
		if err != nil {
			return nil, err
		}
		return expr.FromXPath2(seq), nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = in.faultf(at, "subLanguageExecutionFault", "evaluating %q: %v", x.Src, r)
		}
	}()
	return x.Eval(&in.docs, ctx), nil
}

func replaceCopyOp(c *plan.CopyOp, in *Instance, src source, dst target) error {
	var se *etree.Element
	if src.node.Tok != nil && src.node.Attr < 0 {
		se, _ = src.node.Tok.(*etree.Element)
	}
	u := &in.undo
	if !in.undoing || !in.undoWrite {
		u = nil
	}
	if dst.fresh {
		// The variable or part was uninitialized: it becomes a copy of
		// the source element under its declared name (or keeps the
		// source's name), or an element of that name holding the text.
		if se == nil {
			el := expr.NewQualified(dst.parent, dst.declared)
			if u != nil {
				u.Added(dst.parent, el)
			}
			expr.SetText(el, src.String())
			return nil
		}
		cp := expr.CopyTree(se)
		expr.FixNamespaces(cp, se, nil)
		if cp.NamespaceURI() != dst.declared.Space || cp.Tag != dst.declared.Local {
			if c.KeepSrcElementName {
				return keepSrcMismatch(c, in, se, dst.declared)
			}
			expr.RenameTo(cp, dst.declared)
		}
		if u != nil {
			u.Added(dst.parent, cp)
		}
		dst.parent.AddChild(cp)
		return nil
	}
	switch t := dst.Tok.(type) {
	case *etree.CharData:
		if u != nil {
			u.Text(t)
		}
		t.SetData(src.String())
		return nil
	case *etree.Element:
		if dst.Attr >= 0 {
			if u != nil {
				u.Attr(t, dst.Attr)
			}
			t.Attr[dst.Attr].Value = src.String()
			return nil
		}
		if se == nil {
			if u != nil {
				u.Content(t)
			}
			expr.SetText(t, src.String())
			return nil
		}
		if se == t {
			return nil
		}
		if c.KeepSrcElementName {
			p := t.Parent()
			if p == nil || p == in.root {
				return in.faultf(c.Pos, "mismatchedAssignmentFailure", "keepSrcElementName on a variable that is not element-valued")
			}
			if d, ok := declaredElement(&c.To); ok && (se.NamespaceURI() != d.Space || se.Tag != d.Local) {
				return keepSrcMismatch(c, in, se, d)
			}
			cp := expr.CopyTree(se)
			expr.FixNamespaces(cp, se, p)
			i := t.Index()
			if u != nil {
				u.Child(p, i)
			}
			p.RemoveChildAt(i)
			p.InsertChildAt(i, cp)
			return nil
		}
		if u != nil {
			u.Content(t)
		}
		expr.ReplaceContent(t, se)
		return nil
	}
	return in.faultf(c.Pos, "selectionFailure", "<to> is not an element, attribute or text node")
}

// declaredElement is the element declared for the variable or part a
// <to> names without a query: the target is then the document element of
// an element variable or element part.
func declaredElement(t *plan.ToSpec) (exchange.QName, bool) {
	if t.V == nil || t.Query != nil || t.X != nil {
		return exchange.QName{}, false
	}
	switch {
	case t.V.Msg == nil:
		return t.V.Elem, !t.V.Elem.IsZero()
	case t.Part >= 0:
		q := t.V.Msg.Parts[t.Part].Element
		return q, !q.IsZero()
	}
	return exchange.QName{}, false
}

// keepSrcMismatch is the fault of a keepSrcElementName copy that would
// give an element variable or part a document element of another name
// (WS-BPEL 2.0 8.4.2: the source's name must be the declared element's,
// or one of its substitution group, which orchd's schemas do not have).
func keepSrcMismatch(c *plan.CopyOp, in *Instance, se *etree.Element, declared exchange.QName) error {
	return in.faultf(c.Pos, "mismatchedAssignmentFailure", "keepSrcElementName: source element {%s}%s is not the declared element %s of the target", se.NamespaceURI(), se.Tag, declared)
}

func (s source) String() string {
	if s.node.Tok != nil {
		return s.node.String()
	}
	return s.text
}
