package interp

import (
	"strconv"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// insertMissingToData: ODE's <copy insertMissingToData="yes"> (also
// written ext:insertMissingToData with ODE's extension namespace, the one
// of its XPath functions) creates the missing steps of the <to> path
// before copying, instead of failing with selectionFailure.
//
// What orchd creates: a relative location path below the variable or part
// (the $var[.part]/path and <query> forms) whose steps are child elements
// (name or prefix:name, child:: allowed), optionally one positional
// predicate ([2], or [$i] with a numeric simple-typed $i), and, last, an
// attribute (@name, attribute::name) or text(). When the path selects
// nothing, orchd walks it from the variable: a step that selects an
// existing element is followed; the first one that does not is created,
// with every step after it. A step without a predicate is created when no
// element matches it (several matches: selectionFailure, the target is
// ambiguous). A step a[k] is created when k is the next position (k-1
// elements a exist); it goes right after the last existing a, or last in
// its parent when there is none. Any other k is a selectionFailure, and
// so is a later step a[k] with k > 1 (a new element has no siblings).
// Nothing is created unless the whole path can be. A created name uses
// the prefix the BPEL document wrote when that prefix is free, and
// declares it on the new element; an attribute's value, an element's
// content, is then set by the copy as usual. An uninitialized element
// variable or part first gets its root element from its declaration, as
// any <to> query does.
//
// Refused at deploy, naming file, line and the construct: an absolute
// path, //, . and .., other axes, wildcards, unions, function calls, any
// predicate that is not a position, and <to property> (the property's
// alias path is not the author's to create).

// createInsertPath finds or creates the path's node below base (the variable's or
// part's node) for a copy at pos whose <to> selected nothing.
func createInsertPath(p *plan.InsertPath, in *Instance, base *etree.Element, at xmldoc.Pos) (target, error) {
	cur := base
	i := 0
	var after *etree.Element // the last existing sibling of the first missing step
	for ; i < len(p.Steps); i++ {
		st := &p.Steps[i]
		if st.Attr || st.Text {
			if found := (&expr.SimplePath{Part: -1, Steps: []expr.PathStep{st.PathStep}}).Eval(in.root, cur); len(found) == 1 {
				return target{Node: found[0]}, nil
			}
			break
		}
		want, ok := st.Position(in.root)
		if !ok {
			return target{}, in.faultf(at, "selectionFailure", "insertMissingToData: step %s: the position is not a whole number from 1", st.Describe())
		}
		all := (&expr.SimplePath{Part: -1, Steps: []expr.PathStep{{Space: st.Space, Local: st.Local}}}).EvalAll(in.root, cur)
		switch {
		case want == 0 && len(all) > 1:
			return target{}, in.faultf(at, "selectionFailure", "insertMissingToData: step %s matches %d elements: which one is meant is ambiguous", st.Describe(), len(all))
		case want == 0 && len(all) == 1:
			cur = all[0].Tok.(*etree.Element)
			continue
		case want > 0 && want <= len(all):
			cur = all[want-1].Tok.(*etree.Element)
			continue
		case want > len(all)+1:
			return target{}, in.faultf(at, "selectionFailure", "insertMissingToData: step %s[%d]: %d such elements exist, only position %d can be created", st.Describe(), want, len(all), len(all)+1)
		}
		if len(all) > 0 {
			after = all[len(all)-1].Tok.(*etree.Element)
		}
		break
	}
	if i == len(p.Steps) {
		return target{Node: expr.Node{Tok: cur, Attr: -1}}, nil
	}
	// Steps after the first missing one select in a new, empty element.
	for _, st := range p.Steps[i+1:] {
		if want, ok := st.Position(in.root); !ok || want > 1 {
			return target{}, in.faultf(at, "selectionFailure", "insertMissingToData: step %s: only position 1 can be created below a new element", st.Describe())
		}
	}
	for j := i; j < len(p.Steps); j++ {
		st := &p.Steps[j]
		switch {
		case st.Attr:
			return target{Node: expr.Node{Tok: cur, Attr: createAttr(cur, st)}}, nil
		case st.Text:
			return target{Node: expr.Node{Tok: cur.CreateText(""), Attr: -1}}, nil
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
	return target{Node: expr.Node{Tok: cur, Attr: -1}}, nil
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
