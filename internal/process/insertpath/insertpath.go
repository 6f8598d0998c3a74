package insertpath

import (
	"fmt"
	"strconv"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
)

// Error is why a path cannot be created: the reason of the copy's
// bpel:selectionFailure.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

func errorf(format string, args ...any) error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

// Create finds or creates the node of p below base (the variable's or
// part's node) for a copy whose <to> selected nothing; root is the
// instance's variable tree, where a step's position variable is read;
// touch, when not nil, is called with the one element Create changes
// (adds a child or an attribute to) before it does. An error is an
// *Error: the copy's selectionFailure.
func Create(p *plan.InsertPath, root, base *etree.Element, touch func(*etree.Element)) (expr.Node, error) {
	cur := base
	i := 0
	var after *etree.Element // the last existing sibling of the first missing step
	for ; i < len(p.Steps); i++ {
		st := &p.Steps[i]
		if st.Attr || st.Text {
			if found := (&expr.SimplePath{Part: -1, Steps: []expr.PathStep{st.PathStep}}).Eval(root, cur); len(found) == 1 {
				return found[0], nil
			}
			break
		}
		want, ok := st.Position(root)
		if !ok {
			return expr.Node{}, errorf("step %s: the position is not a whole number from 1", st.Describe())
		}
		all := (&expr.SimplePath{Part: -1, Steps: []expr.PathStep{{Space: st.Space, Local: st.Local}}}).EvalAll(root, cur)
		switch {
		case want == 0 && len(all) > 1:
			return expr.Node{}, errorf("step %s matches %d elements: which one is meant is ambiguous", st.Describe(), len(all))
		case want == 0 && len(all) == 1:
			cur = all[0].Tok.(*etree.Element)
			continue
		case want > 0 && want <= len(all):
			cur = all[want-1].Tok.(*etree.Element)
			continue
		case want > len(all)+1:
			return expr.Node{}, errorf("step %s[%d]: %d such elements exist, only position %d can be created", st.Describe(), want, len(all), len(all)+1)
		}
		if len(all) > 0 {
			after = all[len(all)-1].Tok.(*etree.Element)
		}
		break
	}
	if i == len(p.Steps) {
		return expr.Node{Tok: cur, Attr: -1}, nil
	}
	// Steps after the first missing one select in a new, empty element.
	for _, st := range p.Steps[i+1:] {
		if want, ok := st.Position(root); !ok || want > 1 {
			return expr.Node{}, errorf("step %s: only position 1 can be created below a new element", st.Describe())
		}
	}
	if touch != nil {
		touch(cur)
	}
	for j := i; j < len(p.Steps); j++ {
		st := &p.Steps[j]
		switch {
		case st.Attr:
			return expr.Node{Tok: cur, Attr: createAttr(cur, st)}, nil
		case st.Text:
			return expr.Node{Tok: cur.CreateText(""), Attr: -1}, nil
		}
		e := etree.NewElement(st.Local)
		if after != nil && j == i {
			cur.InsertChildAt(after.Index()+1, e)
		} else {
			cur.AddChild(e)
		}
		nameCreated(e, st)
		cur = e
	}
	return expr.Node{Tok: cur, Attr: -1}, nil
}

// nameCreated puts the new element e (already in the tree) in st's
// namespace: through a prefix or default namespace already in scope for
// that namespace, else st's prefix declared on e, else a fresh one.
func nameCreated(e *etree.Element, st *plan.InsertStep) {
	if st.Space == "" {
		if uri, ok := expr.LookupNS(e, ""); ok && uri != "" {
			e.CreateAttr("xmlns", "")
		}
		return
	}
	if uri, ok := expr.LookupNS(e, st.Prefix); ok && uri == st.Space {
		e.Space = st.Prefix
		return
	}
	if uri, ok := expr.LookupNS(e, ""); ok && uri == st.Space {
		return
	}
	if _, ok := expr.LookupNS(e, st.Prefix); !ok {
		e.Space = st.Prefix
		e.CreateAttr("xmlns:"+st.Prefix, st.Space)
		return
	}
	expr.RenameTo(e, exchange.QName{Space: st.Space, Local: st.Local})
}

// createAttr adds st's attribute, empty, to e and returns its index; a
// namespaced one uses st's prefix where it is free or already bound to
// the namespace, else a fresh prefix declared on e.
func createAttr(e *etree.Element, st *plan.InsertStep) int {
	key := st.Local
	if st.Space != "" {
		prefix := st.Prefix
		for i := 1; ; i++ {
			uri, ok := expr.LookupNS(e, prefix)
			if ok && uri == st.Space {
				break
			}
			if !ok {
				e.CreateAttr("xmlns:"+prefix, st.Space)
				break
			}
			prefix = "ns" + strconv.Itoa(i)
		}
		key = prefix + ":" + st.Local
	}
	e.CreateAttr(key, "")
	return len(e.Attr) - 1
}
